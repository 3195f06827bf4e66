package stats

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// curveFuzzSeries turns fuzz bytes into two equal-length series: the
// first byte picks raw float64 bits (NaN, Inf, subnormals) or small
// positive values built from single bytes (realistic curves with ties).
func curveFuzzSeries(data []byte) (x, y []float64) {
	if len(data) == 0 {
		return nil, nil
	}
	raw := data[0]&1 == 1
	data = data[1:]
	var vals []float64
	if raw {
		for len(data) >= 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
	} else {
		for _, b := range data {
			vals = append(vals, float64(b)/16+0.0625)
		}
	}
	vals = vals[:min(len(vals), 128)]
	h := len(vals) / 2
	return vals[:h], vals[h : 2*h]
}

func curveFuzzCheck(t *testing.T, fn string, err error) {
	if err == nil {
		return
	}
	var ce *CurveError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v is %T, not *CurveError", fn, err, err)
	}
	for _, s := range []error{ErrEmpty, ErrNaN, ErrCurveNonPositive, ErrCurveDegenerate} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("%s: error %v wraps no sentinel", fn, err)
}

func FuzzCurves(f *testing.F) {
	f.Add([]byte{0, 40, 30, 25, 22, 20, 19, 18, 17, 16, 16, 15, 15, 14, 14, 13, 13})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 200, 100, 50, 25, 12, 6, 3, 2, 1, 1})
	f.Add([]byte{0, 5, 5, 5, 5, 5, 5, 5, 5})
	nan := make([]byte, 1+8*8)
	nan[0] = 1
	for i := range 8 {
		binary.LittleEndian.PutUint64(nan[1+8*i:], math.Float64bits([]float64{1, 2, math.NaN(), 4, 5, math.Inf(1), 0, -1}[i]))
	}
	f.Add(nan)
	// Finite values near the float64 limit once overflowed Pearson's sums.
	f.Add([]byte("1000000000000000X000000000000000x0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, y := curveFuzzSeries(data)
		if p, err := FitPowerLaw(x, y); err == nil {
			if !(p.R2 <= 1+1e-12) {
				t.Fatalf("R2 %v > 1", p.R2)
			}
		} else {
			curveFuzzCheck(t, "FitPowerLaw", err)
		}
		_, err := FitExponential(x, y)
		curveFuzzCheck(t, "FitExponential", err)
		if len(x) <= 40 {
			_, err = KneeAIC(x, y, 2)
			curveFuzzCheck(t, "KneeAIC", err)
		}
		_, err = Slope(x, y, 0.5, 8)
		curveFuzzCheck(t, "Slope", err)
		for name, corr := range map[string]func(a, b []float64) (float64, float64, error){"Pearson": Pearson, "Spearman": Spearman} {
			r, p, err := corr(x, y)
			if err != nil {
				curveFuzzCheck(t, name, err)
				continue
			}
			if !(r >= -1 && r <= 1 && p >= 0 && p <= 1) {
				t.Fatalf("%s = %v, %v out of range", name, r, p)
			}
		}
	})
}
