#!/usr/bin/python3
"""Generate the golden files for package stats' core numerics.

Run from the repository root with Debian's Python 3 packages:

    /usr/bin/python3 stats/testdata/gen_core.py

Writes stats/testdata/ks_2samp.json, ks_dist.json, auc_cases.json,
logistic_cases.json and standard_cases.json. Each file records the versions
of the tools that produced it. The Go tests read these files and never run
Python.
"""
import json
import math
import os
import sys

import mpmath
import numpy as np
import scipy
import scipy.special as sc
import sklearn
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = {
    "python": sys.version.split()[0],
    "numpy": np.__version__,
    "scipy": scipy.__version__,
    "sklearn": sklearn.__version__,
    "mpmath": mpmath.__version__,
    "command": "/usr/bin/python3 stats/testdata/gen_core.py",
}


def dump(name, obj):
    """Writes one JSON object, one list element per line."""
    obj = {"versions": VERSIONS, **obj}
    with open(os.path.join(HERE, name), "w") as f:
        f.write("{\n")
        for i, (k, v) in enumerate(obj.items()):
            sep = "," if i < len(obj) - 1 else ""
            if isinstance(v, list):
                f.write(json.dumps(k) + ": [\n")
                f.write(",\n".join(json.dumps(e) for e in v))
                f.write("\n]" + sep + "\n")
            else:
                f.write(json.dumps(k) + ": " + json.dumps(v) + sep + "\n")
        f.write("}\n")


def fl(a):
    """A float list; NaN becomes null because JSON has no NaN."""
    return [None if math.isnan(v) else float(v) for v in np.asarray(a, dtype=float).ravel()]


# ---------------------------------------------------------------- KS two-sample
def linspec(start, stop, num, shift):
    """A data description the Go test rebuilds exactly: linspace(start, stop, num) + shift."""
    return {"kind": "linspace", "start": start, "stop": stop, "num": num, "shift": shift}


def build(spec):
    if spec["kind"] == "linspace":
        return np.linspace(spec["start"], spec["stop"], spec["num"]) + spec["shift"]
    for d in datasets.values():
        if d["id"] == spec["id"]:
            return np.asarray(d["values"], dtype=float)
    raise KeyError(spec)


datasets = {}


def vals(a):
    """Registers a data vector once and refers to it by id (keeps the JSON small)."""
    v = fl(a)
    key = json.dumps(v)
    if key not in datasets:
        datasets[key] = {"id": len(datasets), "values": v}
    return {"kind": "ref", "id": datasets[key]["id"]}


ks_cases = []


def ks_case(name, xs, ys, alternative, method="auto"):
    x, y = build(xs), build(ys)
    res = stats.ks_2samp(x, y, alternative=alternative, method=method)
    ks_cases.append({
        "name": name, "x": xs, "y": ys, "alternative": alternative, "method": method,
        "statistic": float(res.statistic), "pvalue": float(res.pvalue),
        "location": float(res.statistic_location), "sign": int(res.statistic_sign),
        # A checksum so that the Go side can prove it rebuilt the same data.
        "xsum": float(np.sum(x)), "ysum": float(np.sum(y)),
    })


def scipy_test_vectors():
    # scipy/stats/tests/test_stats.py, class TestKSTwoSamples (SciPy 1.10).
    alts = ["two-sided", "greater", "less"]
    for a in alts:
        ks_case("testSmall/0v1/" + a, vals([0]), vals([1]), a)
        ks_case("testSmall/1v0/" + a, vals([1]), vals([0]), a)
    d1 = np.array([1.0, 2.0])
    for a in alts:
        ks_case("testTwoVsThree/p/" + a, vals(d1 + 0.01), vals([1.0, 2.0, 3.0]), a)
        ks_case("testTwoVsThree/m/" + a, vals(d1 - 0.01), vals([1.0, 2.0, 3.0]), a)
        ks_case("testTwoVsFour/p/" + a, vals(d1 + 0.01), vals([1.0, 2.0, 3.0, 4.0]), a)
        ks_case("testTwoVsFour/m/" + a, vals(d1 - 0.01), vals([1.0, 2.0, 3.0, 4.0]), a)
        ks_case("test100_100/p/" + a, linspec(1, 100, 100, 0), linspec(1, 100, 100, 2 + 0.1), a)
        ks_case("test100_100/m/" + a, linspec(1, 100, 100, 0), linspec(1, 100, 100, 2 - 0.1), a)
        ks_case("test100_110/p/" + a, linspec(1, 100, 100, 0), linspec(1, 100, 110, 20 + 0.1), a)
        ks_case("test100_110/m/" + a, linspec(1, 100, 100, 0), linspec(1, 100, 110, 20 - 0.1), a)
    x2233 = np.array([2] * 3 + [3] * 4 + [5] * 5 + [6] * 4, dtype=float)
    x2356 = np.array([2] * 3 + [3] * 4 + [5] * 10 + [6] * 4, dtype=float)
    x3467 = np.array([3] * 10 + [4] * 2 + [6] * 10 + [7] * 4, dtype=float)
    d2 = np.array([1.0, 2.0, 3.0])
    for a in alts:
        ks_case("testRepeatedValues/2233/" + a, vals(x2233), vals(x2233 + 1), a)
        ks_case("testRepeatedValues/2356/" + a, vals(x2356), vals(x3467), a)
        ks_case("testEqualSizes/+1/" + a, vals(d2), vals(d2 + 1), a)
        ks_case("testEqualSizes/+0.5/" + a, vals(d2), vals(d2 + 0.5), a)
        ks_case("testEqualSizes/-0.5/" + a, vals(d2), vals(d2 - 0.5), a)
    for (n1, n2, lo2, hi2, tag) in [(500, 600, 2, 200, "testMiddlingBoth"),
                                    (1000, 1100, 2, 200, "testMediumBoth"),
                                    (10000, 110, 2, 100, "testLarge"),
                                    (10000, 11000, 2, 200, "testLargeBoth")]:
        delta = 1.0 / n1 / n2 / 2 / 2
        xs, ys = linspec(1, 200, n1, -delta), linspec(lo2, hi2, n2, 0)
        for a in alts:
            for m in ["auto", "exact", "asymp"]:
                ks_case(f"{tag}/{a}/{m}", xs, ys, a, m)
    np.random.seed(123456)
    x = np.random.normal(size=3000)
    y = np.random.normal(size=3001) * 1.5
    for m in ["exact", "asymp"]:
        for a in alts:
            ks_case(f"test_gh11184/{a}/{m}", vals(x), vals(y), a, m)
    x = np.arange(10, dtype=np.float64)
    for a, x6 in [("greater", 5.9), ("less", 6.1), ("two-sided", 5.9), ("two-sided", 6.1)]:
        xx = x.copy()
        xx[6] = x6
        ks_case(f"test_location_sign/{a}/{x6}", vals(xx), vals(x), a)
    rng = np.random.default_rng(14019)  # SciPy seeds from hash(); any fixed seed gives the same regime
    d1 = rng.random(size=881) + 0.5
    d2 = rng.random(size=369)
    ks_case("test_warnings_gh_14019/less", vals(d1), vals(d2), "less")


def random_ks_cases():
    rng = np.random.default_rng(20260101)
    sizes = [(1, 7), (5, 5), (8, 12), (13, 13), (20, 30), (37, 91), (64, 64), (100, 250), (333, 200)]
    for (n1, n2) in sizes:
        for kind in ["cont", "ties", "shift"]:
            if kind == "cont":
                x, y = rng.normal(size=n1), rng.normal(size=n2)
            elif kind == "ties":
                x, y = rng.integers(0, 6, size=n1).astype(float), rng.integers(0, 6, size=n2).astype(float)
            else:
                x, y = rng.normal(size=n1), rng.normal(loc=0.7, scale=1.3, size=n2)
            for a in ["two-sided", "greater", "less"]:
                for m in ["exact", "asymp"]:
                    ks_case(f"random/{n1}x{n2}/{kind}/{a}/{m}", vals(x), vals(y), a, m)


# ------------------------------------------------------ Kolmogorov distributions
def kstwo_branch(n, x):
    """Which branch SciPy 1.10's _kolmogn takes for the SF (mirrors _ksstats.py)."""
    if x >= 1.0 or x <= 0.0:
        return "edge"
    t = n * x
    if t <= 1.0:
        return "ruben-gambino-low"
    if t >= n - 1:
        return "ruben-gambino-high"
    if x >= 0.5:
        return "smirnov"
    nxs = t * x
    if n <= 140:
        if nxs <= 0.754693:
            return "durbin"
        if nxs <= 4:
            return "pomeranz"
        return "smirnov"
    if nxs >= 370.0:
        return "zero"
    if nxs >= 2.2:
        return "smirnov"
    if n <= 100000 and n * x ** 1.5 <= 1.4:
        return "durbin"
    return "pelz-good"


def dist_cases():
    kstwo = []
    ns = [1, 2, 3, 5, 10, 20, 50, 100, 140, 141, 200, 500, 1000, 5000, 10000, 100000, 100001, 250000, 1000000]
    for n in ns:
        xs = set()
        zs = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 2.0, 2.5, 3.0, 4.0, 6.0]
        if n >= 100000:
            # The Smirnov sum costs O(n) per value: keep few large-n cases so
            # that the Go test stays fast under -race. The extra z values
            # cover the Smirnov branch (2.2 <= n*x^2 < 370) that the
            # two-sample asymptotic p-values of the overlap pipeline reach.
            zs = [0.1, 0.5, 0.9, 1.2, 1.48, 1.6, 2.0, 3.0, 4.5, 6.0, 9.0, 13.0, 17.0, 19.2]
        for z in zs:
            xs.add(z / math.sqrt(n))
        for x in [0.5 / n, 0.75 / n, 1.0 / n, 1.5 / n, 0.3, 0.5, 0.6, 0.9, 1 - 1.0 / n, 1 - 0.5 / n, 0.999]:
            xs.add(x)
        for x in sorted(xs):
            if not (0 < x < 1):
                continue
            kstwo.append({"n": n, "x": x, "sf": float(stats.kstwo.sf(x, n)),
                          "cdf": float(stats.kstwo.cdf(x, n)), "branch": kstwo_branch(n, x)})
    smirnov = []
    for n in [1, 2, 3, 5, 10, 20, 50, 100, 1000, 1012, 1013, 10000, 100000, 1000000, 1000001]:
        xs = [1e-6, 0.001, 0.01, 0.5 / n, 1.0 / n, 1.5 / n, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1 - 1.0 / n, 0.999]
        if n == 1000000:
            xs = [1e-6, 0.5 / n, 1.0 / n, 1.5 / n, 0.002, 0.05, 0.5, 1 - 1.0 / n]
        for x in xs:
            if 0 < x < 1:
                smirnov.append({"n": n, "x": x, "sf": float(sc.smirnov(n, x))})
    # Large n across the Smirnov series' range, x = z/sqrt(n) up to the
    # underflow cut-off 2*n*x^2 = 708.
    for n in [100000, 250000, 1000000]:
        for z in [1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 16.0, 18.8]:
            x = z / math.sqrt(n)
            smirnov.append({"n": n, "x": x, "sf": float(sc.smirnov(n, x))})
    limit = []
    for x in [0.01, 0.03, 0.0407, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.82, 0.83, 0.9, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0]:
        limit.append({"x": x, "sf": float(stats.kstwobign.sf(x)), "kolmogorov": float(sc.kolmogorov(x))})
    return {"kstwo": kstwo, "smirnov": smirnov, "kstwobign": limit}


# ------------------------------------------------------------------------ AUC
def auc_cases():
    rng = np.random.default_rng(7)
    cases = []

    def add(name, s, y, w=None):
        s, y = np.asarray(s, float), np.asarray(y, int)
        auc = roc_auc_score(y, s, sample_weight=w)
        cases.append({"name": name, "scores": fl(s), "positive": [bool(v) for v in y],
                      "weights": None if w is None else fl(w), "auc": float(auc)})

    add("perfect", [0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])
    add("reversed", [0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0])
    add("all-tied", [0.5] * 6, [0, 1, 0, 1, 1, 0])
    add("some-ties", [0.1, 0.4, 0.35, 0.8, 0.4, 0.4, 0.1], [0, 0, 1, 1, 1, 0, 1])
    add("weighted", [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], [1.0, 2.0, 0.5, 3.0])
    add("weighted-ties", [0.1, 0.4, 0.4, 0.8, 0.1, 0.4], [0, 0, 1, 1, 1, 1], [0.3, 2.0, 0.5, 3.0, 1.5, 0.2])
    add("zero-weight", [0.1, 0.4, 0.35, 0.8, 0.9], [0, 0, 1, 1, 0], [1.0, 2.0, 0.5, 3.0, 0.0])
    for n in [10, 100, 1000]:
        s = rng.normal(size=n)
        y = (rng.random(n) < 1 / (1 + np.exp(-s))).astype(int)
        add(f"random/n={n}", s, y)
        add(f"random-rounded/n={n}", np.round(s, 1), y)
        add(f"random-weighted/n={n}", np.round(s, 1), y, rng.random(n) * 3)
    return {"cases": cases}


# ------------------------------------------------------------------ Logistic
def logistic_objective_newton(X, y, w, C, intercept):
    """High-precision Newton on sklearn's objective, in mpmath (40 digits)."""
    mpmath.mp.dps = 40
    n, p = X.shape
    q = p + (1 if intercept else 0)
    Xm = [[mpmath.mpf(float(v)) for v in row] + ([mpmath.mpf(1)] if intercept else []) for row in X]
    beta = [mpmath.mpf(0)] * q
    for it in range(200):
        g = [mpmath.mpf(0)] * q
        H = [[mpmath.mpf(0)] * q for _ in range(q)]
        for i in range(n):
            eta = mpmath.fsum(Xm[i][k] * beta[k] for k in range(q))
            mu = 1 / (1 + mpmath.exp(-eta))
            r = C * w[i] * (mu - y[i])
            s = C * w[i] * mu * (1 - mu)
            for a in range(q):
                g[a] += r * Xm[i][a]
                for b in range(q):
                    H[a][b] += s * Xm[i][a] * Xm[i][b]
        for a in range(p):
            g[a] += beta[a]
            H[a][a] += 1
        step = mpmath.lu_solve(mpmath.matrix(H), mpmath.matrix(g))
        beta = [beta[k] - step[k] for k in range(q)]
        if mpmath.norm(step) < mpmath.mpf(10) ** -30:
            break
    coef = [float(b) for b in beta[:p]]
    icpt = float(beta[p]) if intercept else 0.0
    return coef, icpt


def logistic_cases():
    rng = np.random.default_rng(11)
    cases = []

    def add(name, X, y, C=1.0, sw=None, balanced=False, intercept=True, ref=True):
        kw = dict(C=C, tol=1e-12, max_iter=10000, fit_intercept=intercept, solver="lbfgs")
        if balanced:
            kw["class_weight"] = "balanced"
        m = LogisticRegression(**kw).fit(X, y, sample_weight=sw)
        w = np.ones(len(y)) if sw is None else np.asarray(sw, float)
        if balanced:
            n = len(y)
            cw = {c: n / (2 * np.sum(y == c)) for c in (0, 1)}
            w = w * np.array([cw[v] for v in y])
        case = {"name": name, "X": [fl(r) for r in X], "y": [int(v) for v in y], "C": C,
                "sample_weight": None if sw is None else fl(sw), "balanced": balanced,
                "intercept": intercept,
                "sklearn_coef": fl(m.coef_[0]), "sklearn_intercept": float(m.intercept_[0]) if intercept else 0.0,
                "sklearn_proba": fl(m.predict_proba(X)[:, 1])}
        if ref:
            coef, icpt = logistic_objective_newton(X, y, w, C, intercept)
            case["ref_coef"], case["ref_intercept"] = coef, icpt
        cases.append(case)

    n = 120
    X = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.2] + [0.0, 1.0, -2.0]
    logit = 0.5 + X @ np.array([1.0, -0.4, 2.0])
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    add("basic", X, y)
    add("C=0.05", X, y, C=0.05)
    add("C=100", X, y, C=100.0)
    add("no-intercept", X, y, intercept=False)
    sw = rng.random(n) * 2
    add("sample-weight", X, y, sw=sw)
    yi = (rng.random(n) < 0.15).astype(int)
    add("imbalanced", X, yi)
    add("imbalanced-balanced", X, yi, balanced=True)
    add("imbalanced-balanced-weighted", X, yi, sw=sw, balanced=True)
    Xc = np.column_stack([X, np.full(n, 3.0)])
    add("constant-column", Xc, y)
    return {"cases": cases}


# ---------------------------------------------------------- Standardizer etc.
def standard_cases():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 4)) * [1.0, 1e-3, 100.0, 0.0] + [0.0, 5.0, -3.0, 7.0]
    X[3, 0] = np.nan
    X[10, 2] = np.nan
    X[11, 2] = np.nan
    sc_ = StandardScaler().fit(X)
    med = []
    for arr in [[3.0], [1.0, 2.0], [5.0, 1.0, 3.0], [2.0, 2.0, 1.0, 7.0], list(rng.normal(size=11)),
                list(rng.normal(size=20))]:
        a = np.asarray(arr, float)
        med.append({"x": fl(a), "median": float(np.median(a)),
                    "q": [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0],
                    "quantile": fl(np.quantile(a, [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]))})
    return {"X": [fl(r) for r in X], "mean": fl(sc_.mean_), "scale": fl(sc_.scale_),
            "transformed": [fl(r) for r in sc_.transform(X)], "median": med}


def main():
    scipy_test_vectors()
    random_ks_cases()
    dump("ks_2samp.json", {"cases": ks_cases,
                           "datasets": sorted(datasets.values(), key=lambda d: d["id"])})
    dump("ks_dist.json", dist_cases())
    dump("auc_cases.json", auc_cases())
    dump("logistic_cases.json", logistic_cases())
    dump("standard_cases.json", standard_cases())


if __name__ == "__main__":
    main()
