set terminal pngcairo size 2098,600 font ',10'
set output 'samples/results/h200-2026-11-22-executor/results.png'
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set key outside right top
set xrange [0:77]
set xtics ('vecadd' 3.5, 'saxpy' 10.5, 'MatrixMul' 17.5, 'BlackScholes' 24.5, 'FDTD3d' 31.5, 'MedianFilter' 38.5, 'SobelFilter' 45.5, 'MersenneTwister' 52.5, 'NBody' 59.5, 'Reduction' 66.5, 'SpMV' 73.5) rotate by -30 scale 0
set ylabel 'time / native time (log)'
set title 'VAST samples: time normalised to the native run (1 = native; lower is faster)'
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 front
plot 'samples/results/h200-2026-11-22-executor/results.png.dat' index 0 using 1:2 with boxes lc rgb '#1f77b4' title 'vast-direct', 'samples/results/h200-2026-11-22-executor/results.png.dat' index 1 using 1:2 with boxes lc rgb '#2ca02c' title 'vast-paged', 'samples/results/h200-2026-11-22-executor/results.png.dat' index 2 using 1:2 with boxes lc rgb '#ff7f0e' title 'vast-2x', 'samples/results/h200-2026-11-22-executor/results.png.dat' index 3 using 1:2 with boxes lc rgb '#d62728' title 'vast-4x', 'samples/results/h200-2026-11-22-executor/results.png.dat' index 4 using 1:2 with boxes lc rgb '#9467bd' title 'expert', 'samples/results/h200-2026-11-22-executor/results.png.dat' index 5 using 1:2 with boxes lc rgb '#7f7f7f' title 'cpu'
