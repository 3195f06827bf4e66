#!/usr/bin/python3
"""Side-by-side comparison of package lstm with its PyTorch peer (peer.py).

Every round runs, one after the other, `go test -bench` (BenchmarkTrainStep/
published, BenchmarkPredict; Go uses every core) and peer.py once per thread
setting, so that all of them see the same machine load. A setting is torch's
thread count (torch.set_num_threads) and OpenBLAS's (OPENBLAS_NUM_THREADS;
"default" leaves it unset, one thread per core): Debian's torch multiplies
through OpenBLAS, whose threads run beside torch's, so both knobs matter.
The script then prints, per measurement, the median throughput of each by the
wall clock and per CPU second of the process (each the median of seven
measurements in one process, see STEADY), and the Go/PyTorch ratios
against PyTorch's fastest setting by the median wall clock (the other
settings are printed too), with the load average before and after each round.

    cd <module root> && /usr/bin/python3 internal/bench/lstm/compare.py [--rounds 3] [--settings 1/default,2/default,1/1,2/1] [--fresh]

With --fresh every figure is instead the first call of a fresh process: each
Go benchmark runs alone in a new process of the test binary (-test.benchtime
1x) and each peer measurement alone in a new peer.py (--fresh), and the
table's figures are the medians over the rounds.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))  # internal/bench/lstm -> module root

# Go benchmark name -> peer measurement it is compared with.
PAIRS = [
    ("TrainStep/published/H=64/L=2/batch=256", ("train_step", 256), "training float64 (Native), batch 256"),
    ("TrainStep/published-float32/H=64/L=2/batch=256", ("train_step", 256), "training float32 (Native32), batch 256"),
    ("Predict/Probabilities/n=256", ("predict", 256), "inference float64 Model, 256 sequences"),
    ("Predict/Predictor/n=256", ("predict", 256), "inference float32 Predictor, 256 sequences"),
    ("Predict/Probabilities/n=1", ("predict", 1), "inference float64 Model, one sequence"),
]

LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+\d+ ns/op(.*)$")
UNITS = ("samples/s", "samples/cpu-s")
# Steady state: each side's figure is the median of STEADY measurements
# taken one after the other in one process (Go: -count STEADY, each run 20
# consecutive calls; the peer: --repeats STEADY after its warm-up).
STEADY = 7


def run_go():
    """Median over STEADY runs of each benchmark, all in one process, each
    of 20 consecutive calls."""
    out = subprocess.run(
        ["go", "test", "-run", "^$", "-bench", "TrainStep/published|Predict", "-benchtime", "20x",
         "-count", str(STEADY), "./lstm/"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    runs = parse_go(out)
    return {name: {unit: statistics.median(r[unit] for r in rs) for unit in UNITS} for name, rs in runs.items()}


def parse_go(out):
    runs = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        vals = dict((unit, float(v)) for v, unit in re.findall(r"([\d.e+]+) (samples/cpu-s|samples/s)", m.group(2)))
        runs.setdefault(m.group(1), []).append(vals)
    return runs


def run_go_fresh(binary):
    """Each benchmark of PAIRS once, alone, in a new process: its first call."""
    res = {}
    for gname, _, _ in PAIRS:
        pattern = "/".join("^" + re.escape(part) + "$" for part in ("Benchmark" + gname).split("/"))
        out = subprocess.run([binary, "-test.run", "^$", "-test.bench", pattern, "-test.benchtime", "1x",
                              "-test.count", "1"], cwd=os.path.join(ROOT, "lstm"),
                             check=True, capture_output=True, text=True).stdout
        res[gname] = parse_go(out)[gname][0]
    return res


FRESH_PEER = {("train_step", 256): "train_step", ("predict", 256): "predict", ("predict", 1): "predict1"}


def run_peer(setting, fresh=False):
    threads, blas = setting
    env = dict(os.environ)
    env.pop("OPENBLAS_NUM_THREADS", None)
    if blas != "default":
        env["OPENBLAS_NUM_THREADS"] = blas
    base = [sys.executable, os.path.join(HERE, "peer.py"), "--threads", str(threads)]
    if fresh:
        out = "".join(subprocess.run(base + ["--fresh", what], check=True, capture_output=True, text=True, env=env).stdout
                      for what in FRESH_PEER.values())
    else:
        out = subprocess.run(base + ["--repeats", str(STEADY)], check=True, capture_output=True, text=True, env=env).stdout
    res = {}
    for line in out.splitlines():
        r = json.loads(line)
        res[(r["bench"], r["n"])] = {"samples/s": r["samples_per_s"], "samples/cpu-s": r["samples_per_cpu_s"],
                                     "torch": r["torch"], "openblas": r.get("openblas_threads")}
    return res


def parse_settings(text):
    """"1/default,2/1" -> [(1, "default"), (2, "1")]: torch threads / OpenBLAS threads."""
    out = []
    for item in text.split(","):
        threads, _, blas = item.partition("/")
        out.append((int(threads), blas or "default"))
    return out


def label(setting, peer_rows):
    threads, blas = setting
    n = peer_rows[0][("train_step", 256)]["openblas"]
    blas_text = f"OpenBLAS {n}" if n is not None else "OpenBLAS ?"
    if blas == "default":
        blas_text += " (default)"
    return f"torch {threads}, {blas_text}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settings", default="1/default,2/default,1/1,2/1",
                    help="peer settings to try, comma-separated torch-threads/OpenBLAS-threads (default: unset)")
    ap.add_argument("--fresh", action="store_true", help="time the first call of fresh processes instead")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    settings = parse_settings(args.settings)
    with tempfile.TemporaryDirectory() as tmp:
        binary = None
        if args.fresh:
            binary = os.path.join(tmp, "lstm.test")
            subprocess.run(["go", "test", "-c", "-o", binary, "./lstm/"], cwd=ROOT, check=True)
        go, peer, loads = measure(args, settings, binary)
    report(args, settings, go, peer, loads)


def measure(args, settings, binary):
    """Runs the rounds: the Go side and every peer setting, one after the other."""
    go, peer, loads = [], {t: [] for t in settings}, []
    for i in range(args.rounds):
        before = os.getloadavg()[0]
        print(f"round {i + 1}/{args.rounds}, load {before:.1f}", file=sys.stderr, flush=True)
        go.append(run_go_fresh(binary) if args.fresh else run_go())
        for t in settings:
            peer[t].append(run_peer(t, args.fresh))
        loads.append((before, os.getloadavg()[0]))
    return go, peer, loads


def report(args, settings, go, peer, loads):
    """Prints the loads and the table of medians and ratios."""
    med = lambda rows, key, unit: statistics.median(r[key][unit] for r in rows)
    torch_version = peer[settings[0]][0][("train_step", 256)]["torch"]
    print(f"{os.cpu_count()} cores; 1-minute load average before/after each round: "
          + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in loads))
    print(f"PyTorch {torch_version}, float32; peer settings (torch threads, OpenBLAS threads): "
          + "; ".join(label(t, peer[t]) for t in settings) + f"; medians of {args.rounds} rounds; "
          + ("fresh process: each figure the first call of a new process." if args.fresh else
             f"steady state: each side's figure per round the median of {STEADY} measurements in one process."))
    print()
    print("| measurement | Go samples/s | PyTorch samples/s (fastest setting) | Go / PyTorch (wall) | Go samples/CPU-s | PyTorch samples/CPU-s | Go / PyTorch (CPU) | other PyTorch settings (samples/s, samples/CPU-s) |")
    print("|---|---|---|---|---|---|---|---|")
    for gname, pkey, text in PAIRS:
        gw, gc = med(go, gname, "samples/s"), med(go, gname, "samples/cpu-s")
        best = max(settings, key=lambda t: med(peer[t], pkey, "samples/s"))
        pw, pc = med(peer[best], pkey, "samples/s"), med(peer[best], pkey, "samples/cpu-s")
        others = "; ".join(f"{label(t, peer[t])}: {med(peer[t], pkey, 'samples/s'):.0f}, {med(peer[t], pkey, 'samples/cpu-s'):.0f}"
                           for t in settings if t != best)
        print(f"| {text} | {gw:.0f} | {pw:.0f} ({label(best, peer[best])}) | **{gw / pw:.2f}** | {gc:.0f} | {pc:.0f} | {gc / pc:.2f} | {others} |")


if __name__ == "__main__":
    main()
