#!/bin/sh
# Wall time of the 16-point search at the published sizes
# (examples/heldjobs/specs/published16.yaml) on the local engine (two
# in-process workers) and on the Slurm cluster (an array throttled to two
# tasks on its two-CPU node), interleaved: local, slurm, local, slurm, ...
# Each round starts from an empty output directory, so every run is
# trained; the time includes building the dataset (the parse step).
#
#   sh internal/bench/heldjobs/measure.sh ROUNDS OUTDIR
#
# Prints one line per round: engine, wall seconds, the controller's CPU
# seconds, the workers' CPU seconds (sum of cpu_seconds over runs, Slurm
# only: the local workers are the controller's goroutines), the load average
# before and after, the best run and its test F1 with its interval.
set -eu
rounds=${1:-2}
out=${2:-/tmp/heldjobs-measure}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$out/heldjobs
mkdir -p "$out"
(cd "$here" && CGO_ENABLED=0 go build -o "$bin" ./examples/heldjobs)
spec=$here/examples/heldjobs/specs/published16.yaml
i=1
while [ "$i" -le "$rounds" ]; do
  for engine in local slurm; do
    dir=$out/$engine-$i
    rm -rf "$dir"
    before=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f '%e %U %S' -o "$dir.time" "$bin" -spec "$spec" -out "$dir" -backend "$engine" -workers 2 > "$dir.log" 2>&1
    after=$(cut -d' ' -f1 /proc/loadavg)
    read -r wall user sys < "$dir.time"
    /usr/bin/python3 - "$dir" "$engine" "$wall" "$user" "$sys" "$before" "$after" <<'PY'
import json, sys, pandas as pd
d, engine, wall, user, sys_, before, after = sys.argv[1:]
runs = pd.read_csv(d + "/tracking/runs.csv")
b = json.load(open(d + "/bestmodel.json"))
workers = runs["cpu_seconds"].sum() if runs["cpu_seconds"].notna().any() else float("nan")
print(f"{engine}\twall {float(wall):.1f} s\tcontroller CPU {float(user)+float(sys_):.1f} s\tworkers CPU {workers:.1f} s\t"
      f"load {before}->{after}\tbest {b['slug']}\tvalid F1 {b['value']:.4f}\t"
      f"test F1 {b['test']['f1']:.4f} [{b['test']['f1_lo']:.4f}, {b['test']['f1_hi']:.4f}]\tepochs {int(runs['epochs'].sum())}")
PY
  done
  i=$((i + 1))
done
