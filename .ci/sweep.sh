#!/usr/bin/env bash
# What CI must run for package sweep and internal/launch beyond the whole
# suite (issues 12 and 15): the packages with processes and timing, twenty
# times under the race detector, with the real Slurm cluster when it is up
# (the kill loops of 50 controller stops then run on Slurm too), and the
# Windows build check. Call it from .ci/run after the Slurm cluster is
# started (.ci/slurm-up.sh exports nothing itself: set CROSSCLUSTER_SLURM=1
# when it succeeded, as .ci/run does).
#
#   bash .ci/sweep.sh            # about 30 min on 2 cores with Slurm (by hand: .ci/run covers
#                                 # the -count=20 race runs and 5 s of each fuzz target)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

if [ "${CROSSCLUSTER_SLURM:-}" != 1 ] && timeout 5 sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then
	export CROSSCLUSTER_SLURM=1
fi
echo "CROSSCLUSTER_SLURM=${CROSSCLUSTER_SLURM:-unset}"

step "internal/launch and sweep: -race -count=20 (kill loops, cancel during start, fencing)"
go test -race -count=20 -timeout 90m ./internal/launch/ ./sweep/

step "examples/losssweep: -race -count=3"
go test -race -count=3 -timeout 20m ./examples/losssweep/

step "fuzz the parsers for 30 s each"
go test -run '^$' -fuzz '^FuzzParseRecord$' -fuzztime 30s ./internal/launch/
for f in FuzzLoadSpec FuzzDecodeConfig FuzzUnmarshalResult FuzzParseJobComp FuzzReadMetricLog; do
	go test -run '^$' -fuzz "^$f\$" -fuzztime 30s ./sweep/
done

step "sweep and internal/launch build on Windows (features that need Unix return an error)"
GOOS=windows go vet ./sweep/ ./internal/launch/ ./examples/losssweep/
GOARCH=arm64 go vet ./sweep/ ./internal/launch/ ./examples/losssweep/
