#!/bin/bash
# Measures what each kernel tier gains end to end: AVX-512 over AVX2
# (GODEBUG=cpu.avx512f=off) and AVX2 over pure Go (-tags purego), on the
# benchmarks users see (lstm training and inference, the logistic pass of
# overlap.Fit, overlap.Fit itself).
#
#   internal/bench/kernels/tiers.sh [-r ROUNDS] [-p PACKAGES] [-3]
#
# Builds each package's test binary with and without the purego tag, then
# runs the tiers interleaved (avx512, avx2, purego, avx512, ...) ROUNDS
# times (default 5), on one core (-test.cpu 1), each run under flock
# /tmp/bench.lock, and prints benchstat's comparisons with the load after
# every round. -p is the list of packages (default "lstm logit overlap").
# -3 adds a fourth tier, pure Go built for GOAMD64=v3 (purego-v3): there
# math.FMA is one instruction, as on arm64, so it stands in for the path
# arm64 users get (lstm's blocked Go kernels run only where FMA is an
# instruction, see lstm/kernel_go_fma.go).
set -euo pipefail
rounds=5 pkgs="lstm logit overlap" v3=
while getopts r:p:3 o; do
	case $o in
	r) rounds=$OPTARG ;;
	p) pkgs=$OPTARG ;;
	3) v3=1 ;;
	*) exit 2 ;;
	esac
done
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A dir=([lstm]=lstm [logit]=internal/logit [overlap]=overlap)
declare -A regex=(
	[lstm]='TrainStep/published|Predict/.*/n=256'
	[logit]='Pass'
	[overlap]='Pipeline/(synth|tied)/n=1e6'
)
declare -A benchtime=([lstm]=30x [logit]=20x [overlap]=5x)
for p in $pkgs; do
	(cd "$root" && go test -c -o "$tmp/$p.asm.test" "./${dir[$p]}" &&
		go test -tags purego -c -o "$tmp/$p.purego.test" "./${dir[$p]}")
	if [ -n "$v3" ]; then
		(cd "$root" && GOAMD64=v3 go test -tags purego -c -o "$tmp/$p.purego-v3.test" "./${dir[$p]}")
	fi
done
run() { # package tier binary env...
	local p=$1 tier=$2 bin=$3
	shift 3
	(cd "$root/${dir[$p]}" && env "$@" flock /tmp/bench.lock "$tmp/$p.$bin.test" -test.run '^$' \
		-test.bench "${regex[$p]}" -test.benchtime "${benchtime[$p]}" -test.cpu 1) |
		grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$tmp/$p-$tier.txt"
}
for r in $(seq "$rounds"); do
	for p in $pkgs; do
		run "$p" avx512 asm GODEBUG=
		run "$p" avx2 asm GODEBUG=cpu.avx512f=off
		run "$p" purego purego GODEBUG=
		if [ -n "$v3" ]; then
			run "$p" purego-v3 purego-v3 GODEBUG=
		fi
	done
	echo "round $r/$rounds, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
cd "$root"
for p in $pkgs; do
	echo "== $p: AVX2 (base) against AVX-512"
	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "avx2=$tmp/$p-avx2.txt" "avx512=$tmp/$p-avx512.txt"
	echo "== $p: pure Go (base) against AVX2"
	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "purego=$tmp/$p-purego.txt" "avx2=$tmp/$p-avx2.txt"
	if [ -n "$v3" ]; then
		echo "== $p: pure Go for GOAMD64=v3 (base) against AVX2"
		go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "purego-v3=$tmp/$p-purego-v3.txt" "avx2=$tmp/$p-avx2.txt"
	fi
done
