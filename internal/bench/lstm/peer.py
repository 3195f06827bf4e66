#!/usr/bin/python3
"""PyTorch peer of package lstm's benchmarks (BenchmarkTrainStep, BenchmarkPredict).

Trains and runs the held-job model at the published defaults -- j=10 jobs,
m=10 frames, e=46 event types (input width j*e = 460, 10 time steps),
H=64, 2 layers, batch 256 -- on CPU with torch.set_num_threads(--threads),
with inputs drawn like the Go benchmark's (each job's block of a frame holds
one event with probability 0.5). Prints one JSON line per measurement with
samples per wall second and per CPU second, and the thread counts in force:
torch's (torch.get_num_threads) and OpenBLAS's. Debian's torch multiplies
through OpenBLAS, whose own threads (one per core unless OPENBLAS_NUM_THREADS
says otherwise) run besides torch's, so even --threads 1 can keep two cores
busy; compare.py tries both knobs.

    /usr/bin/python3 internal/bench/lstm/peer.py [--dtype float32|float64] [--repeats 5] [--threads 1]
        [--fresh train_step|predict|predict1]

Each figure is the median over --repeats timed runs after a warm-up. With
--fresh the process times only the named measurement, once, with no warm-up:
the first call of a fresh process (model and data are built before it, as
the Go benchmark builds them before its loop).
"""
import argparse
import ctypes
import json
import statistics
import time

import numpy as np
import torch
import torch.nn as nn

J, M, E = 10, 10, 46
H, L, BATCH = 64, 2, 256
DENSITY = 0.5


class Net(nn.Module):
    def __init__(self, inputs, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(inputs, hidden, layers, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return torch.sigmoid(self.fc(out[:, -1, :])).squeeze(1)


def data(gen, n, dtype):
    x = np.zeros((n, M, J * E))
    for i in range(n):
        for t in range(M):
            for j in range(J):
                if gen.random() < DENSITY:
                    x[i, t, j * E + gen.integers(E)] = 1.0
    y = gen.integers(0, 2, size=n).astype(np.float64)
    return torch.from_numpy(x).to(dtype), torch.from_numpy(y).to(dtype)


def openblas_threads():
    """The number of threads of the OpenBLAS torch links, or None where it is not OpenBLAS."""
    try:
        return ctypes.CDLL("libblas.so.3").openblas_get_num_threads()
    except (OSError, AttributeError):
        return None


def timed(fn, iters, repeats, warm=True):
    """Median seconds per call over repeats, by wall clock and by process CPU time.

    The CPU-time figure matters on a shared machine, where wall time includes
    waiting for a core; the Go benchmarks report both the same way.
    """
    if warm:
        fn()
    wall, cpu = [], []
    for _ in range(repeats):
        start, cstart = time.perf_counter(), time.process_time()
        for _ in range(iters):
            fn()
        wall.append((time.perf_counter() - start) / iters)
        cpu.append((time.process_time() - cstart) / iters)
    return statistics.median(wall), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--fresh", choices=["train_step", "predict", "predict1"],
                    help="time only this measurement, its first call, without warm-up")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    gen = np.random.default_rng(1)
    net = Net(J * E, H, L).to(dtype)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.BCELoss()
    x, y = data(gen, BATCH, dtype)

    def train_step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()

    common = {"torch": torch.__version__, "dtype": args.dtype, "threads": torch.get_num_threads(),
              "openblas_threads": openblas_threads(),
              "j": J, "m": M, "e": E, "H": H, "layers": L}
    def report(bench, n, sec):
        wall, cpu = sec
        print(json.dumps({"bench": bench, "n": n, "samples_per_s": n / wall, "samples_per_cpu_s": n / cpu,
                          "sec_per_call": wall, **common}), flush=True)

    x1 = x[:1]
    if args.fresh:
        if args.fresh == "train_step":
            report("train_step", BATCH, timed(train_step, 1, 1, warm=False))
            return
        with torch.no_grad():
            if args.fresh == "predict":
                report("predict", BATCH, timed(lambda: net(x), 1, 1, warm=False))
            else:
                report("predict", 1, timed(lambda: net(x1), 1, 1, warm=False))
        return
    report("train_step", BATCH, timed(train_step, args.iters, args.repeats))
    with torch.no_grad():
        report("predict", BATCH, timed(lambda: net(x), args.iters, args.repeats))
        report("predict", 1, timed(lambda: net(x1), 50 * args.iters, args.repeats))


if __name__ == "__main__":
    main()
