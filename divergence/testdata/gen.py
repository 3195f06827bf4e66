#!/usr/bin/env python3
"""Generate the divergence fixtures: three runs and NumPy's pairwise answers.

    /usr/bin/python3 gen.py    # NumPy 1.24.2 (Debian python3-numpy)

run_a.npz and run_c.npz are written with np.savez (stored), run_b.npz with
np.savez_compressed. want.json holds, for every pair, key and norm, NumPy's
max over axis 0 of the norm over the remaining axes of a - b, computed as
np.max(np.linalg.norm(d.reshape(len(d), -1), ord, axis=1)) (ord 2 or inf;
1-D arrays: np.max(np.abs(d))), and the full per-step series of z_b.
Values are repr() strings so NaN survives JSON.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(7)
    T = 200
    base = {
        "z_b": rng.standard_normal((T, 3)),
        "omega_b": rng.standard_normal(T),
        "field": rng.standard_normal((T, 4, 5)).astype("<f4"),
        "fort": np.asfortranarray(rng.standard_normal((T, 6))),
        "counts": rng.integers(0, 1000, (T, 2)).astype(">i4"),
        "scalar": np.array(1.25),
        "has_nan": rng.standard_normal(T),
        "shape_differs": rng.standard_normal((T, 2)),
        "only_some": rng.standard_normal(T),
    }
    runs = {}
    for name, eps in (("run_a", 0.0), ("run_b", 1e-12), ("run_c", 3e-9)):
        r = {}
        for k, v in base.items():
            if v.dtype.kind == "f":
                noise = rng.standard_normal(v.shape) * eps * np.abs(v)
                r[k] = (v + noise).astype(v.dtype)
                if v.flags.f_contiguous and v.ndim > 1:
                    r[k] = np.asfortranarray(r[k])
            else:
                r[k] = v.copy()
                if name == "run_c":
                    r[k] = r[k] + 1
        if name == "run_b":
            r["has_nan"][17] = np.nan
            r["shape_differs"] = r["shape_differs"][:-1]
        if name == "run_c":
            del r["only_some"]
        runs[name] = r
    np.savez(os.path.join(HERE, "run_a.npz"), **runs["run_a"])
    np.savez_compressed(os.path.join(HERE, "run_b.npz"), **runs["run_b"])
    np.savez(os.path.join(HERE, "run_c.npz"), **runs["run_c"])

    names = list(runs)
    rows = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = runs[names[i]], runs[names[j]]
            for k in base:
                for ordname, ord_ in (("L2", 2), ("Linf", np.inf)):
                    if k not in a or k not in b or a[k].shape != b[k].shape:
                        m = float("nan")
                    else:
                        d = a[k].astype("<f8") - b[k].astype("<f8")
                        if d.ndim == 0:
                            d = d.reshape(1)
                        if d.ndim == 1:
                            m = np.max(np.abs(d))
                        else:
                            m = np.max(np.linalg.norm(d.reshape(len(d), -1), ord_, axis=1))
                    rows.append({"a": names[i], "b": names[j], "key": k, "norm": ordname, "max": repr(float(m))})
    d = runs["run_a"]["z_b"] - runs["run_c"]["z_b"]
    series = {
        "L2": [repr(float(v)) for v in np.linalg.norm(d, 2, axis=1)],
        "Linf": [repr(float(v)) for v in np.linalg.norm(d, np.inf, axis=1)],
    }
    with open(os.path.join(HERE, "want.json"), "w") as f:
        json.dump({"numpy": np.__version__, "rows": rows, "series_z_b_run_a_run_c": series}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
