package rank

import "math"

// Distribution functions of the Kolmogorov–Smirnov statistics, following the
// algorithms SciPy uses (scipy.special.kolmogorov, scipy.special.smirnov and
// scipy.stats.kstwo, the last from scipy/stats/_ksstats.py).

const (
	// kolmogCutover switches between the two theta-function series of the
	// limiting Kolmogorov distribution (van Mulbregt 2018).
	kolmogCutover = 0.82
	// minExpable: exp of anything below this is zero in float64.
	minExpable = -708 - 38
	// minLog is log(2^-1022), the smallest normal float64's logarithm.
	minLog = -708.3964185322641
	// smirnovMaxComputeN: above this n, SmirnovSF uses the approximation
	// exp(-(6nx+1)^2/(18n)), as SciPy does.
	smirnovMaxComputeN = 1000000
	// The upper (alternating) Smirnov sum is used only with few terms.
	smUpperMaxTerms = 3
	smUpperSumMinN  = 10
	// scale128 is 2^128, the rescaling step of the Durbin and Pomeranz recursions.
	scale128exp = 128
)

var (
	scale128  = math.Ldexp(1, scale128exp)
	scaleM128 = math.Ldexp(1, -scale128exp)
)

// KolmogorovLimitSF is stats.KolmogorovLimitSF (documented there): SciPy's
// kstwobign.sf by two Jacobi theta series switching at x = 0.82.
func KolmogorovLimitSF(x float64) float64 {
	sf, _ := kolmogorovLimit(x)
	return sf
}

// kolmogorovLimit returns the survival function and the CDF of the limiting
// Kolmogorov distribution.
func kolmogorovLimit(x float64) (sf, cdf float64) {
	if math.IsNaN(x) {
		return math.NaN(), math.NaN()
	}
	if x <= 0 || x <= math.Pi/math.Sqrt(-minExpable*8) {
		return 1, 0
	}
	if x <= kolmogCutover {
		// P = w·u·(1 + u^8 + u^24 + u^48 + …), u = exp(-π²/(8x²)), w = sqrt(2π)/x.
		w := math.Sqrt(2*math.Pi) / x
		logu8 := -math.Pi * math.Pi / (x * x)
		u := math.Exp(logu8 / 8)
		var p float64
		if u == 0 {
			p = math.Exp(logu8/8 + math.Log(w))
		} else {
			u8 := math.Exp(logu8)
			u8cub := u8 * u8 * u8
			p = 1.0
			p = 1 + u8cub*p
			p = 1 + u8*u8*p
			p = 1 + u8*p
			p *= w * u
		}
		return clamp01(1 - p), clamp01(p)
	}
	// P = 2v(1 - v^3(1 - v^5(1 - v^7(…)))), v = exp(-2x²).
	v := math.Exp(-2 * x * x)
	v3 := v * v * v
	p := 1.0
	p = 1 - v3*v3*v*p
	p = 1 - v3*v*v*p
	p = 1 - v3*p
	p *= 2 * v
	return clamp01(p), clamp01(1 - p)
}

func clamp01(p float64) float64 {
	switch {
	case p < 0:
		return 0
	case p > 1:
		return 1
	}
	return p
}

// SmirnovSF is stats.SmirnovSF (documented there): SciPy's
// scipy.special.smirnov(n, d), summed from its largest term outwards where
// the terms are log-concave (see kolmogorov_peak.go).
func SmirnovSF(n int, d float64) float64 {
	sf, _ := smirnov(n, d)
	return sf
}

// smirnov returns the survival function and the CDF of D_n^+.
func smirnov(n int, x float64) (sf, cdf float64) {
	return smirnovSum(n, x, true)
}

// smirnovSum is smirnov; peak selects the outward summation of
// kolmogorov_peak.go where it applies (false: SciPy's full series).
func smirnovSum(n int, x float64, peak bool) (sf, cdf float64) {
	if !(n > 0 && x >= 0 && x <= 1) {
		return math.NaN(), math.NaN()
	}
	if n == 1 {
		return 1 - x, x
	}
	if x == 0 {
		return 1, 0
	}
	if x == 1 {
		return 0, 1
	}
	fn := float64(n)
	// n·x = nxHi + nxLo exactly.
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

	// x ≤ 1/n.
	if nxFloor == 0 || (nxFloor == 1 && alpha == 0) {
		t := powDD(1, x, n-1)
		cdf = x * t
		return 1 - cdf, cdf
	}
	// The survival function underflows.
	if -2*fn*x*x < minLog {
		return 0, 1
	}
	// x ≥ 1 - 1/n.
	if nxFloor >= n-1 {
		sf = powDD(1, -x, n)
		return sf, 1 - sf
	}
	if n > smirnovMaxComputeN {
		logp := -math.Pow(6*fn*x+1, 2) / 18 / fn
		if logp < -math.Ln2 {
			sf = math.Exp(logp)
			return sf, 1 - sf
		}
		cdf = -math.Expm1(logp)
		return 1 - cdf, cdf
	}

	nUpperTerms := n - n1mxceil + 1
	useUpper := nUpperTerms <= 1 && x < 0.5
	useUpper = useUpper || (n >= smUpperSumMinN && nUpperTerms <= smUpperMaxTerms && x <= 0.5/math.Sqrt(fn))

	if peak && !useUpper && smirnovPeakApplies(n, x) {
		if sum, ok := smirnovPeakSum(n, nxHi, nxLo, n1mxfl); ok {
			sf = x * sum
			return clamp01(sf), clamp01(1 - sf)
		}
	}
	start, step, nTerms := 0, 1, n1mxfl+1
	var first float64
	if useUpper {
		start, step, nTerms = n, -1, n-n1mxceil+1
		first = powDD(1, x, n-1)
	} else {
		first = powDD(1, -x, n) / x
	}
	var sum neumaier
	sum.add(first)
	// C(n, j) = cMan·2^cExp.
	cMan, cExp := math.Frexp(fn)
	vmid := n / 2
	for j := 1; j < nTerms; j++ {
		v := start + j*step
		aj := smirnovTerm(n, x, nxHi, nxLo, v, cMan, cExp)
		if !math.IsInf(aj, 0) && !math.IsNaN(aj) && aj != 0 {
			sum.add(aj)
		}
		if aj != 0 {
			if 4*float64(nTerms-j)*math.Abs(aj) < epsilon*sum.value() && j != nTerms-1 {
				break
			}
		} else if j > vmid {
			break
		}
		var e int
		cMan, e = math.Frexp(cMan * (float64(n-j) / float64(j+1)))
		cExp += e
	}
	prob := x * sum.value()
	if step < 0 {
		cdf, sf = prob, 1-prob
	} else {
		sf, cdf = prob, 1-prob
	}
	return clamp01(sf), clamp01(cdf)
}

const epsilon = 0x1p-52

// smirnovTerm returns C(n,v)·(1-x-v/n)^(n-v)·(x+v/n)^(v-1), with
// C(n,v) = cMan·2^cExp and n·x = nxHi + nxLo.
func smirnovTerm(n int, x, nxHi, nxLo float64, v int, cMan float64, cExp int) float64 {
	fn := float64(n)
	// 1 - x - v/n = ((n - v) - n·x)/n, formed in double-double.
	s, e := twoSum(float64(n-v), -nxHi)
	m2, e2 := powScaledDD(s, e-nxLo, fn, n-v)
	// x + v/n = (v + n·x)/n.
	s, e = twoSum(float64(v), nxHi)
	m1, e1 := powScaledDD(s, e+nxLo, fn, v-1)
	return math.Ldexp(cMan*m1*m2, cExp+e1+e2)
}

// twoSum returns s = fl(a+b) and the exact rounding error e, a+b = s+e.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// powDD returns (a+b)^m for a double-double base a+b (|b| ≤ ulp(a)
// not required) using pow on the leading part and a first-order or log1p
// correction for the trailing part, as SciPy's pow_D does.
func powDD(a, b float64, m int) float64 {
	hi, lo := twoSum(a, b)
	if hi == 0 {
		if m == 0 {
			return 1
		}
		return 0
	}
	return math.Pow(hi, float64(m)) * powCorrection(lo/hi, m)
}

// powCorrection returns (1+r)^m for tiny r.
func powCorrection(r float64, m int) float64 {
	adj := float64(m) * r
	if math.Abs(adj) > 1e-8 {
		if math.Abs(adj) < 1e-4 {
			adj += float64(m) * r * (float64(m-1) / 2 * r)
		} else {
			adj = math.Expm1(float64(m) * math.Log1p(r))
		}
	}
	return 1 + adj
}

// powScaledDD returns ((hi+lo)/den)^m as mantissa·2^exp, computing the
// power of the leading part by binary exponentiation with renormalisation so
// that nothing under- or overflows.
func powScaledDD(hi, lo, den float64, m int) (float64, int) {
	if m == 0 {
		return 1, 0
	}
	q := hi / den
	// Remainder of the division, exactly: hi - q·den.
	r := -math.FMA(q, den, -hi)
	qlo := (r + lo) / den
	neg := m < 0
	if neg {
		m = -m
	}
	mant, exp := powScaled(q, m)
	mant *= powCorrection(qlo/q, m)
	if neg {
		f, e := math.Frexp(1 / mant)
		return f, e - exp
	}
	return mant, exp
}

// powScaled returns y^m as mantissa·2^exp for m ≥ 0, y ≠ 0, by binary
// exponentiation on a mantissa kept in [0.5, 1), so that it never under- or
// overflows and costs no more than math.Pow.
func powScaled(y float64, m int) (float64, int) {
	x1, xe := math.Frexp(y)
	neg := x1 < 0
	if neg {
		x1 = -x1
	}
	a1, ae := 1.0, 0
	for i := m; i != 0; i >>= 1 {
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 *= x1
		xe <<= 1
		if x1 < 0.5 {
			x1 += x1
			xe--
		}
	}
	if neg && m&1 == 1 {
		a1 = -a1
	}
	return a1, ae
}

// neumaier is a compensated sum.
type neumaier struct{ s, c float64 }

func (k *neumaier) add(x float64) {
	t := k.s + x
	if math.Abs(k.s) >= math.Abs(x) {
		k.c += (k.s - t) + x
	} else {
		k.c += (x - t) + k.s
	}
	k.s = t
}

func (k *neumaier) value() float64 { return k.s + k.c }

// KolmogorovSF is stats.KolmogorovSF (documented there): SciPy's
// kstwo.sf(d, n), by the method Simard and L'Ecuyer (2011) recommend.
func KolmogorovSF(n int, d float64) float64 {
	return kolmogn(n, d, false)
}

// KolmogorovCDF is stats.KolmogorovCDF: SciPy's kstwo.cdf(d, n).
func KolmogorovCDF(n int, d float64) float64 {
	return kolmogn(n, d, true)
}

func selectProb(cdfProb, sfProb float64, cdf bool) float64 {
	if cdf {
		return clamp01(cdfProb)
	}
	return clamp01(sfProb)
}

func kolmogn(n int, x float64, cdf bool) float64 {
	if n <= 0 || math.IsNaN(x) {
		return math.NaN()
	}
	if x >= 1 {
		return selectProb(1, 0, cdf)
	}
	if x <= 0 {
		return selectProb(0, 1, cdf)
	}
	fn := float64(n)
	t := fn * x
	if t <= 1 { // Ruben–Gambino: 1/(2n) ≤ x ≤ 1/n.
		if t <= 0.5 {
			return selectProb(0, 1, cdf)
		}
		var prob float64
		if n <= 140 {
			prob = 1
			for i := 1; i <= n; i++ {
				prob *= float64(i) * (1 / fn) * (2*t - 1)
			}
		} else {
			prob = math.Exp(logNFactorialDivNPowN(fn) + fn*math.Log(2*t-1))
		}
		return selectProb(prob, 1-prob, cdf)
	}
	if t >= fn-1 { // Ruben–Gambino.
		prob := 2 * math.Pow(1-x, fn)
		return selectProb(1-prob, prob, cdf)
	}
	if x >= 0.5 {
		prob := 2 * SmirnovSF(n, x)
		return selectProb(1-prob, prob, cdf)
	}
	nxsq := t * x
	if n <= 140 {
		if nxsq <= 0.754693 {
			prob := kolmognDurbin(n, x)
			return selectProb(prob, 1-prob, cdf)
		}
		if nxsq <= 4 {
			prob := kolmognPomeranz(n, x)
			return selectProb(prob, 1-prob, cdf)
		}
		prob := 2 * SmirnovSF(n, x)
		return selectProb(1-prob, prob, cdf)
	}
	if !cdf {
		if nxsq >= 370 {
			return 0
		}
		if nxsq >= 2.2 {
			return clamp01(2 * SmirnovSF(n, x))
		}
	}
	var cdfProb float64
	switch {
	case nxsq >= 18:
		cdfProb = 1
	case n <= 100000 && fn*math.Pow(x, 1.5) <= 1.4:
		cdfProb = kolmognDurbin(n, x)
	default:
		cdfProb = kolmognPelzGood(n, x)
	}
	return selectProb(cdfProb, 1-cdfProb, cdf)
}

// stirlingCoeffs are B_{2j}/(2j)/(2j-1) for j = 8, …, 1 (B: Bernoulli numbers).
var stirlingCoeffs = [...]float64{-2.955065359477124183e-2, 6.4102564102564102564e-3,
	-1.9175269175269175269e-3, 8.4175084175084175084e-4,
	-5.952380952380952381e-4, 7.9365079365079365079e-4,
	-2.7777777777777777778e-3, 8.3333333333333333333e-2}

// logNFactorialDivNPowN returns log(n!/n^n) by Stirling's series with
// n·log(n) removed up front to avoid cancellation.
func logNFactorialDivNPowN(n float64) float64 {
	rn := 1 / n
	z := rn / n
	poly := 0.0
	for _, c := range stirlingCoeffs {
		poly = poly*z + c
	}
	return math.Log(n)/2 - n + math.Log(2*math.Pi)/2 + rn*poly
}

// kolmognDurbin returns P(D_n ≤ d) by Durbin's matrix algorithm as given by
// Marsaglia, Tsang and Wang (2003): the k-th diagonal entry of
// (n!/n^n)·H^n, with H of order 2k-1, d = (k-h)/n.
func kolmognDurbin(n int, d float64) float64 {
	if d >= 1 {
		return 1
	}
	fn := float64(n)
	nd := fn * d
	if nd <= 0.5 {
		return 0
	}
	k := int(math.Ceil(nd))
	h := float64(k) - nd
	m := 2*k - 1

	hm := make([]float64, m*m)
	v := make([]float64, m)
	w := make([]float64, m)
	fac := 1.0
	for j := 1; j <= m; j++ {
		w[j-1] = fac
		fac /= float64(j)
		v[j-1] = (1 - math.Pow(h, float64(j))) * fac
	}
	tt := math.Pow(math.Max(2*h-1, 0), float64(m)) - 2*math.Pow(h, float64(m))
	v[m-1] = (1 + tt) * fac
	for i := 1; i < m; i++ {
		for r := i - 1; r < m; r++ {
			hm[r*m+i] = w[r-(i-1)]
		}
	}
	for r := 0; r < m; r++ {
		hm[r*m] = v[r]
	}
	for c := 0; c < m; c++ {
		hm[(m-1)*m+c] = v[m-1-c]
	}

	pw := make([]float64, m*m) // H's accumulated power
	for i := 0; i < m; i++ {
		pw[i*m+i] = 1
	}
	tmp := make([]float64, m*m)
	expnt, hExpnt := 0, 0
	for nn := n; nn > 0; nn /= 2 {
		if nn%2 == 1 {
			matMul(tmp, pw, hm, m)
			pw, tmp = tmp, pw
			expnt += hExpnt
		}
		matMul(tmp, hm, hm, m)
		hm, tmp = tmp, hm
		hExpnt *= 2
		if math.Abs(hm[(k-1)*m+k-1]) > scale128 {
			for i := range hm {
				hm[i] *= scaleM128
			}
			hExpnt += scale128exp
		}
	}
	p := pw[(k-1)*m+k-1]
	for i := 1; i <= n; i++ {
		p = float64(i) * p / fn
		if math.Abs(p) < scaleM128 {
			p *= scale128
			expnt -= scale128exp
		}
	}
	if expnt != 0 {
		p = math.Ldexp(p, expnt)
	}
	return clamp01(p)
}

// matMul sets dst = a·b for m×m row-major matrices.
func matMul(dst, a, b []float64, m int) {
	clear(dst)
	for i := 0; i < m; i++ {
		row := dst[i*m : (i+1)*m]
		for l := 0; l < m; l++ {
			ail := a[i*m+l]
			if ail == 0 {
				continue
			}
			brow := b[l*m : (l+1)*m]
			for j, bv := range brow {
				row[j] += ail * bv
			}
		}
	}
}

func pomeranzJ1J2(i, n, ll, ceilf, roundf int) (int, int) {
	var j1, j2 int
	if i == 0 {
		j1, j2 = -ll-ceilf-1, ll+ceilf-1
	} else {
		ip1div2, ip1mod2 := (i+1)/2, (i+1)%2
		if ip1mod2 == 0 {
			if ip1div2 == n+1 {
				j1, j2 = n-ll-ceilf-1, n+ll+ceilf-1
			} else {
				j1, j2 = ip1div2-1-ll-roundf-1, ip1div2+ll-1+ceilf-1
			}
		} else {
			j1, j2 = ip1div2-1-ll-1, ip1div2+ll+roundf-1
		}
	}
	return max(j1+2, 0), min(j2, n)
}

// kolmognPomeranz returns P(D_n ≤ x) by Pomeranz's (1974) recursion: each
// row is the previous one convolved with truncated Poisson weights.
func kolmognPomeranz(n int, x float64) float64 {
	fn := float64(n)
	t := fn * x
	ll := int(math.Floor(t))
	f := t - float64(ll)
	g := math.Min(f, 1-f)
	ceilf, roundf := 0, 0
	if f > 0 {
		ceilf = 1
	}
	if f > 0.5 {
		roundf = 1
	}
	npwrs := 2 * (ll + 1)
	gpower := make([]float64, npwrs)
	twogpower := make([]float64, npwrs)
	onem2gpower := make([]float64, npwrs)
	gpower[0], twogpower[0], onem2gpower[0] = 1, 1, 1
	gn, tgn, omtgn := g/fn, 2*g/fn, (1-2*g)/fn
	for m := 1; m < npwrs; m++ {
		gpower[m] = gpower[m-1] * gn / float64(m)
		twogpower[m] = twogpower[m-1] * tgn / float64(m)
		onem2gpower[m] = onem2gpower[m-1] * omtgn / float64(m)
	}
	v0 := make([]float64, npwrs)
	v1 := make([]float64, npwrs)
	v1[0] = 1
	v0s, v1s := 0, 0
	expnt := 0
	j1, _ := pomeranzJ1J2(0, n, ll, ceilf, roundf)
	var j2 int
	for i := 1; i < 2*n+2; i++ {
		k1 := j1
		v0, v1 = v1, v0
		v0s, v1s = v1s, v0s
		clear(v1)
		j1, j2 = pomeranzJ1J2(i, n, ll, ceilf, roundf)
		var pwrs []float64
		switch {
		case i == 1 || i == 2*n+1:
			pwrs = gpower
		case i%2 == 1:
			pwrs = twogpower
		default:
			pwrs = onem2gpower
		}
		ln2 := j2 - k1 + 1
		if ln2 > 0 {
			src := v0[k1-v0s : k1-v0s+ln2]
			convStart := j1 - k1
			convLen := j2 - j1 + 1
			// V1[c] = conv(src, pwrs[:ln2])[convStart+c].
			maxv := 0.0
			for c := 0; c < convLen; c++ {
				idx := convStart + c
				s := 0.0
				lo := max(0, idx-(ln2-1))
				for a := lo; a <= idx && a < ln2; a++ {
					s += src[a] * pwrs[idx-a]
				}
				v1[c] = s
				maxv = math.Max(maxv, s)
			}
			if maxv > 0 && maxv < scaleM128 {
				for c := range v1 {
					v1[c] *= scale128
				}
				expnt -= scale128exp
			}
			v1s = v0s + j1 - k1
		}
	}
	ans := v1[n-v1s]
	for m := 1; m <= n; m++ {
		if math.Abs(ans) > scale128 {
			ans *= scaleM128
			expnt += scale128exp
		}
		ans *= float64(m)
	}
	if expnt != 0 {
		ans = math.Ldexp(ans, expnt)
	}
	return clamp01(ans)
}

// kolmognPelzGood returns the Pelz–Good (1976) approximation of
// P(D_n ≤ x): the Li-Chien/Korolyuk expansion K0 + K1/√n + K2/n + K3/n^1.5
// transformed with Jacobi theta identities so that it is accurate for small
// z = x·√n.
func kolmognPelzGood(n int, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	const (
		pi2 = math.Pi * math.Pi
		pi4 = pi2 * pi2
		pi6 = pi4 * pi2
	)
	fn := float64(n)
	z := math.Sqrt(fn) * x
	z2, z3, z4, z6 := z*z, z*z*z, z*z*z*z, math.Pow(z, 6)
	qlog := -pi2 / 8 / z2
	if qlog < -708 {
		return 0
	}
	q := math.Exp(qlog)

	k1a := -z2
	k1b := pi2 / 4
	k2a := 6*z6 + 2*z4
	k2b := (2*z4 - 5*z2) * pi2 / 4
	k2c := pi4 * (1 - 2*z2) / 16
	k3d := pi6 * (5 - 30*z2) / 64
	k3c := pi4 * (-60*z2 + 212*z4) / 16
	k3b := pi2 * (135*z4 - 96*z6) / 4
	k3a := -30*z6 - 90*math.Pow(z, 8)

	var kk [4]float64
	maxk := int(math.Ceil(16 * z / math.Pi))
	for k := maxk; k > 0; k-- {
		m := float64(2*k - 1)
		m2 := m * m
		m4 := m2 * m2
		m6 := m4 * m2
		qp := math.Pow(q, float64(8*k))
		c := [4]float64{1, k1a + k1b*m2, k2a + k2b*m2 + k2c*m4, k3a + k3b*m2 + k3c*m4 + k3d*m6}
		for i := range kk {
			kk[i] = kk[i]*qp + c[i]
		}
	}
	sq2pi := math.Sqrt(2 * math.Pi)
	div := [4]float64{z, 6 * z4, 72 * math.Pow(z, 7), 6480 * math.Pow(z, 10)}
	for i := range kk {
		kk[i] = kk[i] * q * sq2pi / div[i]
	}
	q = math.Exp(-pi2 / 2 / z2)
	sqrt3z := math.Sqrt(3) * z
	var k2extra, k3extra float64
	for k := maxk; k > 0; k-- {
		fk := float64(k)
		ksq := fk * fk
		qp := math.Pow(q, ksq)
		kspi := math.Pi * fk
		k2extra += ksq * qp
		k3extra += (sqrt3z + kspi) * (sqrt3z - kspi) * ksq * qp
	}
	kk[2] += k2extra * pi2 * sq2pi / (-36 * z3)
	kk[3] += k3extra * pi2 * sq2pi / (216 * z6)
	sum := 0.0
	for i := range kk {
		sum += kk[i] / math.Pow(fn, float64(i)/2)
	}
	return sum
}
