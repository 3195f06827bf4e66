package rank

import (
	"errors"
	"math"
)

// ErrEmpty: a sample of a pair has no (non-NaN) value.
var ErrEmpty = errors.New("empty sample")

// Alternative is stats.Alternative, with the same values.
type Alternative int

// The alternatives, as stats.TwoSided, stats.Less and stats.Greater.
const (
	TwoSided Alternative = iota
	Less
	Greater
)

// Method is stats.KSMethod, with the same values.
type Method int

// The p-value methods, as stats.Auto, stats.Exact and stats.Asymp.
const (
	Auto Method = iota
	Exact
	Asymp
)

// ksMaxAutoN is SciPy's MAX_AUTO_N: Auto is exact up to this sample size.
const ksMaxAutoN = 10000

// Result is stats.KSResult.
type Result struct {
	// Statistic is the KS statistic D; PValue its p-value under the null.
	Statistic, PValue float64
	// Location is the observation (from x or y) at which the empirical
	// distribution functions are farthest apart in the tested direction.
	Location float64
	// Sign is +1 if x's empirical distribution function exceeds y's at
	// Location and -1 otherwise (SciPy's statistic_sign).
	Sign int
	// Method is the method actually used for PValue (Exact or Asymp).
	Method Method
}

// SortedKeys returns the sorted order-preserving keys (see Key) of the
// non-NaN values of x, with -0 mapped to +0 so that the two zeros tie as
// they do in floating-point comparison.
func SortedKeys(x []float64) []uint64 {
	keys := make([]uint64, 0, len(x))
	for _, v := range x {
		if v == v {
			keys = append(keys, Key(v+0)) // -0 + 0 = +0
		}
	}
	Keys(keys)
	return keys
}

// TwoSample is stats.KS2Samp on the sorted keys of two non-empty samples
// (see SortedKeys).
func TwoSample(xs, ys []uint64, alt Alternative, method Method) Result {
	return ks2Samp(ksExtremes(xs, ys, KeyFloat), len(xs), len(ys), alt, method)
}

// ks2Samp turns the extremes of F_x - F_y into SciPy's statistic, location,
// sign and p-value.
func ks2Samp(ext ksExt, n1, n2 int, alt Alternative, method Method) Result {
	var (
		d    float64
		hNum int64 // n1·n2·D as an integer
		res  Result
	)
	// SciPy: minS = clip(-min, 0, 1).
	minS := math.Min(math.Max(-ext.minF, 0), 1)
	if alt == Less || (alt == TwoSided && minS > ext.maxF) {
		d, hNum = minS, max(-ext.minI, 0)
		res.Location, res.Sign = ext.minLoc, -1
	} else {
		d, hNum = ext.maxF, ext.maxI
		res.Location, res.Sign = ext.maxLoc, 1
	}

	g := gcd(n1, n2)
	n1g, n2g := n1/g, n2/g
	mode := method
	switch method {
	case Auto:
		mode = Exact
		if max(n1, n2) > ksMaxAutoN {
			mode = Asymp
		}
	case Exact:
		if float64(n1g) >= float64(math.MaxInt32)/float64(n2g) {
			mode = Asymp
		}
	}
	prob := math.Inf(-1)
	if mode == Exact {
		// h/lcm with lcm = n1·n2/g: h = (n1·n2·D)/g.
		lcm := int64(n1g) * int64(n2)
		h := hNum / int64(g)
		d = float64(h) / float64(lcm)
		var ok bool
		prob, ok = ksExactProb(n1, n2, g, int(h), alt)
		if !ok {
			mode = Asymp
		}
	}
	if mode == Asymp {
		m, n := float64(max(n1, n2)), float64(min(n1, n2))
		en := m * n / (m + n)
		if alt == TwoSided {
			// SciPy rounds half to even, so n1 = n2 = 1 gives n = 0 and a
			// NaN p-value there; we use n ≥ 1 so the p-value is always defined.
			prob = KolmogorovSF(max(1, int(math.RoundToEven(en))), d)
		} else {
			z := math.Sqrt(en) * d
			expt := -2*z*z - 2*z*(m+2*n)/math.Sqrt(m*n*(m+n))/3
			prob = math.Exp(expt)
		}
	}
	res.Statistic = d
	res.PValue = clamp01(prob)
	res.Method = mode
	return res
}

// ksExt holds the extremes of F_x - F_y over the pooled sample, both as
// SciPy's floating-point differences and as integers in units of 1/(n1·n2).
type ksExt struct {
	maxF, minF     float64
	maxI, minI     int64
	maxLoc, minLoc float64
}

// ksExtremes walks the two sorted samples once. It reproduces SciPy's
// argmax/argmin over concatenate([x, y]): among equal extreme values the
// first pooled element wins, so a value from x is preferred to one from y
// and smaller values to larger ones.
func ksExtremes[T uint64 | float64](x, y []T, toFloat func(T) float64) ksExt {
	n1, n2 := len(x), len(y)
	t := newKSTracker[T](n1, n2)
	i, j := 0, 0
	for i < n1 || j < n2 {
		var v T
		switch {
		case j >= n2:
			v = x[i]
		case i >= n1:
			v = y[j]
		default:
			v = min(x[i], y[j])
		}
		inX, inY := false, false
		for i < n1 && x[i] == v {
			i++
			inX = true
		}
		for j < n2 && y[j] == v {
			j++
			inY = true
		}
		// searchsorted(side='right') counts: i and j.
		t.visit(v, i, j, inX, inY)
	}
	return t.extremes(toFloat)
}

// ksTracker follows the extremes of F_x - F_y over distinct pooled values
// visited in increasing order, with SciPy's choice of location (see
// ksExtremes). Values where neither extreme is attained may be left out:
// the result is the same as long as every value whose difference equals
// (in floating point) the final maximum or minimum is visited.
type ksTracker[T uint64 | float64] struct {
	e        ksExt
	fn1, fn2 float64
	n1, n2   int64
	// Candidate locations: the first x-value and the first y-value
	// attaining the current extreme.
	maxLocX, maxLocY, minLocX, minLocY T
	maxHasX, maxHasY, minHasX, minHasY bool
}

func newKSTracker[T uint64 | float64](n1, n2 int) ksTracker[T] {
	return ksTracker[T]{e: ksExt{maxF: math.Inf(-1), minF: math.Inf(1)},
		fn1: float64(n1), fn2: float64(n2), n1: int64(n1), n2: int64(n2)}
}

// visit records value v, at which i values of x and j of y are ≤ v (the
// searchsorted(side='right') counts); inX and inY say whether v occurs in
// x and in y.
func (t *ksTracker[T]) visit(v T, i, j int, inX, inY bool) {
	f := float64(i)/t.fn1 - float64(j)/t.fn2
	if f > t.e.maxF {
		t.e.maxF = f
		t.e.maxI = int64(i)*t.n2 - int64(j)*t.n1
		t.maxHasX, t.maxHasY = false, false
	}
	if f == t.e.maxF {
		if inX && !t.maxHasX {
			t.maxHasX, t.maxLocX = true, v
		}
		if inY && !t.maxHasY {
			t.maxHasY, t.maxLocY = true, v
		}
	}
	if f < t.e.minF {
		t.e.minF = f
		t.e.minI = int64(i)*t.n2 - int64(j)*t.n1
		t.minHasX, t.minHasY = false, false
	}
	if f == t.e.minF {
		if inX && !t.minHasX {
			t.minHasX, t.minLocX = true, v
		}
		if inY && !t.minHasY {
			t.minHasY, t.minLocY = true, v
		}
	}
}

// extremes returns the extremes and their locations.
func (t *ksTracker[T]) extremes(toFloat func(T) float64) ksExt {
	e := t.e
	e.maxLoc = toFloat(t.maxLocY)
	if t.maxHasX {
		e.maxLoc = toFloat(t.maxLocX)
	}
	e.minLoc = toFloat(t.minLocY)
	if t.minHasX {
		e.minLoc = toFloat(t.minLocX)
	}
	return e
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ksExactProb returns SciPy's exact p-value for D = h/lcm(n1, n2) and
// whether it could be computed (SciPy's _attempt_exact_2kssamp).
func ksExactProb(n1, n2, g, h int, alt Alternative) (float64, bool) {
	if h == 0 {
		return 1, true
	}
	var prob float64
	if alt == TwoSided {
		if n1 == n2 {
			prob = probOutsideSquare(n1, h)
		} else {
			prob = outerProbInside(n1, n2, g, h)
		}
	} else {
		if n1 == n2 {
			// binom(2n, n-h)/binom(2n, n) as a product.
			prob = 1
			for j := 0; j < h; j++ {
				prob *= float64(n1-j) / (float64(n1) + float64(j) + 1)
			}
		} else {
			paths, ok := countPathsOutside(n1, n2, g, h)
			if !ok {
				return math.NaN(), false
			}
			bin := binom(float64(n1+n2), float64(n1))
			if paths > bin || math.IsInf(bin, 0) {
				return math.NaN(), false
			}
			prob = paths / bin
		}
	}
	if !(prob >= 0 && prob <= 1) {
		return prob, false
	}
	return prob, true
}

// probOutsideSquare returns P(D_{n,n} ≥ h/n), the proportion of lattice
// paths leaving the band |x-y| < h:
//
//	2·(C(2n,n-h) - C(2n,n-2h) + C(2n,n-3h) - …)/C(2n,n),
//
// evaluated in Horner form to avoid cancellation.
func probOutsideSquare(n, h int) float64 {
	p := 0.0
	for k := n / h; k >= 0; k-- {
		p1 := 1.0
		for j := 0; j < h; j++ {
			p1 = float64(n-k*h-j) * p1 / float64(n+k*h+j+1)
		}
		p = p1 * (1 - p)
	}
	return 2 * p
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ceilDiv returns ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int64) int64 {
	return -floorDiv(-a, b)
}

// outerProbInside returns the proportion of lattice paths from (0,0) to
// (m,n) that do not stay strictly inside |x/m - y/n| < h/lcm(m,n): Hodges'
// inside method with Viehmann's (2021) recursion for the complement, keeping
// one sliding column.
func outerProbInside(m, n, g, h int) float64 {
	if m < n {
		m, n = n, m
	}
	mg, ng := int64(m/g), int64(n/g)
	hh := int64(h)
	minj, maxj := int64(0), min(ceilDiv(hh, mg), int64(n)+1)
	curlen := maxj - minj
	lenA := min(2*maxj+2, int64(n)+1)
	a := make([]float64, lenA)
	for i := range a {
		a[i] = 1
	}
	for i := minj; i < maxj; i++ {
		a[i] = 0
	}
	recip := make([]float64, m+n+1)
	for k := 1; k < len(recip); k++ {
		recip[k] = 1 / float64(k)
	}
	for i := int64(1); i <= int64(m); i++ {
		lastminj, lastlen := minj, curlen
		minj = max(floorDiv(ng*i-hh, mg)+1, 0)
		minj = min(minj, int64(n))
		maxj = min(ceilDiv(ng*i+hh, mg), int64(n)+1)
		if maxj <= minj {
			return 1
		}
		val := 1.0
		if minj == 0 {
			val = 0
		}
		fi := float64(i)
		off := minj - lastminj
		// recip[i+j] = 1/(i+j) turns the division of the recursion into a
		// multiplication (one more rounding per step, well below the
		// tolerance of the exact method).
		src := a[off : off+maxj-minj]
		rc := recip[i+minj : i+maxj]
		for jj := range src {
			j := float64(int64(jj) + minj)
			val = (src[jj]*fi + val*j) * rc[jj]
			a[jj] = val
		}
		curlen = maxj - minj
		if lastlen > curlen {
			for k := maxj - minj; k < maxj-minj+(lastlen-curlen) && k < lenA; k++ {
				a[k] = 1
			}
		}
	}
	return a[maxj-minj-1]
}

// countPathsOutside returns the number of lattice paths from (0,0) to (m,n)
// that reach m·y ≤ n·x - h·g somewhere (Hodges 1958), and false when the
// count overflows float64.
func countPathsOutside(m, n, g, h int) (float64, bool) {
	if m < n {
		m, n = n, m
	}
	mg, ng := m/g, n/g
	lxj := n + (mg-h)/mg
	if (mg-h)%mg != 0 && mg-h < 0 {
		lxj-- // Python's floor division
	}
	if lxj <= 0 {
		b := binom(float64(m+n), float64(n))
		return b, !math.IsInf(b, 0)
	}
	xj := make([]int, lxj)
	for j := range xj {
		xj[j] = int(ceilDiv(int64(h)+int64(mg)*int64(j), int64(ng)))
	}
	b := make([]float64, lxj)
	b[0] = 1
	for j := 1; j < lxj; j++ {
		bj := binom(float64(xj[j]+j), float64(j))
		for i := 0; i < j; i++ {
			bj -= binom(float64(xj[j]-xj[i]+j-i), float64(j-i)) * b[i]
		}
		if math.IsInf(bj, 0) || math.IsNaN(bj) {
			return bj, false
		}
		b[j] = bj
	}
	var paths float64
	for j := 0; j < lxj; j++ {
		paths += b[j] * binom(float64(m-xj[j]+n-j), float64(n-j))
		if math.IsInf(paths, 0) || math.IsNaN(paths) {
			return paths, false
		}
	}
	return paths, true
}

// binom returns the binomial coefficient C(n, k) for integers 0 ≤ k ≤ n,
// exactly by products for small k (as Cephes does) and through log-gamma
// otherwise; +Inf when it overflows.
func binom(n, k float64) float64 {
	if k < 0 || k > n {
		return 0
	}
	if k > n/2 {
		k = n - k
	}
	if k < 20 {
		num, den := 1.0, 1.0
		for i := 1.0; i <= k; i++ {
			num *= i + n - k
			den *= i
			if math.Abs(num) > 1e50 {
				num /= den
				den = 1
			}
		}
		return num / den
	}
	ln, _ := math.Lgamma(n + 1)
	lk, _ := math.Lgamma(k + 1)
	lnk, _ := math.Lgamma(n - k + 1)
	return math.Exp(ln - lk - lnk)
}
