#!/bin/sh
# Side-by-side run of the overlap pipeline: Go (overlap.Fit via gopipe)
# against the scikit-learn + SciPy peer (peer.py), on the same .npy data.
# Usage, from the module root:  sh bench/overlap/run.sh [DIR] [ROUNDS]
# Each round runs, per size, Go, the Python seed pipeline (peer.py) and the
# Python equal-work pipeline (peer.py --equal-work, which also computes
# everything else overlap.Fit returns) once each under /usr/bin/time -v;
# rounds interleave the tools so that load from other processes hits all.
set -eu
dir=${1:-/tmp/ovbench}
rounds=${2:-3}
go build -o "$dir/gopipe" ./bench/overlap/gopipe
for n in 200000 1000000; do
	[ -f "$dir/X_$n.npy" ] || "$dir/gopipe" -gen "$dir" -n $n
done
printf 'tool\tn\tround\tpipeline_wall_sec\tpipeline_cpu_sec\tprocess_wall_sec\tprocess_cpu_sec\tpeak_rss_kb\n' | tee "$dir/runs.tsv"
for r in $(seq 1 "$rounds"); do
	for n in 200000 1000000; do
		for tool in go python python-eq; do
			case $tool in
			go) set -- "$dir/gopipe" -run "$dir" -n $n ;;
			python) set -- /usr/bin/python3 bench/overlap/peer.py "$dir" $n ;;
			python-eq) set -- /usr/bin/python3 bench/overlap/peer.py "$dir" $n 1 --equal-work ;;
			esac
			/usr/bin/time -v "$@" >"$dir/out.json" 2>"$dir/time.txt"
			pipe=$(sed -n 's/.*"pipeline_sec": *\([0-9.e+-]*\).*/\1/p' "$dir/out.json")
			pcpu=$(sed -n 's/.*"pipeline_cpu_sec": *\([0-9.e+-]*\).*/\1/p' "$dir/out.json")
			wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$dir/time.txt")
			cpu=$(awk -F': ' '/User time|System time/{s+=$2} END{print s}' "$dir/time.txt")
			rss=$(awk -F': ' '/Maximum resident/{print $2}' "$dir/time.txt")
			printf '%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n' $tool $n "$r" "$pipe" "$pcpu" "$wall" "$cpu" "$rss" | tee -a "$dir/runs.tsv"
			cp "$dir/out.json" "$dir/result_${tool}_$n.json"
		done
	done
done
# Summary: per size, the median over rounds of each tool's pipeline wall
# and CPU seconds and peak RSS, and the Python/Go ratios of the medians,
# against the seed pipeline (py) and against the equal-work pipeline (eq).
echo
printf 'n\tgo_wall\tpy_wall\teq_wall\twall_ratio_py\twall_ratio_eq\tgo_cpu\tpy_cpu\teq_cpu\tcpu_ratio_py\tcpu_ratio_eq\tgo_rss_mb\tpy_rss_mb\teq_rss_mb\n'
for n in 200000 1000000; do
	med() { # tool column
		awk -F'\t' -v t="$1" -v n=$n -v c="$2" '$1 == t && $2 == n {print $c}' "$dir/runs.tsv" | sort -g |
			awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
	}
	gw=$(med go 4) pw=$(med python 4) ew=$(med python-eq 4)
	gc=$(med go 5) pc=$(med python 5) ec=$(med python-eq 5)
	gr=$(med go 8) pr=$(med python 8) er=$(med python-eq 8)
	awk -v n=$n -v gw="$gw" -v pw="$pw" -v ew="$ew" -v gc="$gc" -v pc="$pc" -v ec="$ec" -v gr="$gr" -v pr="$pr" -v er="$er" 'BEGIN {
		printf "%d\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\n", n, gw, pw, ew, pw / gw, ew / gw, gc, pc, ec, pc / gc, ec / gc, gr / 1024, pr / 1024, er / 1024
	}'
done
