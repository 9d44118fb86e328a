# SPDX-License-Identifier: Apache-2.0
# gnuplot -e "mk='makespan.tsv'; sd='slowdown.tsv'; out='sched.png'; modes='all serial ...'; ttl='...'" plot.gp
set terminal pngcairo size 1400,1000 font "DejaVu Sans,11"
set output out
n = words(modes)
label(m) = m eq "all" ? "all at once (runc)" : m eq "serial" ? "serial (runc)" : m eq "iobatch" ? "iobatch (default)" : m eq "paper" ? "iobatch (paper)" : m eq "calibrated" ? "iobatch (calibrated matrix)" : m
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set rmargin 8
set multiplot layout 2,1 title ttl
set title "makespan per mix (lower is better)"
set ylabel "seconds"
set yrange [0:*]
set xtics noenhanced
plot for [i=1:n] mk using (column(i+1)):xtic(1) title label(word(modes,i))
set title "per-job slowdown: turnaround / solo turnaround (1 = as fast as alone; lower is better)"
set ylabel "slowdown (log scale)"
set logscale y
set yrange [0.8:*]
set ytics (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200)
set xtics rotate by -35 font ",9"
plot for [i=1:n] sd using (column(i+1)):xtic(1) title label(word(modes,i)), 1 with lines dt 2 lc "black" notitle
unset multiplot
