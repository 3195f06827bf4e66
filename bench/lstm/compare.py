#!/usr/bin/python3
"""Side-by-side comparison of package lstm with its PyTorch peer (peer.py).

Alternates `go test -bench` (BenchmarkTrainStep/published, BenchmarkPredict)
and peer.py for --rounds rounds so that both see the same machine load, then
prints the median throughput of each and the Go/PyTorch ratios, per wall
second and per CPU second of the process.

    cd <module root> && /usr/bin/python3 bench/lstm/compare.py [--rounds 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Go benchmark name -> peer measurement it is compared with.
PAIRS = [
    ("TrainStep/published/H=64/L=2/batch=256", ("train_step", 256), "training float64 (Native), batch 256"),
    ("TrainStep/published-float32/H=64/L=2/batch=256", ("train_step", 256), "training float32 (Native32), batch 256"),
    ("Predict/Probabilities/n=256", ("predict", 256), "inference float64 Model, 256 sequences"),
    ("Predict/Predictor/n=256", ("predict", 256), "inference float32 Predictor, 256 sequences"),
    ("Predict/Probabilities/n=1", ("predict", 1), "inference float64 Model, one sequence"),
]

LINE = re.compile(r"^Benchmark(\S+?)-\d+\s+\d+\s+\d+ ns/op(.*)$")


def run_go():
    out = subprocess.run(
        ["go", "test", "-run", "^$", "-bench", "TrainStep/published|Predict", "-benchtime", "20x", "-count", "1", "./lstm/"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        metrics = dict((unit, float(v)) for v, unit in re.findall(r"([\d.e+]+) (samples/cpu-s|samples/s)", m.group(2)))
        res[m.group(1)] = metrics
    return res


def run_peer():
    out = subprocess.run([sys.executable, os.path.join(HERE, "peer.py"), "--repeats", "3"],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        r = json.loads(line)
        res[(r["bench"], r["n"])] = {"samples/s": r["samples_per_s"], "samples/cpu-s": r["samples_per_cpu_s"], "torch": r["torch"]}
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    go, peer = [], []
    for i in range(args.rounds):
        print(f"round {i + 1}/{args.rounds}", file=sys.stderr, flush=True)
        go.append(run_go())
        peer.append(run_peer())
    torch_version = peer[0][("train_step", 256)]["torch"]
    print(f"| measurement | unit | Go (median of {args.rounds}) | PyTorch {torch_version} float32, 1 thread | Go / PyTorch |")
    print("|---|---|---|---|---|")
    for gname, pkey, label in PAIRS:
        for unit in ("samples/cpu-s", "samples/s"):
            g = statistics.median(r[gname][unit] for r in go)
            p = statistics.median(r[pkey][unit] for r in peer)
            print(f"| {label} | {unit} | {g:.0f} | {p:.0f} | {g / p:.2f} |")


if __name__ == "__main__":
    main()
