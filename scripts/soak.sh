#!/usr/bin/env bash
# Runs the suite (or the packages given) under the race detector N times in a
# row (default 20) beside a parallel CPU load, and stops at the first failure,
# printing it: the search for flakes that CI's five runs of the process
# packages are too few to find (docs/testing.md).
#
#   bash scripts/soak.sh              # 20 runs of ./..., stress-ng --cpu 2 beside them
#   N=5 LOAD=none bash scripts/soak.sh
#   N=20 bash scripts/soak.sh ./internal/launch/ ./sweep/...
#
# LOAD: "stress" (default; stress-ng --cpu <cores> --cpu-load 50) or "none".
# -count=1 defeats the test cache, so every run executes every test.
# Each run's output goes to $LOG_DIR/run-<i>.log (default a fresh temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20}
LOAD=${LOAD:-stress}
LOG_DIR=${LOG_DIR:-$(mktemp -d -t soak.XXXXXX)}
mkdir -p "$LOG_DIR"

stress_pid=
if [ "$LOAD" = stress ]; then
	command -v stress-ng >/dev/null || { echo "soak: stress-ng not installed (apt-get install -y stress-ng), or LOAD=none" >&2; exit 2; }
	stress-ng --cpu "$(nproc)" --cpu-load 50 --quiet &
	stress_pid=$!
	trap 'kill $stress_pid 2>/dev/null || true' EXIT
fi

[ $# -gt 0 ] || set -- ./...
echo "soak: $N runs of 'go test -race -count=1 $*' at $(git rev-parse --short HEAD), load=$LOAD, $(nproc) cores, logs in $LOG_DIR"
for i in $(seq 1 "$N"); do
	t0=$(date +%s)
	if go test -race -count=1 -timeout 60m "$@" >"$LOG_DIR/run-$i.log" 2>&1; then
		echo "run $i/$N: pass in $(($(date +%s) - t0)) s"
	else
		echo "run $i/$N: FAIL in $(($(date +%s) - t0)) s; failures:"
		grep -E '^(--- FAIL|FAIL|panic:)' "$LOG_DIR/run-$i.log" | head -20
		exit 1
	fi
done
echo "soak: $N of $N passed"
