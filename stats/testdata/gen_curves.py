#!/usr/bin/env python3
"""Generate stats/testdata/curves_golden.json, the golden values of the
curve-analysis functions (curve*.go, powerlaw.go, knee.go, ewma.go, psd.go,
corr.go).

Run from the repository root:

    /usr/bin/python3 stats/testdata/gen_curves.py > stats/testdata/curves_golden.json

Reference implementations:
  * NumPy: np.polyfit (log-log OLS, window slopes), np.fft.rfft (tail power).
  * SciPy: scipy.optimize.curve_fit (exponential), scipy.signal.welch (PSD),
    scipy.stats.pearsonr / spearmanr.
  * pandas: Series.ewm(...).mean().
  * Huber IRLS, the KneeAIC scan and Kneedle are not in any installed
    package (statsmodels and kneed are not installable here), so they are
    re-implemented below in NumPy from their papers: Huber (1981) with a
    MAD scale about zero; Satopaa et al. (2011) with kneed's documented
    conventions (S, curve, direction, interp1d/polynomial, online).

All inputs are generated here from fixed seeds and stored in the JSON, so
the Go tests need no Python. NaN is written as null.
"""
import json
import math
import sys

import numpy as np
import pandas as pd
import scipy
from scipy import optimize, signal, stats

ROBUST_R2 = 0.98
OUTLIER_Z = 3.5
HUBER_K = 1.345
RESIDUAL_FLOOR = 1e-8
MAD_NORMAL = 0.6744897501960817


def clean(a):
    """Lists of floats with NaN as None (JSON null)."""
    if isinstance(a, (list, tuple, np.ndarray)):
        return [clean(v) for v in a]
    if isinstance(a, (float, np.floating)):
        a = float(a)
        return None if math.isnan(a) else a
    if isinstance(a, (np.integer,)):
        return int(a)
    if isinstance(a, (np.bool_,)):
        return bool(a)
    return a


# ---------------------------------------------------------------- power law
def r2_line(lx, ly, a, b):
    res = ly - (a + b * lx)
    sst = np.sum((ly - ly.mean()) ** 2)
    return 1 - np.sum(res**2) / sst


def mad_scale(r):
    return np.median(np.abs(r)) / MAD_NORMAL


def huber_irls(lx, ly, a, b):
    X = np.column_stack([np.ones_like(lx), lx])
    for _ in range(500):
        r = ly - (a + b * lx)
        s = mad_scale(r)
        if s == 0:
            break
        u = np.abs(r) / s
        w = np.where(u <= HUBER_K, 1.0, HUBER_K / np.maximum(u, 1e-300))
        sw = np.sqrt(w)
        coef, *_ = np.linalg.lstsq(X * sw[:, None], ly * sw, rcond=None)
        na, nb = coef
        done = abs(na - a) <= 1e-12 * (1 + abs(a)) and abs(nb - b) <= 1e-12 * (1 + abs(b))
        a, b = na, nb
        if done:
            break
    return a, b


def fit_power_law(x, y):
    lx, ly = np.log(x), np.log(y)
    b, a = np.polyfit(lx, ly, 1)
    r2 = r2_line(lx, ly, a, b)
    out = dict(A=math.exp(a), B=b, R2=r2, Robust=False)
    if len(x) < 5:
        return out
    r = ly - (a + b * lx)
    s = mad_scale(r)
    outlier = bool(np.any((np.abs(r) > OUTLIER_Z * s) & (np.abs(r) > RESIDUAL_FLOOR)))
    if r2 >= ROBUST_R2 and not outlier:
        return out
    ra, rb = huber_irls(lx, ly, a, b)
    return dict(A=math.exp(ra), B=rb, R2=r2_line(lx, ly, ra, rb), Robust=True)


def power_law_cases(rng):
    cases = []
    x = np.arange(1, 51, dtype=float)
    y = 3.0 * x**-0.4 * np.exp(rng.normal(0, 0.01, x.size))
    cases.append(("clean", x, y))
    y2 = y.copy()
    y2[[7, 21, 40]] *= [3.0, 0.3, 4.0]
    cases.append(("outliers", x, y2))
    y3 = 2.0 * x**-0.3 * np.exp(rng.normal(0, 0.25, x.size))
    cases.append(("noisy", x, y3))
    xq = np.arange(1, 201) / 4.0
    y4 = 5.0 * xq**-0.7
    cases.append(("exact_quarter_epochs", xq, y4))
    x5 = np.array([1.0, 2.0, 4.0, 8.0])
    y5 = np.array([10.0, 7.0, 5.2, 3.5])
    cases.append(("four_points", x5, y5))
    out = []
    for name, x, y in cases:
        out.append(dict(name=name, x=x, y=y, want=fit_power_law(x, y)))
    return out


# -------------------------------------------------------------------- slope
def slope_cases(rng):
    out = []
    x = np.arange(0, 50, dtype=float)
    y = 2.5 * np.exp(-x / 10) + rng.normal(0, 0.02, x.size)
    for lo, hi in [(5, 15), (0, 49), (20.5, 30.5), (-10, 3)]:
        m = (x >= lo) & (x <= hi)
        res = stats.linregress(x[m], y[m])
        out.append(dict(name=f"window_{lo}_{hi}", x=x, y=y, lo=lo, hi=hi, want=res.slope))
    return out


# -------------------------------------------------------------- exponential
def expo(x, a, b, c):
    return a * np.exp(-b * x) + c


def r2_lin(y, yhat):
    return 1 - np.sum((y - yhat) ** 2) / np.sum((y - y.mean()) ** 2)


def exponential_cases(rng):
    out = []
    x = np.arange(1, 51, dtype=float)
    specs = [
        ("decay", (2.0, 0.15, 0.3), 0.01),
        ("rising_accuracy", (-0.6, 0.08, 0.9), 0.005),
        ("fast_decay_noisy", (5.0, 0.6, 1.0), 0.05),
    ]
    for name, p, noise in specs:
        y = expo(x, *p) + rng.normal(0, noise, x.size)
        popt, _ = optimize.curve_fit(expo, x, y, p0=p, maxfev=20000, xtol=1e-14, ftol=1e-14, gtol=1e-14)
        out.append(dict(name=name, x=x, y=y,
                        want=dict(A=popt[0], B=popt[1], C=popt[2], R2=r2_lin(y, expo(x, *popt)))))
    return out


# ------------------------------------------------------------------ KneeAIC
def exp_rss_best(x, y):
    """Least-squares exponential by curve_fit from a grid of starting rates;
    the smallest RSS over all starts (independent of the Go profile search)."""
    span = x.max() - x.min()
    best = np.sum((y - y.mean()) ** 2)  # C only; any exponential does at least as well
    # Linear limit (B -> 0) is also covered by the model.
    coef = np.polyfit(x, y, 1)
    best = min(best, np.sum((y - np.polyval(coef, x)) ** 2))
    for u in [0.01, 0.1, 0.5, 1, 2, 5, 10, 20, -0.5, -2]:
        b0 = u / span
        z = np.exp(-b0 * (x - x.min()))
        A = np.column_stack([z, np.ones_like(z)])
        (a0, c0), *_ = np.linalg.lstsq(A, y, rcond=None)
        a0 *= math.exp(b0 * x.min())
        try:
            popt, _ = optimize.curve_fit(expo, x, y, p0=(a0, b0, c0), maxfev=20000)
        except RuntimeError:
            continue
        rss = np.sum((y - expo(x, *popt)) ** 2)
        if np.isfinite(rss):
            best = min(best, rss)
    return best


def knee_aic(x, y, delta=2.0, minpts=6):
    n = len(x)
    for i in range(0, n - minpts + 1):
        tx, ty = x[i:], y[i:]
        m = len(tx)
        b, a = np.polyfit(np.log(tx), np.log(ty), 1)
        rss_pow = np.sum((ty - math.exp(a) * tx**b) ** 2)
        rss_exp = exp_rss_best(tx, ty)
        floor = np.sum(ty**2) * 2.0**-104
        aic_pow = m * math.log(max(rss_pow, floor) / m) + 4
        aic_exp = m * math.log(max(rss_exp, floor) / m) + 6
        if aic_exp - aic_pow >= delta:
            return i, aic_exp - aic_pow
    return -1, None


def knee_aic_cases(rng):
    out = []
    x = np.arange(1, 41, dtype=float)
    # Exponential phase then power-law phase, joined continuously at x = 12.
    y = np.where(x < 12, 1.5 * np.exp(-0.3 * (x - 12)) + 0.5,
                 2.0 * (x / 12) ** -1.2)
    y = y * np.exp(rng.normal(0, 0.01, x.size))
    out.append(("exp_then_power", x, y))
    out.append(("pure_power", x, 3.0 * x**-0.5 * np.exp(rng.normal(0, 0.01, x.size))))
    out.append(("pure_exponential", x, 2.0 * np.exp(-0.2 * x) + 0.5 + rng.normal(0, 0.0005, x.size)))
    res = []
    for name, x, y in out:
        idx, d = knee_aic(x, y)
        res.append(dict(name=name, x=x, y=y, delta=2.0, want=idx, want_daic=d))
    return res


# ------------------------------------------------------------------ Kneedle
def argrel(a, cmp):
    """scipy.signal.argrelextrema(a, cmp, order=1, mode='clip') by hand."""
    n = len(a)
    prev = a[np.clip(np.arange(n) - 1, 0, n - 1)]
    nxt = a[np.clip(np.arange(n) + 1, 0, n - 1)]
    return np.nonzero(cmp(a, prev) & cmp(a, nxt))[0]


def kneedle(x, y, S=1.0, curve="concave", direction="increasing", interp="interp1d", online=False, deg=7):
    """Kneedle (Satopaa et al. 2011) with kneed's conventions, written from
    the paper and kneed's documentation."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if interp == "polynomial":
        ys = np.polyval(np.polyfit(x, y, deg), x)
    else:
        ys = y.copy()
    xn = (x - x.min()) / (x.max() - x.min())
    yn = (ys - ys.min()) / (ys.max() - ys.min())
    flipped = False
    if direction == "decreasing" and curve == "concave":
        yn = yn[::-1]
        flipped = True
    elif direction == "decreasing" and curve == "convex":
        yn = yn.max() - yn
    elif direction == "increasing" and curve == "convex":
        yn = (yn.max() - yn)[::-1]
        flipped = True
    yd = yn - xn
    mx = argrel(yd, np.greater_equal)
    mn = argrel(yd, np.less_equal)
    if mx.size == 0:
        return None
    # Check against SciPy's own argrelextrema.
    assert np.array_equal(mx, signal.argrelextrema(yd, np.greater_equal)[0])
    assert np.array_equal(mn, signal.argrelextrema(yd, np.less_equal)[0])
    drop = S * abs(np.diff(xn).mean())
    knee = None
    thr, ti = None, None
    n = len(x)
    for i in range(mx[0], n - 1):
        if i in mx:
            thr, ti = yd[i] - drop, i
        if i in mn:
            thr = 0.0
        if yd[i + 1] < thr:
            knee = x[n - 1 - ti] if flipped else x[ti]
            if not online:
                return knee
    return knee


def kneedle_cases(rng):
    out = []
    # Figure 2 of Satopaa et al. (2011) as kneed's DataGenerator.figure2
    # builds it; the paper and kneed report the knee at x = 0.22 (2/9).
    x = np.linspace(0.0, 1.0, 10)
    y = -1 / (x + 0.1) + 5
    out.append(dict(name="paper_figure2", x=x, y=y, opts={}, want=kneedle(x, y), hand=2.0 / 9.0))
    x = np.arange(1, 51, dtype=float)
    loss = 2.0 * np.exp(-x / 6) + 0.3 + rng.normal(0, 0.005, x.size)
    out.append(dict(name="loss_convex_decreasing", x=x, y=loss,
                    opts=dict(curve="convex", direction="decreasing"),
                    want=kneedle(x, loss, curve="convex", direction="decreasing")))
    acc = 1 - np.exp(-x / 8) + rng.normal(0, 0.003, x.size)
    out.append(dict(name="accuracy_concave_increasing", x=x, y=acc, opts={}, want=kneedle(x, acc)))
    grow = np.exp(x / 10)
    out.append(dict(name="exp_growth_convex_increasing", x=x, y=grow,
                    opts=dict(curve="convex", direction="increasing"),
                    want=kneedle(x, grow, curve="convex", direction="increasing")))
    dec = 1 - np.exp((x - 50) / 8)
    out.append(dict(name="concave_decreasing", x=x, y=dec,
                    opts=dict(curve="concave", direction="decreasing"),
                    want=kneedle(x, dec, curve="concave", direction="decreasing")))
    wiggly = 2.0 * np.exp(-x / 6) + 0.3 + rng.normal(0, 0.05, x.size)
    for S in [1.0, 3.0]:
        for online in [False, True]:
            o = dict(curve="convex", direction="decreasing", S=S, online=online)
            out.append(dict(name=f"noisy_S{S:g}_online{online}", x=x, y=wiggly, opts=o,
                            want=kneedle(x, wiggly, **o)))
    o = dict(curve="convex", direction="decreasing", interp="polynomial")
    out.append(dict(name="noisy_polynomial", x=x, y=wiggly, opts=o, want=kneedle(x, wiggly, **o)))
    line = 2 * x + 1
    out.append(dict(name="straight_line", x=x, y=line, opts={}, want=kneedle(x, line)))
    return out


# --------------------------------------------------------------------- EWMA
def ewma_cases(rng):
    out = []
    a = rng.normal(0, 1, 30)
    b = a.copy()
    b[[0, 1, 5, 6, 7, 20]] = np.nan
    c = np.full(8, 1.5)
    c[3] = np.nan
    for name, x in [("plain", a), ("with_nan", b), ("constant_with_nan", c)]:
        for alpha in [0.1, 0.5, 1.0]:
            for adjust in [True, False]:
                for ignore_na in [False, True]:
                    want = pd.Series(x).ewm(alpha=alpha, adjust=adjust, ignore_na=ignore_na).mean().to_numpy()
                    out.append(dict(name=f"{name}_a{alpha:g}_adj{adjust}_ign{ignore_na}", x=x, alpha=alpha,
                                    adjust=adjust, ignore_na=ignore_na, want=want))
    return out


# --------------------------------------------------------------------- PSD
def welch_cases(rng):
    out = []
    t = np.arange(1000) / 10.0
    x = np.sin(2 * np.pi * 1.3 * t) + 0.5 * rng.normal(size=t.size) + 0.2
    for nperseg in [0, 16, 64, 15, 2000]:
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f, p = signal.welch(x, fs=10.0, nperseg=None if nperseg == 0 else nperseg)
        out.append(dict(name=f"nperseg_{nperseg}", x=x, fs=10.0, nperseg=nperseg, freqs=f, psd=p))
    short = rng.normal(size=37)
    f, p = signal.welch(short, fs=1.0, nperseg=8)
    out.append(dict(name="short_odd_length", x=short, fs=1.0, nperseg=8, freqs=f, psd=p))
    return out


def tail_cases(rng):
    out = []
    x = np.arange(1, 101, dtype=float)
    smooth = 3 * x**-0.5
    noisy = smooth + rng.normal(0, 0.05, x.size)
    odd = noisy[:51]
    for name, s in [("smooth", smooth), ("noisy", noisy), ("odd_length", odd)]:
        for frac in [0.1, 0.25, 0.5, 1.0]:
            P = np.abs(np.fft.rfft(s))[1:] ** 2
            k = math.ceil(frac * len(P))
            out.append(dict(name=f"{name}_{frac:g}", x=s, frac=frac, want=P[-k:].sum() / P.sum()))
    return out


# ------------------------------------------------------------- correlation
def corr_cases(rng):
    out = []
    n = 40
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(size=n)
    ties_x = np.round(rng.normal(size=n), 0)
    ties_y = np.round(0.5 * ties_x + rng.normal(size=n), 0)
    weak_x = rng.normal(size=12)
    weak_y = rng.normal(size=12)
    mono = np.arange(10.0)
    cases = [("correlated", x, y), ("ties", ties_x, ties_y), ("weak_n12", weak_x, weak_y),
             ("three_points", np.array([1.0, 2.0, 3.5]), np.array([2.0, 1.0, 4.0])),
             ("perfect_monotone", mono, mono**3), ("negative", x, -y)]
    for name, a, b in cases:
        pr = stats.pearsonr(a, b)
        sr = stats.spearmanr(a, b)
        out.append(dict(name=name, x=a, y=b, pearson_r=pr[0], pearson_p=pr[1],
                        spearman_rho=sr[0], spearman_p=sr[1]))
    pr = stats.pearsonr([1.0, 2.0], [3.0, 1.0])
    out.append(dict(name="two_points", x=[1.0, 2.0], y=[3.0, 1.0], pearson_r=pr[0], pearson_p=pr[1],
                    spearman_rho=None, spearman_p=None))
    return out


def main():
    rng = np.random.default_rng(20261121)
    doc = dict(
        generator="stats/testdata/gen_curves.py",
        command="/usr/bin/python3 stats/testdata/gen_curves.py > stats/testdata/curves_golden.json",
        versions=dict(python=sys.version.split()[0], numpy=np.__version__, scipy=scipy.__version__,
                      pandas=pd.__version__),
        seed=20261121,
        power_law=power_law_cases(rng),
        slope=slope_cases(rng),
        exponential=exponential_cases(rng),
        knee_aic=knee_aic_cases(rng),
        kneedle=kneedle_cases(rng),
        ewma=ewma_cases(rng),
        welch=welch_cases(rng),
        rfft_tail=tail_cases(rng),
        corr=corr_cases(rng),
    )
    json.dump(clean_tree(doc), sys.stdout, indent=1)
    sys.stdout.write("\n")


def clean_tree(o):
    if isinstance(o, dict):
        return {k: clean_tree(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, np.ndarray)):
        return [clean_tree(v) for v in o]
    return clean(o)


def bench(only=""):
    """Peer timings for the side-by-side comparison with the Go benchmarks
    in stats/curve_bench_test.go (same sizes, same kind of data):

        /usr/bin/python3 stats/testdata/gen_curves.py --bench [NAME]
        go test -run '^$' -bench 'NAME' -count 5 ./stats/

    NAME (optional) keeps only benchmarks whose name starts with it, e.g.
    EWMA, WelchPSD, Spearman, Pearson, FitExponential. Prints the best
    per-call time of 7 repeats in nanoseconds."""
    import timeit
    import warnings

    def loss(n):
        rng = np.random.default_rng(42)
        x = np.arange(1, n + 1) / 4.0
        return x, 2.5 * x**-0.45 * np.exp(0.02 * rng.normal(size=n))

    def best(stmt, number):
        return min(timeit.repeat(stmt, number=number, repeat=7)) / number * 1e9

    rows = []
    want = lambda name: name.startswith(only)
    for n in [1000, 1000000] if want("EWMA") else []:
        _, y = loss(n)
        s = pd.Series(y)
        rows.append((f"EWMA/n={n}", "pandas Series.ewm(alpha=0.1).mean()",
                     best(lambda: s.ewm(alpha=0.1).mean(), max(1, 20000 // n))))
    for n in [10000, 1000000] if want("WelchPSD") else []:
        _, y = loss(n)
        rows.append((f"WelchPSD/n={n}", "scipy.signal.welch(nperseg=256)",
                     best(lambda: signal.welch(y, fs=1.0, nperseg=256), max(1, 200000 // n))))
    for n in [1000, 100000]:
        x, y = loss(n)
        if want("Spearman"):
            rows.append((f"Spearman/n={n}", "scipy.stats.spearmanr",
                         best(lambda: stats.spearmanr(x, y), max(1, 200000 // n))))
        if want("Pearson"):
            rows.append((f"Pearson/n={n}", "scipy.stats.pearsonr",
                         best(lambda: stats.pearsonr(x, y), max(1, 200000 // n))))
    for n in [200, 10000] if want("FitExponential") else []:
        x, y = loss(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows.append((f"FitExponential/n={n}", "scipy.optimize.curve_fit(p0=(1, 0.1, 0))",
                         best(lambda: optimize.curve_fit(expo, x, y, p0=(1.0, 0.1, 0.0), maxfev=20000),
                              max(1, 2000 // n))))
    print(f"# numpy {np.__version__}, scipy {scipy.__version__}, pandas {pd.__version__}")
    for name, peer, ns in rows:
        print(f"{name:28s} {ns:14.0f} ns/op  {peer}")


if __name__ == "__main__":
    if "--bench" in sys.argv[1:]:
        i = sys.argv.index("--bench")
        bench(sys.argv[i + 1] if len(sys.argv) > i + 1 else "")
    else:
        main()
