#!/bin/bash
# Measures what each assembly kernel gains end to end, to decide whether it
# pays its rent (a kernel stays if some benchmark users see runs at least 5%
# faster with it): the benchmarks of tiers.sh, once as committed (base) and
# once with one kernel switched off (ASMOFF=name), its Go path running
# instead. wide is the AVX-512 gemm blocks; the AVX-512 tier as a whole is
# tiers.sh's avx512 against avx2.
#
#   internal/bench/kernels/rent.sh [-r ROUNDS]
#
# Copies the committed tree (git archive HEAD) to a temporary directory,
# applies rent.patch there (the ASMOFF switches, and a CPU-time metric for
# overlap's BenchmarkPipeline), builds the test binaries and runs base and
# every switch interleaved ROUNDS times (default 5) on one core, each run
# under flock /tmp/bench.lock; prints benchstat's comparisons against base
# in CPU time (samples/cpu-s, cpu-ns/op), the figure to read on a loaded
# machine, and the load after every round. If the patch no longer applies,
# update the switches in it to the kernels' call sites.
set -euo pipefail
rounds=5
while getopts r: o; do
	case $o in
	r) rounds=$OPTARG ;;
	*) exit 2 ;;
	esac
done
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git -C "$root" archive HEAD | tar -x -C "$tmp/src"
(cd "$tmp/src" && git apply "$root/internal/bench/kernels/rent.patch")
declare -A dir=([lstm]=lstm [logit]=internal/logit [overlap]=overlap)
declare -A regex=(
	[lstm]='TrainStep/published|Predict/.*/n=256'
	[logit]='Pass'
	[overlap]='Pipeline/(synth|tied)/n=1e6'
)
declare -A benchtime=([lstm]=20x [logit]=20x [overlap]=3x)
declare -A switches=([lstm]="adam scan bwd wide" [logit]="rows std prefetch axpy dot mul" [overlap]="rows std prefetch axpy dot mul")
for p in lstm logit overlap; do
	(cd "$tmp/src" && go test -c -o "$tmp/$p.test" "./${dir[$p]}")
done
for r in $(seq "$rounds"); do
	for p in lstm logit overlap; do
		for v in base ${switches[$p]}; do
			off=$v
			[ "$v" = base ] && off=
			(cd "$tmp/src/${dir[$p]}" && ASMOFF=$off flock /tmp/bench.lock "$tmp/$p.test" -test.run '^$' \
				-test.bench "${regex[$p]}" -test.benchtime "${benchtime[$p]}" -test.cpu 1) |
				grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$tmp/$p-$v.txt"
		done
	done
	echo "round $r/$rounds, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
cd "$root"
for p in lstm logit overlap; do
	args=("base=$tmp/$p-base.txt")
	for v in ${switches[$p]}; do
		args+=("$v=$tmp/$p-$v.txt")
	done
	echo "== $p: committed (base) against each kernel off"
	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da \
		-filter '.unit:(samples/cpu-s OR cpu-ns/op)' "${args[@]}"
done
