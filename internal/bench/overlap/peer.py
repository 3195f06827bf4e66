#!/usr/bin/python3
"""Peer for the overlap pipeline benchmark: the seed's scikit-learn + SciPy
pipeline on the data internal/bench/overlap/gopipe writes.

    go run ./internal/bench/overlap/gopipe -gen /tmp/ovbench -shape tied -n 1000000
    /usr/bin/time -v /usr/bin/python3 internal/bench/overlap/peer.py /tmp/ovbench/tied 1000000 [REPS] [--equal-work] [--calls=K]

DIR holds X_<n>.npy, y_<n>.npy and names.json (the feature names, in
column order) as gopipe writes them for one data shape.

Steps timed as one pipeline (as overlap.Fit does them): StandardScaler over
the pooled rows, LogisticRegression (lbfgs, C=1, class_weight None, the
seed's call), predict_proba[:, 1], roc_auc_score, coverage of both domains
in the band [0.2, 0.8], and scipy.stats.ks_2samp(source, target) per
feature (method auto).

With --equal-work the peer also computes everything else overlap.Fit
returns, so that both sides produce the same outputs: per feature the KS
test on the in-band jobs, SMD (pooled SD) and variance ratio on all and on
in-band jobs, a constant-feature check; the per-domain propensity
quantiles (levels 0, .05, .25, .5, .75, .95, 1; NumPy's linear method) and
20-bin histograms on [0, 1]; and the Kish effective sample size of the
source jobs' odds weights p/(1-p), all and in band.

Prints one JSON line with the fastest of the repetitions in wall time
(pipeline_sec) and in CPU time of the process, all threads
(pipeline_cpu_sec); see README.md. With --calls=K it times K consecutive
pipeline calls in the one process instead (steady state, as gopipe -calls
K) and reports their medians, every call's wall time (calls_sec) and the
first call's (first_sec). --stages adds the CPU seconds of each
step, summed over the repetitions (stages_cpu_sec).
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

LEVELS = [0, 0.05, 0.25, 0.5, 0.75, 0.95, 1]
BINS = 20


def smd_vr(t, s):
    """SMD(target, source) with the pooled SD and var(target)/var(source),
    sample variances, as stats.SMD and stats.VarianceRatio."""
    vt, vs = t.var(ddof=1), s.var(ddof=1)
    diff = t.mean() - s.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(diff / np.sqrt((vt + vs) / 2)) if diff != 0 else 0.0, float(vt / vs)


def kish(w):
    with np.errstate(invalid="ignore"):
        s2 = (w * w).sum()
        return float(w.sum() ** 2 / s2) if s2 != 0 else 0.0


class Stages:
    """CPU seconds (time.process_time, all threads) per step, when asked for."""

    def __init__(self, on):
        self.on, self.t, self.cpu = on, {}, time.process_time()

    def mark(self, name):
        if self.on:
            c = time.process_time()
            self.t[name] = self.t.get(name, 0) + c - self.cpu
            self.cpu = c


def pipeline(X, y, features, lo=0.2, hi=0.8, equal=False, stages=None):
    st = stages or Stages(False)
    Xs = StandardScaler().fit_transform(X)
    st.mark("standardise")
    clf = LogisticRegression(solver="lbfgs", C=1.0).fit(Xs, y)
    st.mark("logistic")
    p = clf.predict_proba(Xs)[:, 1]
    st.mark("propensities")
    auc = roc_auc_score(y, p)
    st.mark("auc")
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
    if equal:
        src_in, tgt_in = src & inband, tgt & inband
        out.update({"ks_in_band": {}, "smd": {}, "var_ratio": {}, "smd_in_band": {}, "var_ratio_in_band": {},
                    "constant": []})
    for j, name in enumerate(features):
        st.mark("coverage" if j == 0 else "ks")
        r = ks_2samp(X[src, j], X[tgt, j])
        out["ks"][name] = [float(r.statistic), float(r.pvalue)]
        st.mark("ks")
        if not equal:
            continue
        col = X[:, j]
        if np.all(col == col[0]):
            out["constant"].append(name)
        s, t = col[src], col[tgt]
        out["smd"][name], out["var_ratio"][name] = smd_vr(t, s)
        s, t = col[src_in], col[tgt_in]
        if len(s) and len(t):
            r = ks_2samp(s, t)
            out["ks_in_band"][name] = [float(r.statistic), float(r.pvalue)]
            out["smd_in_band"][name], out["var_ratio_in_band"][name] = smd_vr(t, s)
    if equal:
        ps, pt = p[src], p[tgt]
        out["source_quantiles"] = np.quantile(ps, LEVELS).tolist()
        out["target_quantiles"] = np.quantile(pt, LEVELS).tolist()
        out["source_hist"] = np.histogram(ps, bins=BINS, range=(0, 1))[0].tolist()
        out["target_hist"] = np.histogram(pt, bins=BINS, range=(0, 1))[0].tolist()
        with np.errstate(divide="ignore"):
            w = ps / (1 - ps)
        out["ess"] = kish(w)
        w_in = w[inband[src]]
        out["ess_in_band"] = kish(w_in) if len(w_in) else float("nan")
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    calls = 0
    for f in flags:
        if f.startswith("--calls="):
            calls = int(f[len("--calls="):])
    flags = [f for f in flags if not f.startswith("--calls=")]
    if len(args) < 2 or calls < 0 or any(f not in ("--equal-work", "--stages") for f in flags):
        sys.exit("usage: peer.py DIR N [REPS] [--equal-work] [--stages] [--calls=K]")
    equal = "--equal-work" in flags
    stages = Stages("--stages" in flags)
    d, n = args[0], int(float(args[1]))
    reps = int(args[2]) if len(args) > 2 else 1
    with open(f"{d}/names.json") as f:
        features = json.load(f)
    t0 = time.perf_counter()
    X = np.load(f"{d}/X_{n}.npy")
    y = np.load(f"{d}/y_{n}.npy").astype(np.int64)
    load = time.perf_counter() - t0
    best, best_cpu = float("inf"), float("inf")
    steady = {}
    if calls > 0:
        reps = 0
        wall, cpu = [], []
        for _ in range(calls):
            t, c = time.perf_counter(), time.process_time()
            out = pipeline(X, y, features, equal=equal, stages=stages)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        best, best_cpu = float(np.median(wall)), float(np.median(cpu))
        steady = {"calls": calls, "calls_sec": wall, "first_sec": wall[0]}
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        out = pipeline(X, y, features, equal=equal, stages=stages)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    out.update({"tool": "python-equal-work" if equal else "python", "n": n, "load_sec": load,
                "pipeline_sec": best, "pipeline_cpu_sec": best_cpu, "reps": reps,
                "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}})
    out.update(steady)
    if stages.on:
        out["stages_cpu_sec"] = stages.t
    print(json.dumps(out))


if __name__ == "__main__":
    main()
