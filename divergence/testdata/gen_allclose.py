#!/usr/bin/env python3
"""Golden answers for divergence's element-wise comparison and exact integers.

    cd divergence/testdata && /usr/bin/python3 gen_allclose.py   # NumPy 1.24.2 (Debian python3-numpy)

Writes allclose_a.npz and allclose_b.npz (one key per case, the same key on
both sides) and allclose.json with, per case:

- rtol, atol: the bound the Go test applies (numpy.testing.assert_allclose's
  arguments);
- numpy_message: assert_allclose(a, b, rtol, atol)'s message, or "" when it
  passes (the Go test checks its "Mismatched elements" count);
- mismatched, elements, max_abs, max_abs_at, max_rel, max_rel_at, nan_both:
  what assert_allclose computes (utils.assert_array_compare in NumPy 1.24):
  elements NaN on both sides or equal infinities are left out; the rest
  give error = |a - b|, max_abs = max(error), max_rel = max(error / |b|)
  over b != 0 (inf when every such b is 0 and something differs); the
  indices are np.argmax's (first maximum; a NaN is the maximum), unravelled
  in C order;
- max_l2, max_linf, step_l2, step_linf: the per-step norm over the axes
  after the first, its maximum and the step of it (np.argmax); elements NaN
  on both sides are equal there too (assert_allclose's default
  equal_nan=True), a NaN on one side makes its step NaN.

Floats are repr() strings so that NaN and inf survive JSON and every digit
is kept.

Integer cases (both sides integer dtypes) are computed with Python's
arbitrary-precision integers: the exact answer. NumPy itself compares
integers in float64 inside isclose (np.isclose casts b to a float type), so
above 2^53 it counts differing integers as equal; numpy_float_mismatched
records its count, to show what the exact comparison changes. abs(a - b) of
int64 also wraps around in NumPy (MaxInt64 - MinInt64 is -1); the exact
difference is used here.
"""
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def r(x):
    return repr(float(x))


def unravel(flat, shape):
    if flat is None:
        return None
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


def float_stats(a, b, rtol, atol):
    x = a.astype(np.float64).ravel()
    y = b.astype(np.float64).ravel()
    both_nan = np.isnan(x) & np.isnan(y)
    same_inf = np.isinf(x) & (x == y)
    keep = ~(both_nan | same_inf)
    idx = np.nonzero(keep)[0]
    with np.errstate(all="ignore"):
        err = np.abs(x[idx] - y[idx])
        ay = np.abs(y[idx])
        close = np.isclose(x[idx], y[idx], rtol=rtol, atol=atol, equal_nan=True)
    out = {"elements": int(x.size), "nan_both": int(both_nan.sum()), "mismatched": int((~close).sum())}
    differs = (err != 0) | np.isnan(err)
    if err.size == 0 or not differs.any():
        out.update(max_abs=r(0.0), max_abs_at=None, max_rel=r(0.0), max_rel_at=None)
        return out
    k = int(np.argmax(err))
    out["max_abs"], out["max_abs_at"] = r(err[k]), unravel(int(idx[k]), a.shape)
    nz = ay != 0
    nz = nz | np.isnan(ay)  # NaN != 0 in NumPy's filter
    if not nz.any():
        out["max_rel"], out["max_rel_at"] = r(math.inf), None
    else:
        with np.errstate(all="ignore"):
            rel = err[nz] / ay[nz]
        k = int(np.argmax(rel))
        out["max_rel"], out["max_rel_at"] = r(rel[k]), unravel(int(idx[nz][k]), a.shape)
    return out


def int_stats(a, b, rtol, atol):
    x = [int(v) for v in a.ravel()]
    y = [int(v) for v in b.ravel()]
    out = {"elements": len(x), "nan_both": 0}
    err = [abs(p - q) for p, q in zip(x, y)]
    # The bound is compared in float64, as documented for Closeness.
    out["mismatched"] = sum(1 for e, q in zip(err, y) if e != 0 and not float(e) <= atol + rtol * abs(float(q)))
    with np.errstate(all="ignore"):
        out["numpy_float_mismatched"] = int((~np.isclose(a, b, rtol=rtol, atol=atol)).sum())
    if max(err, default=0) == 0:
        out.update(max_abs=r(0.0), max_abs_at=None, max_rel=r(0.0), max_rel_at=None)
        return out
    k = max(range(len(err)), key=lambda i: (err[i], -i))
    out["max_abs"], out["max_abs_at"] = r(float(err[k])), unravel(k, a.shape)
    nz = [i for i in range(len(y)) if y[i] != 0]
    if not nz:
        out["max_rel"], out["max_rel_at"] = r(math.inf), None
    else:
        rel = {i: float(err[i]) / abs(float(y[i])) for i in nz}
        k = max(nz, key=lambda i: (rel[i], -i))
        out["max_rel"], out["max_rel_at"] = r(rel[k]), unravel(k, a.shape)
    return out


def norms(a, b, exact):
    if exact:
        d = np.array([abs(int(p) - int(q)) for p, q in zip(a.ravel(), b.ravel())], dtype=object)
    else:
        with np.errstate(all="ignore"):
            x = a.astype(np.float64).ravel()
            y = b.astype(np.float64).ravel()
            d = np.where((x == y) | (np.isnan(x) & np.isnan(y)), 0.0, np.abs(x - y))
    shape = a.shape if a.shape else (1,)
    d = d.reshape(shape[0], -1)
    out = {}
    for name, f in (("l2", lambda row: math.sqrt(sum(int(v) ** 2 for v in row)) if exact else np.linalg.norm(row, 2)),
                    ("linf", lambda row: float(max(row)) if exact else np.max(row))):
        s = np.array([float(f(row)) for row in d])
        if np.isnan(s).any():
            k = int(np.argmax(np.isnan(s)))
            out["max_" + name], out["step_" + name] = r(math.nan), k
        elif s.max() == 0:
            out["max_" + name], out["step_" + name] = r(0.0), -1
        else:
            k = int(np.argmax(s))
            out["max_" + name], out["step_" + name] = r(s[k]), k
    return out


def main():
    rng = np.random.default_rng(15)
    cases = {}

    x = rng.standard_normal((40, 5))
    y = x * (1 + rng.standard_normal(x.shape) * 1e-8)
    cases["float_default"] = (x, y, 1e-7, 0.0)
    cases["float_rtol_atol"] = (x, y, 1e-9, 1e-12)

    x = rng.standard_normal(30)
    y = x.copy()
    y[[3, 7]] = 0.0  # b = 0: no relative difference there
    x[7] = 0.0       # ... and equal at 7
    y[11] += 1e-6
    cases["zeros_in_b"] = (x, y, 1e-7, 1e-9)

    cases["all_b_zero"] = (np.array([0.0, 1e-3, 0.0, -2e-3]), np.zeros(4), 0.0, 1e-3)

    x = rng.standard_normal((6, 3))
    y = x + 1e-5
    for arr in (x, y):
        arr[1, 2] = np.nan
        arr[4, 0] = np.inf
        arr[5, 1] = -np.inf
    cases["nan_inf_same_places"] = (x, y, 1e-6, 0.0)

    x = rng.standard_normal((5, 4))
    y = x.copy()
    x[[1, 3], [2, 0]] = np.nan
    y[[1, 3], [2, 0]] = np.nan  # NaN at the same places, equal elsewhere: assert_allclose passes
    cases["nan_same_places_only"] = (x, y, 1e-7, 0.0)

    # Equal infinities are left out before the relative difference: every
    # other b is 0, so NumPy reports max rel inf.
    cases["inf_equal_b_zero"] = (np.array([np.inf, 1.0, -np.inf]), np.array([np.inf, 0.0, -np.inf]), 1e-7, 0.0)

    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([1.5, 2.0, 3.5, 4.0])  # |a - b| ties at 0 and 2; relative largest at 0
    cases["ties"] = (x, y, 0.0, 0.1)

    x = rng.standard_normal((10, 4)).astype("<f4")
    y = (x + np.float32(1e-6)).astype("<f4")
    cases["float32"] = (x, y, 1e-6, 0.0)

    x = np.asfortranarray(rng.standard_normal((4, 3, 5)))
    y = x.copy(order="F")
    y[2, 1, 3] += 1e-3
    y[0, 2, 4] -= 5e-4
    cases["fortran_3d"] = (x, y, 1e-7, 0.0)

    x = rng.standard_normal(8)
    y = x.copy()
    x[5] = np.nan  # one side only: NumPy's assert_allclose stops at "nan location mismatch"
    cases["nan_one_side"] = (x, y, 1e-7, 0.0)

    x = rng.standard_normal(5)
    cases["equal"] = (x, x.copy(), 0.0, 0.0)

    base = np.int64(2**53)
    x = base + np.arange(12, dtype=np.int64)
    y = x.copy()
    y[[4, 9]] += 1  # differ by 1 beyond 2^53: float64 cannot tell
    cases["int64_beyond_2_53"] = (x.reshape(3, 4), y.reshape(3, 4), 0.0, 0.0)
    cases["int64_beyond_2_53_rtol"] = (x.reshape(3, 4), y.reshape(3, 4), 1e-16, 0.0)

    x = np.array([np.iinfo(np.int64).max, 2**53 + 1, 0], dtype=np.int64)
    y = np.array([np.iinfo(np.int64).min, 2**53, 7], dtype=np.int64)
    cases["int64_extremes"] = (x, y, 0.0, 0.0)

    x = rng.integers(-1000, 1000, (20, 2)).astype(">i4")
    y = x.astype("<i8")
    y[13, 1] += 3
    cases["int32_vs_int64"] = (x, y, 0.0, 2.0)

    x = np.array([True, False, True])
    cases["bool"] = (x, np.array([True, True, True]), 0.0, 0.0)

    x = base + np.arange(4, dtype=np.int64)
    y = x.astype(np.float64)  # one side float: compared as float64, as NumPy does
    cases["int_vs_float"] = (x, y, 0.0, 0.0)

    # uint64 above MaxInt64, which int64 cannot hold: equal, and 2048 apart
    # (float64 has an ulp of 4096 there).
    x = np.array([2**64 - 1, 3, 2**63], dtype=np.uint64)
    cases["uint64_equal_above_int64"] = (x, x.copy(), 0.0, 0.0)
    y = np.array([2**64 - 2049, 3, 2**63], dtype=np.uint64)
    cases["uint64_above_int64"] = (x, y, 0.0, 0.0)
    # Signed against unsigned: equal bits are not equal values, and opposite
    # signs differ by |a| + |b|, up to 2^64 + 2^63 - 1.
    x = np.array([-1, -3, np.iinfo(np.int64).max, 0, np.iinfo(np.int64).min, 7], dtype=np.int64)
    y = np.array([2**64 - 1, 2, np.iinfo(np.int64).max, 2**63, 2**64 - 1, 7], dtype=np.uint64)
    cases["int64_vs_uint64"] = (x, y, 0.0, 0.0)
    cases["uint8_vs_int8"] = (np.array([255, 0, 128], dtype=np.uint8), np.array([-1, 0, -128], dtype=np.int8), 0.0, 0.0)

    a = {k: v[0] for k, v in cases.items()}
    b = {k: v[1] for k, v in cases.items()}
    np.savez(os.path.join(HERE, "allclose_a.npz"), **a)
    np.savez_compressed(os.path.join(HERE, "allclose_b.npz"), **b)

    out = {"numpy": np.__version__, "cases": {}}
    for k, (x, y, rtol, atol) in cases.items():
        exact = x.dtype.kind in "iub" and y.dtype.kind in "iub"
        c = {"rtol": rtol, "atol": atol, "exact": exact}
        c.update(int_stats(x, y, rtol, atol) if exact else float_stats(x, y, rtol, atol))
        c.update(norms(x, y, exact))
        try:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)
            c["numpy_message"] = ""
        except AssertionError as e:
            c["numpy_message"] = str(e)
        out["cases"][k] = c
    with open(os.path.join(HERE, "allclose.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
