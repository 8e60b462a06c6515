# SPDX-License-Identifier: GPL-2.0
# make bench's plot: ns per key against the number of keys (each filter
# sized for them at 1%), 8-byte keys, one line per filter kind.
#   gnuplot -e "dat='bench.dat'; png='bench.png'" bench.gp
set terminal pngcairo size 1600,500 font ",10"
set output png
set logscale xy
set grid
set xlabel "keys (each filter sized for them at 1%)"
set ylabel "ns per key"
stats dat using 3 nooutput
nkinds = STATS_blocks
set multiplot layout 1,3 title "kbloom and its peers, natively: make bench, 8-byte keys, medians of 3 interleaved rounds"
set key off
set title "query, present keys"
plot for [i = 0:nkinds - 1] dat index i using 3:6 with linespoints title columnhead(1)
set title "query, absent keys"
plot for [i = 0:nkinds - 1] dat index i using 3:7 with linespoints title columnhead(1)
set title "add"
set key outside right top font ",9"
plot for [i = 0:nkinds - 1] dat index i using 3:5 with linespoints title columnhead(1)
unset multiplot
