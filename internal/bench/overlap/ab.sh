#!/bin/sh
# Go alone, builds of several commits side by side: the whole overlap.Fit
# pipeline as internal/bench/overlap/run.sh times it (gopipe -run, each run the only
# fit of a fresh process), on every data shape.
#
#   sh internal/bench/overlap/ab.sh [-r ROUNDS] [-d DIR] COMMIT...
#
# Builds internal/bench/overlap/gopipe at every COMMIT (exported with git archive
# into a temporary directory, so the repository is only read), then runs
# the builds ROUNDS times (default 9) per shape, their order reversed every
# other round, under flock /tmp/bench.lock, on the .npy data in DIR
# (default /tmp/ovbench, written by run.sh), and prints per shape and
# commit the medians of the pipeline's wall time, CPU time and kernel CPU
# time (page faults, mostly) in milliseconds. Environment: SHAPES, N as in
# run.sh.
set -eu
rounds=9 dir=/tmp/ovbench
while getopts r:d: o; do
	case $o in
	r) rounds=$OPTARG ;;
	d) dir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r rounds] [-d dir] commit..." >&2; exit 2; }
shapes=${SHAPES:-synth continuous tied imbalanced wide}
n=${N:-1000000}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name() { printf '%s' "$1" | tr '/' '_'; }
for c in "$@"; do
	d="$tmp/src-$(name "$c")"
	mkdir "$d"
	git -C "$root" archive "$c" | tar -x -C "$d"
	(cd "$d" && go build -o "$tmp/$(name "$c").bin" ./internal/bench/overlap/gopipe)
done
for s in $shapes; do
	[ -f "$dir/$s/X_$n.npy" ] || "$tmp/$(name "$1").bin" -gen "$dir" -shape "$s" -n "$n" >&2
done
for r in $(seq "$rounds"); do
	order=$*
	[ $((r % 2)) = 0 ] && order=$(echo "$*" | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
	for s in $shapes; do
		for c in $order; do
			out=$(flock /tmp/bench.lock "$tmp/$(name "$c").bin" -run "$dir" -shape "$s" -n "$n")
			get() { printf '%s' "$out" | sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }
			printf '%s %s %s %s %s\n' "$s" "$c" "$(get pipeline_sec)" "$(get pipeline_cpu_sec)" "$(get pipeline_sys_sec)"
		done
	done
	echo "round $r/$rounds, load $(cut -d' ' -f1 /proc/loadavg)" >&2
done | awk '
function median(s,    a, m, i, j, t) {
	m = split(s, a, " ")
	for (i = 2; i <= m; i++) { t = a[i] + 0; for (j = i - 1; j > 0 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
{ k = $1 " " $2; if (!(k in w)) order[++nk] = k; w[k] = w[k] " " $3; c[k] = c[k] " " $4; s[k] = s[k] " " $5 }
END {
	printf "| shape | commit | wall ms | CPU ms | kernel CPU ms |\n|---|---|---|---|---|\n"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, " ")
		printf "| %s | %s | %.1f | %.1f | %.1f |\n", p[1], p[2], 1000 * median(w[k]), 1000 * median(c[k]), 1000 * median(s[k])
	}
}'
