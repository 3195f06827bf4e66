#!/usr/bin/python3
"""Golden values for the spack-build experiment's runtime models (models_golden.json).

Fits scikit-learn's KNeighborsRegressor (k=5, the published run's model) and
LinearRegression (with and without intercept) of duration on memory for a
few synthetic packages, and records predictions at query memories.

    /usr/bin/python3 gen_models.py > models_golden.json

Memories are distinct so neighbour ties cannot occur (scikit-learn leaves
tie order unspecified).
"""
import json
import sys

import numpy
import sklearn
from sklearn import linear_model, neighbors

rng = numpy.random.default_rng(20240408)
out = {
    "generator": "matcher/experiment/testdata/gen_models.py",
    "versions": {"python": sys.version.split()[0], "numpy": numpy.__version__, "sklearn": sklearn.__version__},
    "packages": [],
}
for name, n in [("alpha", 12), ("beta", 40), ("gamma", 150)]:
    mem = numpy.sort(rng.uniform(1e8, 2e10, n))
    rng.shuffle(mem)
    dur = 50 + 3e-8 * mem + rng.normal(0, 40, n)
    x = mem.reshape(-1, 1)
    knn = neighbors.KNeighborsRegressor(n_neighbors=min(5, n)).fit(x, dur)
    lin0 = linear_model.LinearRegression(fit_intercept=False).fit(x, dur)
    lin1 = linear_model.LinearRegression().fit(x, dur)
    q = numpy.concatenate([rng.uniform(0, 2.5e10, 20), [0.0, 5e10]])
    # Keep queries away from exact midpoints between samples.
    out["packages"].append({
        "name": name,
        "memory": mem.tolist(),
        "duration": dur.tolist(),
        "queries": q.tolist(),
        "knn5": knn.predict(q.reshape(-1, 1)).tolist(),
        "linear_origin_slope": float(lin0.coef_[0]),
        "linear_intercept": float(lin1.intercept_),
        "linear_slope": float(lin1.coef_[0]),
    })
json.dump(out, sys.stdout, indent=1)
print()
