#!/usr/bin/python3
"""Peer for the overlap pipeline benchmark: the seed's scikit-learn + SciPy
pipeline on the data bench/overlap/gopipe writes.

    go run ./bench/overlap/gopipe -gen /tmp/ovbench -n 1000000
    /usr/bin/time -v /usr/bin/python3 bench/overlap/peer.py /tmp/ovbench 1000000

Steps timed as one pipeline (as overlap.Fit does them): StandardScaler over
the pooled rows, LogisticRegression (lbfgs, C=1, class_weight None, the
seed's call), predict_proba[:, 1], roc_auc_score, coverage of both domains
in the band [0.2, 0.8], and scipy.stats.ks_2samp(source, target) per
feature (method auto). Prints one JSON line with the fastest of the
repetitions in wall time (pipeline_sec) and in CPU time of the process,
all threads (pipeline_cpu_sec); see README.md.
"""
import json
import sys
import time

import numpy as np
import scipy
import sklearn
from scipy.stats import ks_2samp
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

FEATURES = ["ncores", "nhosts", "timelimit_sec", "runtime_sec", "queue_time_sec", "runtime_fraction"]


def pipeline(X, y, lo=0.2, hi=0.8):
    Xs = StandardScaler().fit_transform(X)
    clf = LogisticRegression(solver="lbfgs", C=1.0).fit(Xs, y)
    p = clf.predict_proba(Xs)[:, 1]
    auc = roc_auc_score(y, p)
    inband = (p >= lo) & (p <= hi)
    src, tgt = y == 0, y == 1
    out = {
        "auc": float(auc),
        "coverage": float(inband[tgt].mean()),
        "n_target_in_band": int(inband[tgt].sum()),
        "n_source_in_band": int(inband[src].sum()),
        "iterations": int(clf.n_iter_[0]),
        "ks": {},
    }
    for j, name in enumerate(FEATURES):
        r = ks_2samp(X[src, j], X[tgt, j])
        out["ks"][name] = [float(r.statistic), float(r.pvalue)]
    return out


def main():
    d, n = sys.argv[1], int(float(sys.argv[2]))
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    t0 = time.perf_counter()
    X = np.load(f"{d}/X_{n}.npy")
    y = np.load(f"{d}/y_{n}.npy").astype(np.int64)
    load = time.perf_counter() - t0
    best, best_cpu = float("inf"), float("inf")
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        out = pipeline(X, y)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    out.update({"tool": "python", "n": n, "load_sec": load, "pipeline_sec": best, "pipeline_cpu_sec": best_cpu, "reps": reps,
                "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
