# gnuplot speedup.gp: the merged device over two H100s against VAST on one (samples/multigpu-h100x2.txt)
set terminal pngcairo size 1100,420 font ",9"
set output "speedup.png"
set title "Two H100s merged / one H100 through VAST (large preset, one cold run each; 1 = no gain, goal 1.8 at 4x)"
set style data histograms
set style fill solid 0.7
set boxwidth 0.8
set logscale y 2
set yrange [0.008:16]
set ylabel "speed-up (time one / time merged)"
set xtics rotate by 60 right
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
set arrow from graph 0, first 1.8 to graph 1, first 1.8 nohead dt 3 lc rgb "red"
plot "speedup.dat" using 2:xtic(1) notitle lc rgb "#3060a0"
