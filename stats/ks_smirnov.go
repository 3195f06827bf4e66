package stats

import "math"

// ksKolmogorovSF is KolmogorovSF(n, d) for KS2Samp's asymptotic two-sided
// p-value. For n > 140 and 2.2 ≤ n·d² < 370, KolmogorovSF is 2·SmirnovSF(n, d),
// which sums the Birnbaum–Tingey series term by term from v = 0, as SciPy
// does: O(n) terms, each with two powers, tens of milliseconds for the
// effective sizes of 10^5 jobs. There the terms rise over many orders of
// magnitude to a peak of width O(√n) and fall again, so smirnovPeakSF
// computes the same terms (by the same smirnovTerm) only where they reach
// the sum's precision. Elsewhere, and when that window cannot be
// established, it is KolmogorovSF itself.
func ksKolmogorovSF(n int, d float64) float64 {
	fn := float64(n)
	if n > 140 && n <= smirnovMaxComputeN && d > 0 && d < 0.5 {
		t := fn * d
		if nxsq := t * d; t > 1 && t < fn-1 && nxsq >= 2.2 && nxsq < 370 {
			if sf, ok := smirnovPeakSF(n, d); ok {
				return clamp01(2 * sf)
			}
		}
	}
	return KolmogorovSF(n, d)
}

// smirnovWindowNats: terms more than this many nats (e^-50 ≈ 2e-22)
// below the largest are left out; even n of them change the sum by less
// than its rounding.
const smirnovWindowNats = 50

// smirnovPeakSF returns SmirnovSF(n, x) by the lower Birnbaum–Tingey sum
// over the window of terms that matter, and false where SmirnovSF would
// use another branch (then the caller falls back to it). The window is
// located with a log-gamma estimate of the terms, which is concave in v;
// the edges are checked to be negligible with the exact terms.
func smirnovPeakSF(n int, x float64) (float64, bool) {
	fn := float64(n)
	// As smirnov: n·x = nxHi + nxLo exactly, and the number of terms.
	nxHi := fn * x
	nxLo := math.FMA(fn, x, -nxHi)
	nxfl := math.Floor(nxHi)
	alpha := (nxHi - nxfl) + nxLo
	if alpha < 0 {
		nxfl--
		alpha++
	}
	if alpha >= 1 {
		nxfl++
		alpha--
	}
	if alpha == 1 {
		nxfl++
		alpha = 0
	}
	nxFloor := int(nxfl)
	n1mxfl := n - nxFloor
	if alpha != 0 {
		n1mxfl--
	}
	n1mxceil := n - nxFloor
	if alpha == 0 {
		n1mxfl--
		n1mxceil++
	}
	if nxFloor == 0 || (nxFloor == 1 && alpha == 0) || -2*fn*x*x < minLog || nxFloor >= n-1 || n > smirnovMaxComputeN {
		return 0, false
	}
	nUpperTerms := n - n1mxceil + 1
	if (nUpperTerms <= 1 && x < 0.5) || (n >= smUpperSumMinN && nUpperTerms <= smUpperMaxTerms && x <= 0.5/math.Sqrt(fn)) {
		return 0, false // the upper sum
	}
	nTerms := n1mxfl + 1
	if nTerms < 3 {
		return 0, false
	}

	// Estimated log of term v (v ≥ 1): log C(n,v) + (v-1)·log(x+v/n) + (n-v)·log(1-x-v/n).
	lgn, _ := math.Lgamma(fn + 1)
	est := func(v int) float64 {
		fv := float64(v)
		a, _ := math.Lgamma(fv + 1)
		b, _ := math.Lgamma(fn - fv + 1)
		return lgn - a - b + (fv-1)*math.Log(x+fv/fn) + (fn-fv)*math.Log1p(-x-fv/fn)
	}
	// The peak, by ternary search on the concave estimate over [1, nTerms-1].
	lo, hi := 1, nTerms-1
	for hi-lo > 2 {
		m1 := lo + (hi-lo)/3
		m2 := hi - (hi-lo)/3
		if est(m1) < est(m2) {
			lo = m1 + 1
		} else {
			hi = m2 - 1
		}
	}
	peak := lo
	for v := lo + 1; v <= hi; v++ {
		if est(v) > est(peak) {
			peak = v
		}
	}
	top := est(peak)
	// The window's ends: the last v on each side still within the margin,
	// by bisection on the monotone flanks.
	vLo := 1
	if est(1) < top-smirnovWindowNats {
		a, b := 1, peak // est(a) below the cut, est(b) above
		for b-a > 1 {
			m := (a + b) / 2
			if est(m) < top-smirnovWindowNats {
				a = m
			} else {
				b = m
			}
		}
		vLo = a
	}
	vHi := nTerms - 1
	if est(nTerms-1) < top-smirnovWindowNats {
		a, b := peak, nTerms-1 // est(a) above the cut, est(b) below
		for b-a > 1 {
			m := (a + b) / 2
			if est(m) < top-smirnovWindowNats {
				b = m
			} else {
				a = m
			}
		}
		vHi = b
	}

	// Sum in increasing v as smirnov does, with C(n, v) = cMan·2^cExp
	// from the same running product; the v = 0 term and the terms below
	// the window only count when the window reaches them.
	var sum neumaier
	first := powDD(1, -x, n) / x
	if vLo == 1 {
		sum.add(first)
	}
	cMan, cExp := math.Frexp(fn)
	var aLo, aHi, aMax float64
	for v := 1; v <= vHi; v++ {
		if v >= vLo {
			a := smirnovTerm(n, x, nxHi, nxLo, v, cMan, cExp)
			if math.IsInf(a, 0) || math.IsNaN(a) {
				return 0, false
			}
			sum.add(a)
			aMax = math.Max(aMax, a)
			if v == vLo {
				aLo = a
			}
			if v == vHi {
				aHi = a
			}
		}
		var e int
		cMan, e = math.Frexp(cMan * (float64(n-v) / float64(v+1)))
		cExp += e
	}
	// The window must end where the terms are negligible (or at the
	// ends of the series).
	negligible := epsilon * epsilon * aMax
	if (vLo > 1 && aLo > negligible) || (vHi < nTerms-1 && aHi > negligible) || aMax == 0 {
		return 0, false
	}
	return clamp01(x * sum.value()), true
}
