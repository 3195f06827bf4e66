package rank

import "math"

// The Smirnov series of SmirnovSF has ⌊n(1-d)⌋+1 terms. SciPy forms every
// term with two powers and sums from v = 0; for large n that is O(n log n)
// work although most terms cannot change the double-precision sum. The code
// below sums the same series from its largest term outwards, with one
// log1p pair and one exp per term, and stops each direction once a
// geometric bound proves the rest negligible.
//
// Why the bound holds. Write t(v) = C(n,v)·(a/n)^(v-1)·(b/n)^(n-v) with
// a = nd + v and b = n - nd - v, and extend C(n,v) to real v by log-gamma.
// Then
//
//	(log t)'' = -ψ'(v+1) - ψ'(n-v+1) + (u+2c+2)/(u+c)² + (b-nd)/b²,
//
// with u = v+1 and c = nd-1. Since ψ'(z) > 1/z, the third term is below
// ψ'(v+1) when 2u ≤ c², which holds for all u ≤ n once (nd-1)² ≥ 2n, and
// the fourth is below ψ'(n-v+1) = ψ'(b+nd+1) when b ≤ n²d² + nd, true once
// nd² ≥ 1. So t is log-concave on the whole range: the ratios
// R(v) = t(v+1)/t(v) decrease in v, and once R(v) < 1 the terms above v sum
// to at most t(v)·R(v)/(1-R(v)) (and symmetrically below the peak).

const (
	// smPeakMinN: below this n the full series is cheap; the peak
	// summation also needs v ≥ smPeakMinV and n-v ≥ smPeakMinV at anchors.
	smPeakMinN = 200
	// smPeakMinV: the Stirling series for log C(n,v) used at anchors is
	// truncated after the m^-7 term; the first omitted one is
	// 1/(1188 m^9) < 2e-15 for m ≥ 20.
	smPeakMinV = 20
	// smPeakAnchor: every smPeakAnchor terms the running product is
	// replaced by a directly computed term, so the recurrence's rounding
	// error never builds up over more than this many steps (≈ 64·4 ulp).
	smPeakAnchor = 64
	// smPeakTailTol: a direction stops when the bound on everything still
	// unsummed is below this fraction of the sum (2^-56 < ulp(1)/8).
	smPeakTailTol = 0x1p-56
	// smPeakRescale guards the scaled terms against overflow when the
	// starting point is not the peak.
	smPeakRescale = 0x1p600
	// log1pSeriesMax: below this |z| the degree-6 series of log1p(z) has a
	// truncation error z^7/7 < 2^-60·|z|.
	log1pSeriesMax = 0x1p-9
)

// smirnovPeakApplies reports whether the log-concavity argument above holds
// for SmirnovSF(n, x) and the peak summation may be used.
func smirnovPeakApplies(n int, x float64) bool {
	fn := float64(n)
	c := fn*x - 1
	return n >= smPeakMinN && n <= smirnovMaxComputeN && fn*x*x >= 1 && c*c >= 2*fn
}

// SmirnovSlow reports whether SmirnovSF(n, x) sums about n terms with
// SciPy's full series (n > 10^5, neither a closed-form special case nor an
// underflowing tail, and outside the range of the peak summation), up to a
// second each: golden tests skip such cases unless asked for.
func SmirnovSlow(n int, x float64) bool {
	fn := float64(n)
	return n > 100000 && n <= smirnovMaxComputeN && fn*x > 2 && fn*x < fn-1 && -2*fn*x*x >= minLog &&
		!smirnovPeakApplies(n, x)
}

// log1pSmall returns log(1+z), by a short series when |z| is tiny.
func log1pSmall(z float64) float64 {
	if math.Abs(z) > log1pSeriesMax {
		return math.Log1p(z)
	}
	return z * (1 + z*(-1.0/2+z*(1.0/3+z*(-1.0/4+z*(1.0/5-z*(1.0/6))))))
}

// stirlingTail returns log(m!) - (m·log m - m + log(2πm)/2) for m ≥ 20.
func stirlingTail(m float64) float64 {
	r := 1 / m
	r2 := r * r
	return r * (1.0/12 - r2*(1.0/360-r2*(1.0/1260-r2*(1.0/1680))))
}

// smirnovLogTerm returns log t(v) for smPeakMinV ≤ v ≤ n - smPeakMinV,
// with n·x = nx. It is written as
//
//	log t = S(v) - log(a/n) + v·log1p(nx/v) + (n-v)·log1p(-nx/(n-v)),
//
// S(v) = log C(n,v) - n·H(v/n) by Stirling's series, so that no quantity of
// size n·log n is formed and cancels: the absolute error is a few ulp of
// n·x, i.e. a relative error of about 1e-12 in the term at n = 10^6.
func smirnovLogTerm(n int, nxHi, nxLo float64, v int) float64 {
	fn, fv, fw := float64(n), float64(v), float64(n-v)
	nx := nxHi + nxLo
	s := 0.5*math.Log(fn/(2*math.Pi*fv*fw)) + stirlingTail(fn) - stirlingTail(fv) - stirlingTail(fw)
	a := (fv + nxHi) + nxLo
	return s - math.Log(a/fn) + fv*math.Log1p(nx/fv) + fw*math.Log1p(-nx/fw)
}

// smirnovRatios returns the ratios R(v) = t(v+1)/t(v) = (n-v)·a/((v+1)·b) ·
// (1+1/a)^v · (1-1/b)^(n-v-1) for consecutive v, the walks of
// smirnovPeakSum, cheaply: the ratio's exponential factor exp(e(v)),
// e(v) = v·log1p(1/a) + (n-v-1)·log1p(-1/b), is carried from the previous
// v by exp(e(v) - e(v∓1)). Neighbouring exponents differ by about
// n·x/(v+n·x)² (1e-6 to 1e-4 in the overlap benchmark's p-values), whose
// exponential a degree-4 polynomial gives to a relative 2^-64; e(v) itself
// is computed afresh each time, so only the carried product drifts, by
// about an ulp per step, and it is recomputed with math.Exp every
// smPeakAnchor steps and whenever the step is not small. One math.Exp per
// term was about a third of the summation's time.
type smirnovRatios struct {
	n          int
	nxHi, nxLo float64
	v, carried int     // last v; steps since exp(e) was computed directly
	e, expE    float64 // e(v) and exp(e(v)) at the last v
}

// smExpStepMax bounds |e(v) - e(v∓1)| for the polynomial: its first omitted
// term, d^5/120, is then below 2^-70.
const smExpStepMax = 0x1p-12

func (w *smirnovRatios) init(n int, nxHi, nxLo float64) {
	*w = smirnovRatios{n: n, nxHi: nxHi, nxLo: nxLo, v: -2}
}

func (w *smirnovRatios) at(v int) float64 {
	fv, fw := float64(v), float64(w.n-v)
	a := (fv + w.nxHi) + w.nxLo
	b := (fw - w.nxHi) - w.nxLo
	e := fv*log1pSmall(1/a) + (fw-1)*log1pSmall(-1/b)
	d := e - w.e
	if (v == w.v+1 || v == w.v-1) && w.carried < smPeakAnchor && math.Abs(d) <= smExpStepMax {
		w.expE *= 1 + d*(1+d*(1.0/2+d*(1.0/6+d*(1.0/24))))
		w.carried++
	} else {
		w.expE = math.Exp(e)
		w.carried = 0
	}
	w.v, w.e = v, e
	return fw * a / ((fv + 1) * b) * w.expE
}

// smirnovPeakSum returns Σ_{v=0}^{vmax} t(v) for SmirnovSF when
// smirnovPeakApplies, summing outwards from the largest term. ok is false
// when the walk would reach v < smPeakMinV; the caller then sums the whole
// series.
func smirnovPeakSum(n int, nxHi, nxLo float64, vmax int) (sum float64, ok bool) {
	fn := float64(n)
	if vmax < smPeakMinV || n-vmax < smPeakMinV {
		return 0, false
	}
	// The terms peak near v = n(1-x)/2, where the binomial's and the
	// powers' logarithmic slopes cancel.
	v0 := int(math.Round((fn - nxHi) / 2))
	v0 = min(max(v0, smPeakMinV), vmax)
	logScale := smirnovLogTerm(n, nxHi, nxLo, v0)

	var up, down neumaier
	var ratios smirnovRatios
	ratios.init(n, nxHi, nxLo)
	// Upwards: v0, v0+1, …, vmax.
	t := 1.0
	for v := v0; ; v++ {
		if v != v0 && (v-v0)%smPeakAnchor == 0 {
			t = math.Exp(smirnovLogTerm(n, nxHi, nxLo, v) - logScale)
		}
		up.add(t)
		if v == vmax {
			break
		}
		r := ratios.at(v)
		if r < 1 && t*r <= smPeakTailTol*(1-r)*up.value() {
			break
		}
		t *= r
		if t > smPeakRescale {
			// Only reachable when v0 lies far below the peak.
			return 0, false
		}
	}
	// Downwards: v0-1, v0-2, …, 0.
	// Each step multiplies by s = 1/R(v) = t(v)/t(v+1), one division.
	t = 1.0
	s := 1 / ratios.at(v0-1) // t(v0-1)/t(v0)
	for v := v0 - 1; v >= 0; v-- {
		if v < smPeakMinV {
			return 0, false
		}
		if (v0-v)%smPeakAnchor == 0 {
			t = math.Exp(smirnovLogTerm(n, nxHi, nxLo, v) - logScale)
		} else {
			t *= s
		}
		if t > smPeakRescale {
			return 0, false
		}
		down.add(t)
		// Below v the ratios t(w-1)/t(w) = 1/R(w-1) only shrink.
		s = 1 / ratios.at(v-1)
		if s < 1 && t*s <= smPeakTailTol*(1-s)*(up.value()+down.value()) {
			break
		}
	}
	total := up.value() + down.value()
	if logScale > minLog+200 {
		return math.Exp(logScale) * total, true
	}
	return math.Exp(logScale + math.Log(total)), true
}
