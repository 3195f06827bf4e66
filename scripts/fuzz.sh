#!/usr/bin/env bash
# Fuzzing campaigns, run by hand (CI runs only the seed corpora, inside
# go test). Runs every fuzz target of the given packages (default: the whole
# module, found with go list and go test -list) for FUZZTIME each, one after
# the other, and stops at the first target that finds a failing input: the
# engine writes it under the package's testdata/fuzz/<target>/, where it stays
# as a seed once the bug is fixed.
#
#   bash scripts/fuzz.sh                         # every target, 60 s each
#   FUZZTIME=5m bash scripts/fuzz.sh ./eventlog/ ./internal/npy/
#   TARGETS='^FuzzRead$' bash scripts/fuzz.sh ./eventlog/
#
# A target that fails without leaving an input (the engine's worker hung or
# was killed on a loaded machine) is retried once. PARALLEL sets the workers
# per target (-parallel; default: go test's, one per CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-60s}
TARGETS=${TARGETS:-^Fuzz}
par=()
[ -n "${PARALLEL:-}" ] && par=(-parallel "$PARALLEL")
[ $# -gt 0 ] || set -- ./...

fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 30s "${par[@]}" "$1"; }

n=0
for pkg in $(go list "$@"); do
	for f in $(go test -list "$TARGETS" "$pkg" | grep '^Fuzz' || true); do
		n=$((n + 1))
		echo "== $pkg $f ($FUZZTIME, $(date -u +%H:%M:%S) UTC)"
		fuzz "$pkg" "$f" && continue
		dir=$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$f
		if [ -n "$(git status --porcelain -- "$dir" 2>/dev/null)" ]; then
			echo "fuzz: $pkg $f found a failing input:"
			git status --porcelain -- "$dir"
			exit 1
		fi
		echo "fuzz: $f failed without leaving an input; retrying once"
		fuzz "$pkg" "$f"
	done
done
echo "fuzz: $n targets, $FUZZTIME each, no failing input"
