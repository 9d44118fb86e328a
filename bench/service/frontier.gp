# SPDX-License-Identifier: Apache-2.0
# gnuplot -e "dat='FILE'; out='frontier.png'; ttl='...'" frontier.gp
# FILE: "mode x xlo xhi y ylo yhi" per line: batch makespan vs all at once
# and excess misses vs all at once's, median and range over repetitions.
set terminal pngcairo size 1100,750 font "DejaVu Sans,11"
set output out
set title ttl noenhanced
set xlabel "batch makespan / all at once's (median; bars: range over repetitions)"
set ylabel "excess missed transactions / all at once's"
set grid
set key off
set yrange [0:*]
colour(m) = m eq "all" ? 0xd62728 : m eq "serial" ? 0xff7f0e : m eq "ioprio" ? 0x2ca02c : m[1:9] eq "iobatch.f" ? 0x7f7f7f : m[1:9] eq "iobatch.b" ? 0x1f77b4 : 0x9467bd
plot dat using 2:5:3:4:6:7:(colour(strcol(1))) with xyerrorbars pt 7 ps 1.2 lc rgb variable, \
     dat using 2:5:1 with labels offset 1.2,0.8 left font ",10" noenhanced
