#!/bin/sh
# Side-by-side run of the overlap pipeline: Go (overlap.Fit via gopipe)
# against the scikit-learn + SciPy seed pipeline (peer.py), on the same .npy
# data, for every data shape of the benchmark (internal/synth.OverlapShapes).
#
# Usage, from the module root:  sh internal/bench/overlap/run.sh [DIR] [ROUNDS]
# Environment: SHAPES (default "synth continuous tied imbalanced wide
# fresco"; fresco is the public Stampede months of $CROSSCLUSTER_TESTDATA,
# replicated to N rows), N (jobs, default 1000000), EQUAL=1 adds the
# equal-work peer (peer.py --equal-work, which also computes everything
# else Fit returns), STEADY=K times steady state instead: in each run K
# consecutive calls in one process (Go with one overlap.Fitter, gopipe
# -calls K; the peer peer.py --calls=K), and the median call is the run's
# pipeline time.
#
# The seed peer runs in two thread settings each round: NumPy/OpenBLAS's
# default (a thread per core) and one thread (OPENBLAS_NUM_THREADS=1,
# OMP_NUM_THREADS=1); the table compares Go with whichever was faster by
# the median wall time, and names it.
#
# Each round runs, per shape, Go and the peer once each under
# /usr/bin/time -v (the order alternating from round to round), so that load
# from other processes hits both; every run is a fresh process timed from
# the data in memory to the results. It prints one TSV row per run (kept in
# DIR/runs.tsv) and at the end one Markdown table: per shape the medians
# over the rounds of pipeline wall and CPU seconds and peak RSS, the ratios
# of the medians, and the range of the per-round wall ratios.
set -eu
dir=${1:-/tmp/ovbench}
rounds=${2:-5}
shapes=${SHAPES:-synth continuous tied imbalanced wide fresco}
steady=${STEADY:-0}
goarg= pyarg=
[ "$steady" -gt 0 ] && goarg="-calls $steady" && pyarg="--calls=$steady"
n=${N:-1000000}
tools="go python python-1t"
[ "${EQUAL:-0}" = 1 ] && tools="go python python-1t python-eq"
go build -o "$dir/gopipe" ./internal/bench/overlap/gopipe
for s in $shapes; do
	[ -f "$dir/$s/X_$n.npy" ] || "$dir/gopipe" -gen "$dir" -shape "$s" -n "$n"
done
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf 'tool\tshape\tn\tround\tpipeline_wall_sec\tpipeline_cpu_sec\tprocess_wall_sec\tprocess_cpu_sec\tpeak_rss_kb\tpipeline_sys_sec\n' | tee "$dir/runs.tsv"
for r in $(seq 1 "$rounds"); do
	for s in $shapes; do
		order=$tools
		[ $((r % 2)) = 0 ] && order=$(echo "$tools" | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
		for tool in $order; do
			case $tool in
			go) set -- "$dir/gopipe" -run "$dir" -shape "$s" -n "$n" $goarg ;;
			python) set -- /usr/bin/python3 internal/bench/overlap/peer.py "$dir/$s" "$n" $pyarg ;;
			python-1t) set -- env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 internal/bench/overlap/peer.py "$dir/$s" "$n" $pyarg ;;
			python-eq) set -- /usr/bin/python3 internal/bench/overlap/peer.py "$dir/$s" "$n" 1 --equal-work $pyarg ;;
			esac
			/usr/bin/time -v "$@" >"$dir/out.json" 2>"$dir/time.txt"
			pipe=$(sed -n 's/.*"pipeline_sec": *\([0-9.e+-]*\).*/\1/p' "$dir/out.json")
			pcpu=$(sed -n 's/.*"pipeline_cpu_sec": *\([0-9.e+-]*\).*/\1/p' "$dir/out.json")
			psys=$(sed -n 's/.*"pipeline_sys_sec": *\([0-9.e+-]*\).*/\1/p' "$dir/out.json")
			wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$dir/time.txt")
			cpu=$(awk -F': ' '/User time|System time/{s+=$2} END{print s}' "$dir/time.txt")
			rss=$(awk -F': ' '/Maximum resident/{print $2}' "$dir/time.txt")
			printf '%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$s" "$n" "$r" "$pipe" "$pcpu" "$wall" "$cpu" "$rss" "${psys:--}" | tee -a "$dir/runs.tsv"
			cp "$dir/out.json" "$dir/result_${tool}_${s}_$n.json"
		done
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)
echo
mode="fresh process, one fit each"
[ "$steady" -gt 0 ] && mode="steady state, median of $steady consecutive calls in one process"
echo "n = $n, $mode, $rounds interleaved rounds, $start to $(date -u +%Y-%m-%dT%H:%M:%SZ), load average $load0 at the start and $load1 at the end"
echo
awk -F'\t' -v tools="$tools" '
NR == 1 { next }
{
	k = $2 SUBSEP $1
	wall[k] = wall[k] " " $5; cpu[k] = cpu[k] " " $6; rss[k] = rss[k] " " $9; sys[k] = sys[k] " " $10
	rw[$2 SUBSEP $4 SUBSEP $1] = $5
	if (!($2 in seen)) { seen[$2] = 1; order[++ns] = $2 }
	if ($4 > nr) nr = $4
}
function median(s,    a, m, i, j, t) {
	m = split(s, a, " ")
	for (i = 2; i <= m; i++) { t = a[i] + 0; for (j = i - 1; j > 0 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	eq = (tools ~ /python-eq/)
	printf "| shape | Go wall | seed peer wall (threads) | wall ratio | per-round wall ratios | Go CPU (kernel) | seed peer CPU | CPU ratio | Go peak RSS | peer peak RSS |"
	if (eq) printf " equal-work peer wall | ratio |"
	printf "\n|---|---|---|---|---|---|---|---|---|---|"
	if (eq) printf "---|---|"
	printf "\n"
	for (i = 1; i <= ns; i++) {
		s = order[i]
		# The peer in its faster thread setting for this shape.
		pt = "python"; th = "default"
		if (median(wall[s SUBSEP "python-1t"]) < median(wall[s SUBSEP "python"])) { pt = "python-1t"; th = "1" }
		gw = median(wall[s SUBSEP "go"]); pw = median(wall[s SUBSEP pt])
		gc = median(cpu[s SUBSEP "go"]); pc = median(cpu[s SUBSEP pt]); gs = median(sys[s SUBSEP "go"])
		gr = median(rss[s SUBSEP "go"]); pr = median(rss[s SUBSEP pt])
		lo = 1e9; hi = 0
		for (r = 1; r <= nr; r++) {
			g = rw[s SUBSEP r SUBSEP "go"]; p = rw[s SUBSEP r SUBSEP pt]
			if (g > 0) { q = p / g; if (q < lo) lo = q; if (q > hi) hi = q }
		}
		printf "| %s | %.3f s | %.3f s (%s) | %.1f× | %.1f–%.1f× | %.3f s (%.3f) | %.3f s | %.1f× | %.0f MB | %.0f MB |", s, gw, pw, th, pw / gw, lo, hi, gc, gs, pc, pc / gc, gr / 1024, pr / 1024
		if (eq) { ew = median(wall[s SUBSEP "python-eq"]); printf " %.3f s | %.1f× |", ew, ew / gw }
		printf "\n"
	}
}' "$dir/runs.tsv"
