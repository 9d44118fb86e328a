# SPDX-License-Identifier: Apache-2.0
# gnuplot -e "xmax=60; dir='DIR'; arrows='DIR/arrows.gp'; out='tps.png'; modes='solo all serial iobatch'; ttl='...'" plot.gp
# DIR/MODE.dat: "second tps"; arrows: gnuplot `set arrow` lines for the batch spans
set terminal pngcairo size 1400,700 font "DejaVu Sans,11"
set output out
label(m) = m eq "solo" ? "solo (service alone)" : m eq "all" ? "all at once (runc)" : m eq "serial" ? "serial (runc)" : m eq "iobatch" ? "iobatch" : m
colour(m) = m eq "solo" ? "black" : m eq "all" ? "#d62728" : m eq "serial" ? "#ff7f0e" : "#1f77b4"
n = words(modes)
set title ttl noenhanced
set xlabel "seconds since pgbench started"
set ylabel "transactions per second"
set yrange [0:*]
set xrange [0:xmax]
set grid
set key outside right top noenhanced
# the batch's span per mode, as a bar near the bottom (written by report.sh)
load arrows
set label 1 "bars: batch arrival -> last batch exit" at graph 0.6, graph 0.97 font ",9"
plot for [i=1:n] dir."/".word(modes,i).".dat" using 1:2 with linespoints pt 7 ps 0.5 lw 2 lc rgb colour(word(modes,i)) title label(word(modes,i))
