#!/usr/bin/python3
"""Golden values for overlap.DeLong, computed independently of it: the
O(m*n) definition of DeLong, DeLong and Clarke-Pearson (1988) through the
Mann-Whitney kernel psi(x, y) = 1 if x > y, 1/2 if x == y, 0 otherwise,
structural components V10_i = mean_j psi(x_i, y_j) and
V01_j = mean_i psi(x_i, y_j), variance var(V10)/m + var(V01)/n with
ddof=1. NumPy 1.24.2 (Debian bookworm), run as

    /usr/bin/python3 overlap/testdata/gen_delong.py > overlap/testdata/delong.json
"""
import json
import numpy as np

def delong(x, y):
    x = np.asarray(x, float)[:, None]
    y = np.asarray(y, float)[None, :]
    psi = (x > y) + 0.5 * (x == y)
    v10 = psi.mean(axis=1)
    v01 = psi.mean(axis=0)
    auc = v10.mean()
    var = v10.var(ddof=1) / len(v10) + v01.var(ddof=1) / len(v01)
    return float(auc), float(np.sqrt(var))

rng = np.random.default_rng(20261124)
cases = []
# continuous scores, shifted
x = rng.normal(0.8, 1, 60); y = rng.normal(0, 1, 90)
cases.append(("continuous", x, y))
# heavy ties: integers from a few values
x = rng.integers(0, 5, 120).astype(float); y = rng.integers(0, 4, 80).astype(float)
cases.append(("ties", x, y))
# propensities rounded to 2 decimals, unbalanced
x = np.round(rng.beta(3, 2, 300), 2); y = np.round(rng.beta(2, 3, 40), 2)
cases.append(("rounded", x, y))
# perfect separation and all tied
cases.append(("separated", np.array([3., 4, 5]), np.array([0., 1, 2, 2.5])))
cases.append(("all tied", np.ones(5), np.ones(7)))
out = []
for name, x, y in cases:
    auc, se = delong(x, y)
    out.append({"name": name, "pos": x.tolist(), "neg": y.tolist(), "auc": auc, "se": se})
print(json.dumps({"source": "overlap/testdata/gen_delong.py, NumPy " + np.__version__, "cases": out}, indent=1))
