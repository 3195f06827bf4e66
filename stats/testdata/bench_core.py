#!/usr/bin/python3
"""Peer timings for BenchmarkKS2Samp, BenchmarkAUC, BenchmarkLogistic and
BenchmarkStandardizer in stats/ks_bench_test.go, on bit-identical data.

    /usr/bin/python3 stats/testdata/bench_core.py          # timings
    /usr/bin/python3 stats/testdata/bench_core.py --check  # first values of the stream

Each peer call is timed with time.perf_counter over `repeat` runs and the
median is printed in ns/op, the unit of `go test -bench`.
"""
import statistics
import sys
import time

import numpy as np
import scipy
import sklearn
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def uniform(seed, n):
    """splitmix64(seed + (k+1)*golden) >> 11 * 2^-53, as ksBenchUniform."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (np.arange(1, n + 1, dtype=np.uint64) * GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def ks_samples(n1, n2):
    return uniform(1, n1), 1.1 * uniform(2, n2) - 0.02


def logistic_data(n):
    p = 6
    X = np.empty((n, p))
    for j in range(p):
        X[:, j] = (uniform(10 + j, n) - 0.5) * (j + 1)
    eta = 0.3 + X @ np.array([0.5 * (-1.0) ** j for j in range(p)])
    y = (uniform(20, n) < 1 / (1 + np.exp(-eta))).astype(int)
    return X, y


def timeit(f, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e9


def main():
    if "--check" in sys.argv:
        print(repr(list(uniform(1, 3))))
        return
    print(f"# numpy {np.__version__}, scipy {scipy.__version__}, sklearn {sklearn.__version__}")
    rows = []
    for name, n1, n2, method, rep in [("exact/n=1e3x1e3", 1000, 1000, "exact", 50),
                                      ("exact/n=1e4x1e4", 10000, 10000, "exact", 20),
                                      ("exact/n=1e4x9e3", 10000, 9000, "exact", 5),
                                      ("asymp/n=1e6x1e6", 1000000, 1000000, "asymp", 3)]:
        x, y = ks_samples(n1, n2)
        rows.append(("KS2Samp/" + name, timeit(lambda: stats.ks_2samp(x, y, method=method), rep)))
    for n, rep in [(1000, 50), (1000000, 3)]:
        s = uniform(3, n)
        pos = uniform(4, n) < s
        rows.append((f"AUC/n={n:.0e}".replace("e+0", "e"), timeit(lambda: roc_auc_score(pos, s), rep)))
    for n, rep in [(200000, 3), (1000000, 2)]:
        X, y = logistic_data(n)
        # scikit-learn's defaults (lbfgs, tol=1e-4): the seed pipeline's call.
        rows.append((f"Logistic/n={n:.0e}x6".replace("e+0", "e"),
                     timeit(lambda: LogisticRegression().fit(X, y), rep)))
    X, _ = logistic_data(1000000)
    rows.append(("Standardizer/n=1e6x6", timeit(lambda: StandardScaler().fit_transform(X), 3)))
    for name, ns in rows:
        print(f"{name}\t{ns:.0f} ns/op")


if __name__ == "__main__":
    main()
