package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// curveTolRound is for results that are exact in real arithmetic and only
// see float64 rounding (logs and exps of a few dozen points).
const curveTolRound = 1e-12

func curveWantPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", name)
		}
	}()
	f()
}

func curveWantErr(t *testing.T, err, sentinel error, index int) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want %v", err, sentinel)
	}
	var ce *CurveError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not a *CurveError", err)
	}
	if ce.Index != index {
		t.Errorf("error index %d, want %d (%v)", ce.Index, index, err)
	}
}

func curveEpochs(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i + 1)
	}
	return x
}

func TestFitPowerLawExact(t *testing.T) {
	x := curveEpochs(40)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 2.5 * math.Pow(v, -0.6)
	}
	got, err := FitPowerLaw(x, y)
	if err != nil {
		t.Fatal(err)
	}
	want := PowerLaw{A: 2.5, B: -0.6, R2: 1}
	if d := cmp.Diff(want, got, curveApprox(curveTolRound)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if a := got.At(4); math.Abs(a-2.5*math.Pow(4, -0.6)) > curveTolRound {
		t.Errorf("At(4) = %v", a)
	}
}

func TestFitPowerLawRobust(t *testing.T) {
	// A single corrupted point drags OLS; the Huber fit stays near B.
	x := curveEpochs(30)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 3 * math.Pow(v, -0.5) * (1 + 0.002*math.Sin(float64(i)))
	}
	y[25] *= 20
	got, err := FitPowerLaw(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Robust {
		t.Fatalf("outlier did not trigger the robust fit: %+v", got)
	}
	lx := make([]float64, len(x))
	ly := make([]float64, len(x))
	for i := range x {
		lx[i], ly[i] = math.Log(x[i]), math.Log(y[i])
	}
	aOLS, bOLS, _ := curveOLS(lx, ly, nil)
	// curveTolRobustB: the Huber fit leaves the outlier a bounded pull;
	// with the ±0.2% wiggle it recovers B to about 1%.
	const curveTolRobustB = 0.01
	if math.Abs(got.B+0.5) > curveTolRobustB || math.Abs(got.B+0.5) >= math.Abs(bOLS+0.5) {
		t.Errorf("robust B = %v, OLS B = %v, true -0.5", got.B, bOLS)
	}
	// R2 is the unweighted log-space R² of the robust line, which OLS
	// maximises: the fallback cannot raise it.
	if d := got.R2 - curveR2(lx, ly, math.Log(got.A), got.B); math.Abs(d) > curveTolRound {
		t.Errorf("R2 %v is not the unweighted log-space R2 (off by %v)", got.R2, d)
	}
	if olsR2 := curveR2(lx, ly, aOLS, bOLS); got.R2 > olsR2 {
		t.Errorf("robust R2 %v above the OLS R2 %v", got.R2, olsR2)
	}
}

func TestFitPowerLawErrors(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name     string
		x, y     []float64
		sentinel error
		index    int
	}{
		{"empty", nil, nil, ErrEmpty, -1},
		{"two", []float64{1, 2}, []float64{1, 2}, ErrEmpty, -1},
		{"nan_y", []float64{1, 2, 3}, []float64{1, nan, 3}, ErrNaN, 1},
		{"inf_x", []float64{1, 2, math.Inf(1)}, []float64{1, 2, 3}, ErrNaN, 2},
		{"zero_y", []float64{1, 2, 3}, []float64{1, 0, 3}, ErrCurveNonPositive, 1},
		{"negative_x", []float64{-1, 2, 3}, []float64{1, 2, 3}, ErrCurveNonPositive, 0},
		{"constant_x", []float64{2, 2, 2}, []float64{1, 2, 3}, ErrCurveDegenerate, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitPowerLaw(tc.x, tc.y)
			curveWantErr(t, err, tc.sentinel, tc.index)
		})
	}
	curveWantPanic(t, "FitPowerLaw length mismatch", func() { FitPowerLaw([]float64{1, 2, 3}, []float64{1, 2}) })
}

func TestSlope(t *testing.T) {
	x := curveEpochs(20)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 7 - 0.25*v
		if v > 15 {
			y[i] = math.NaN() // outside the window: ignored
		}
	}
	y0 := slices.Clone(y)
	got, err := Slope(x, y, 5, 15)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got+0.25) > curveTolRound {
		t.Errorf("Slope = %v, want -0.25", got)
	}
	curveUnchanged(t, "Slope", y0, y)
	_, err = Slope(x, y, 5, 16)
	curveWantErr(t, err, ErrNaN, 15)
	_, err = Slope(x, y, 5.5, 5.9)
	curveWantErr(t, err, ErrEmpty, -1)
	_, err = Slope([]float64{1, 1, 1}, []float64{1, 2, 3}, 0, 2)
	curveWantErr(t, err, ErrCurveDegenerate, -1)
	curveWantPanic(t, "Slope lo > hi", func() { Slope(x, y, 3, 2) })
	curveWantPanic(t, "Slope NaN bound", func() { Slope(x, y, math.NaN(), 2) })
	curveWantPanic(t, "Slope length mismatch", func() { Slope(x, y[:3], 0, 1) })
}

func TestBurnIn(t *testing.T) {
	tests := []struct {
		name string
		y    []float64
		thr  float64
		want int
	}{
		{"empty", nil, 1, -1},
		{"first", []float64{0.5, 2}, 1, 0},
		{"equal_counts", []float64{3, 2, 1, 0.5}, 1, 2},
		{"nan_skipped", []float64{3, math.NaN(), 0.9}, 1, 2},
		{"never", []float64{3, 2, 1.5}, 1, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := BurnIn(tc.y, tc.thr); got != tc.want {
				t.Errorf("BurnIn = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFitExponentialExact(t *testing.T) {
	tests := []struct {
		name string
		want Exponential
	}{
		{"decay", Exponential{A: 2, B: 0.2, C: 0.5, R2: 1}},
		{"rising", Exponential{A: -0.7, B: 0.1, C: 0.95, R2: 1}},
		{"growth", Exponential{A: 0.3, B: -0.05, C: 1, R2: 1}},
	}
	// curveTolExpExact: noise-free data, so only the golden-section
	// location of the rate (≈1e-8 relative in a flat valley) limits it.
	const curveTolExpExact = 1e-6
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := curveEpochs(40)
			y := make([]float64, len(x))
			for i, v := range x {
				y[i] = tc.want.At(v)
			}
			y0 := slices.Clone(y)
			got, err := FitExponential(x, y)
			if err != nil {
				t.Fatal(err)
			}
			curveUnchanged(t, "FitExponential", y0, y)
			if d := cmp.Diff(tc.want, got, curveApprox(curveTolExpExact)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	_, err := FitExponential([]float64{1, 2, 3}, []float64{1, 2, 3})
	curveWantErr(t, err, ErrEmpty, -1)
	_, err = FitExponential([]float64{1, 2, 3, 4}, []float64{1, 2, math.NaN(), 3})
	curveWantErr(t, err, ErrNaN, 2)
	_, err = FitExponential([]float64{1, 1, 1, 1}, []float64{1, 2, 3, 3})
	curveWantErr(t, err, ErrCurveDegenerate, -1)
}

func TestKneeAIC(t *testing.T) {
	x := curveEpochs(40)
	y := make([]float64, len(x))
	for i, v := range x {
		if v < 12 {
			y[i] = 1.5*math.Exp(-0.3*(v-12)) + 0.5
		} else {
			y[i] = 2 * math.Pow(v/12, -1.2)
		}
	}
	y0 := slices.Clone(y)
	k, err := KneeAIC(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	curveUnchanged(t, "KneeAIC", y0, y)
	// The curve becomes a power law at index 11 (x = 12); tails starting
	// a little earlier still favour the power law once the exponential
	// part is too short to pay for the third parameter.
	if k < 8 || k > 11 {
		t.Errorf("KneeAIC = %d, want the switch near index 11", k)
	}
	k0, _ := KneeAIC(x, y, 0)
	if k0 != k {
		t.Errorf("minDelta 0 gives %d, default 2 gives %d", k0, k)
	}
	// A stricter threshold can only move the knee later.
	prev := k
	for _, d := range []float64{5, 20, 80} {
		kd, err := KneeAIC(x, y, d)
		if err != nil {
			t.Fatal(err)
		}
		if kd != -1 && kd < prev {
			t.Errorf("KneeAIC(delta=%v) = %d before %d", d, kd, prev)
		}
		if kd != -1 {
			prev = kd
		}
	}
	// A pure exponential never switches.
	for i, v := range x {
		y[i] = 2*math.Exp(-0.2*v) + 0.5
	}
	if k, err := KneeAIC(x, y, 2); err != nil || k != -1 {
		t.Errorf("pure exponential: KneeAIC = %d, %v; want -1", k, err)
	}
	_, err = KneeAIC(x[:5], y[:5], 2)
	curveWantErr(t, err, ErrEmpty, -1)
	bad := slices.Clone(x)
	bad[7] = bad[6]
	_, err = KneeAIC(bad, y, 2)
	curveWantErr(t, err, ErrCurveDegenerate, 7)
	neg := slices.Clone(y)
	neg[3] = -1
	_, err = KneeAIC(x, neg, 2)
	curveWantErr(t, err, ErrCurveNonPositive, 3)
	curveWantPanic(t, "KneeAIC NaN delta", func() { KneeAIC(x, y, math.NaN()) })
}

func TestCorrelationEdges(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	y := []float64{2, 1, 4, 3, 7, 5}
	// Spearman is invariant under a monotone transform of either input.
	ey := make([]float64, len(y))
	for i, v := range y {
		ey[i] = math.Exp(v)
	}
	r1, p1, _ := Spearman(x, y)
	r2, p2, _ := Spearman(x, ey)
	if r1 != r2 || p1 != p2 {
		t.Errorf("Spearman changed under exp: %v,%v vs %v,%v", r1, p1, r2, p2)
	}
	// Pearson is symmetric.
	a, pa, _ := Pearson(x, y)
	b, pb, _ := Pearson(y, x)
	if math.Abs(a-b) > curveTolRound || math.Abs(pa-pb) > curveTolRound {
		t.Errorf("Pearson not symmetric: %v,%v vs %v,%v", a, pa, b, pb)
	}
	_, _, err := Pearson([]float64{1}, []float64{2})
	curveWantErr(t, err, ErrEmpty, -1)
	_, _, err = Spearman([]float64{1, 2}, []float64{2, 1})
	curveWantErr(t, err, ErrEmpty, -1)
	_, _, err = Pearson([]float64{1, 2, 3}, []float64{2, 2, 2})
	curveWantErr(t, err, ErrCurveDegenerate, -1)
	_, _, err = Spearman([]float64{1, 1, 1}, []float64{1, 2, 3})
	curveWantErr(t, err, ErrCurveDegenerate, -1)
	_, _, err = Spearman([]float64{1, 2, 3}, []float64{1, math.NaN(), 3})
	curveWantErr(t, err, ErrNaN, 1)
	curveWantPanic(t, "Pearson length", func() { Pearson(x, y[:2]) })
	curveWantPanic(t, "Spearman length", func() { Spearman(x, y[:2]) })
}

func TestPowerLawSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for n := 1; n < 40; n++ {
		for range 20 {
			a := make([]float64, n)
			for i := range a {
				a[i] = float64(rng.IntN(6)) // many ties
			}
			sorted := slices.Sorted(slices.Values(a))
			k := rng.IntN(n)
			if got := powerLawSelect(a, k); got != sorted[k] {
				t.Fatalf("select(%d) of %v = %v, want %v", k, sorted, got, sorted[k])
			}
			for i := range k {
				if a[i] > a[k] {
					t.Fatalf("a[%d] = %v > a[k] = %v", i, a[i], a[k])
				}
			}
			want := sorted[n/2]
			if n%2 == 0 {
				want = (sorted[n/2-1] + sorted[n/2]) / 2
			}
			if got := powerLawMADScale(a, make([]float64, n)) * curveMADNormal; got != want {
				t.Fatalf("median of %v = %v, want %v", sorted, got, want)
			}
		}
	}
}

func TestCorrelationExtremeScale(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	y := []float64{2, 1, 4, 3, 5}
	want, _, _ := Pearson(x, y)
	for _, f := range []float64{1e300, 1e-300, 1e-310} {
		sx := make([]float64, len(x))
		for i := range x {
			sx[i] = x[i] * f
		}
		got, p, err := Pearson(sx, y)
		if err != nil || math.Abs(got-want) > 1e-12 || !(p >= 0 && p <= 1) {
			t.Errorf("scale %g: r = %v, p = %v, %v; want r = %v", f, got, p, err, want)
		}
	}
}

// kneeAICBrute is KneeAIC without the previous-rate shortcut: a full
// exponential fit on every tail.
func kneeAICBrute(x, y []float64, delta float64) int {
	z := make([]float64, len(x))
	for i := 0; len(x)-i >= kneeAICMinPoints; i++ {
		tx, ty := x[i:], y[i:]
		m := float64(len(tx))
		lx := make([]float64, len(tx))
		ly := make([]float64, len(tx))
		var ss float64
		for j := range tx {
			lx[j], ly[j] = math.Log(tx[j]), math.Log(ty[j])
			ss += ty[j] * ty[j]
		}
		a, b, _ := curveOLS(lx, ly, nil)
		var rssPow float64
		for j := range tx {
			r := ty[j] - math.Exp(a)*math.Pow(tx[j], b)
			rssPow += r * r
		}
		_, rssExp, ok := expFit(tx, ty, z[:len(tx)])
		if !ok {
			continue
		}
		floor := ss * 0x1p-104
		if (m*math.Log(math.Max(rssExp, floor)/m)+6)-(m*math.Log(math.Max(rssPow, floor)/m)+4) >= delta {
			return i
		}
	}
	return -1
}

func TestKneeAICShortcut(t *testing.T) {
	// Mixed exponential/power-law curves with noise: the shortcut must
	// reach the same index as fitting every tail.
	rng := rand.New(rand.NewPCG(21, 22))
	inner := 0
	for trial := range 40 {
		n := 20 + rng.IntN(60)
		sw := n/4 + rng.IntN(n/4)
		x := curveEpochs(n)
		y := make([]float64, n)
		s := float64(sw)
		for i, v := range x {
			if v < s {
				y[i] = 1.5*math.Exp(-0.3*(v-s)) + 0.5
			} else {
				y[i] = 2 * math.Pow(v/s, -0.2-rng.Float64())
			}
			y[i] *= math.Exp(0.02 * rng.NormFloat64())
		}
		got, err := KneeAIC(x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := kneeAICBrute(x, y, 2); got != want {
			t.Errorf("trial %d (n=%d, switch %d): KneeAIC = %d, full scan %d", trial, n, sw, got, want)
		}
		if got > 0 {
			inner++
		}
	}
	// The shortcut only acts past index 0: a good share of the trials
	// (16 of 40 with this seed) must get there for the test to mean much.
	if inner < 10 {
		t.Errorf("only %d of 40 trials found a knee past index 0", inner)
	}
	t.Logf("%d of 40 trials found a knee past index 0", inner)
}
