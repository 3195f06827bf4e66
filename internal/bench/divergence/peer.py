#!/usr/bin/env python3
"""NumPy peer for divergence.Compare: pairwise max divergence per key.

    /usr/bin/python3 internal/bench/divergence/peer.py [--n 10000000] [--repeat 3]

Writes 3 host archives x 2 keys (omega_b: n float64, 1-D; z_b: n float64 as
(n/2, 2), L2 over the last axis) into a temporary directory, stored
(np.savez) and deflated (np.savez_compressed), then times the comparison:
for each key, load the key from every host's archive once, then every pair's
max over axis 0 of the row norm of a - b. The data are the same formula as
BenchmarkCompare in divergence/bench_test.go: x_i = sin(i*1e-3 + h*1e-9)
for host h. Prints the best and median wall time and the median CPU time
(time.process_time) per mode.
"""
import argparse
import os
import statistics
import tempfile
import time

import numpy as np


def host_data(n, h):
    i = np.arange(n, dtype=np.float64)
    x = np.sin(i * 1e-3 + h * 1e-9)
    return {"omega_b": x, "z_b": x.reshape(n // 2, 2)}


def compare(paths, keys):
    rows = []
    for k in keys:
        arrs = []
        for p in paths:
            with np.load(p) as z:
                arrs.append(z[k])
        for i in range(len(arrs)):
            for j in range(i + 1, len(arrs)):
                d = arrs[i] - arrs[j]
                if d.ndim == 1:
                    m = np.max(np.abs(d))
                else:
                    m = np.max(np.linalg.norm(d.reshape(len(d), -1), axis=1))
                rows.append((i, j, k, float(m)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"numpy {np.__version__}, n={args.n:.0e} float64 per key, 3 hosts x 2 keys")
    with tempfile.TemporaryDirectory() as d:
        for mode, save in (("stored", np.savez), ("compressed", np.savez_compressed)):
            paths = []
            for h in range(3):
                p = os.path.join(d, f"{mode}_{h}.npz")
                save(p, **host_data(args.n, h))
                paths.append(p)
            times, cpu = [], []
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                rows = compare(paths, ["z_b", "omega_b"])
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            print(f"{mode}: wall best {min(times):.3f} s, median {statistics.median(times):.3f} s; "
                  f"cpu median {statistics.median(cpu):.3f} s over {args.repeat} runs; "
                  f"max z_b divergence {rows[0][3]:.3e}")
            for p in paths:
                os.remove(p)


if __name__ == "__main__":
    main()
