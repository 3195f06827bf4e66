#!/bin/bash
# A/B comparison of package lstm's benchmarks between commits.
#
#   internal/bench/lstm/ab.sh [-r ROUNDS] [-c CPUS] [-b REGEX] [-t BENCHTIME] COMMIT...
#
# Builds the test binary of ./lstm at every COMMIT (exported with git archive
# into a temporary directory, so the repository is only read), then runs the binaries one after the other ROUNDS
# times (default 7), each run under flock /tmp/bench.lock so that it does
# not overlap other measurements on a shared machine, and prints benchstat's
# medians and A/B comparisons (the first commit is the base) of samples per
# CPU-second and per wall second. -c is the -test.cpu list (default 1: work
# per CPU-second, the figure least disturbed by other load), -b the
# benchmark regex (default the figures compare.py reports), -t the
# -test.benchtime (default 30x).
set -euo pipefail
rounds=7 cpus=1 regex='TrainStep/published|Predict/.*/n=256' benchtime=30x
while getopts r:c:b:t: o; do
	case $o in
	r) rounds=$OPTARG ;;
	c) cpus=$OPTARG ;;
	b) regex=$OPTARG ;;
	t) benchtime=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r rounds] [-c cpus] [-b regex] [-t benchtime] commit..." >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Each commit's files under a name without '/' (refs such as origin/main),
# and each binary run in its own tree's lstm directory, whose testdata it
# was built with.
name() { printf '%s' "$1" | tr '/' '_'; }
for c in "$@"; do
	d="$tmp/src-$(name "$c")"
	mkdir "$d"
	git -C "$root" archive "$c" | tar -x -C "$d"
	(cd "$d" && go test -c -o "$tmp/$(name "$c").test" ./lstm)
done
for r in $(seq "$rounds"); do
	for c in "$@"; do
		n=$(name "$c")
		(cd "$tmp/src-$n/lstm" && flock /tmp/bench.lock "$tmp/$n.test" -test.run '^$' -test.bench "$regex" \
			-test.benchtime "$benchtime" -test.cpu "$cpus") | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$tmp/$n.txt"
	done
	echo "round $r/$rounds, load $(cut -d' ' -f1 /proc/loadavg)" >&2
done
files=()
for c in "$@"; do files+=("$c=$tmp/$(name "$c").txt"); done
cd "$root" && go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "${files[@]}"
