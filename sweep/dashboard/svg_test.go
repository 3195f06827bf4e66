package dashboard

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTicks: every axis gets at least three ticks and at most a dozen,
// inside its range, at multiples of a step of 1, 2 or 5 times a power of
// ten (or at powers of ten, with 2 and 5 between, on a log axis), labelled
// with the number they mark.
func TestTicks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ranges := [][2]float64{{0, 1}, {0.1, 0.3}, {1, 5}, {-3.7, 12.2}, {0.0001, 1}, {1e-6, 1e-2}, {0.5, 40}, {995, 1005},
		{1e9, 1e9 + 3}, {-1e-7, 1e-7}, {1, 2}, {3, 3}, {1e-9, 1e9}, {0, 1e-300}}
	for range 3000 {
		lo := (rng.Float64() - 0.3) * math.Pow(10, float64(rng.IntN(24)-12))
		ranges = append(ranges, [2]float64{lo, lo + rng.Float64()*math.Pow(10, float64(rng.IntN(24)-12))})
	}
	for _, r := range ranges {
		a, ok := newAxis(r[:])
		if !ok {
			t.Fatalf("%v: no axis", r)
		}
		ts := a.ticks()
		if len(ts) < 3 || len(ts) > 12 {
			t.Errorf("%+v: %d ticks %v", a, len(ts), ts)
			continue
		}
		step := 0.0 // a log axis's ticks are nice on their own
		if lt, st := linearTicks(a.lo, a.hi); len(lt) == len(ts) && lt[0] == ts[0] {
			step = st
		}
		for i, tk := range ts {
			if tk.v < a.lo || tk.v > a.hi {
				t.Errorf("%+v: tick %v outside", a, tk.v)
			}
			if !nice(tk.v, step) {
				t.Errorf("%+v: tick %d at %v (step %v) is not a nice number", a, i, tk.v, step)
			}
			if v, err := strconv.ParseFloat(tk.text, 64); err != nil || math.Abs(v-tk.v) > 0.01*math.Max(step, 1e-3*math.Abs(tk.v)) {
				t.Errorf("%+v: tick %v labelled %q", a, tk.v, tk.text)
			}
			if i > 0 && tk.text == ts[i-1].text {
				t.Errorf("%+v: two ticks labelled %q", a, tk.text)
			}
		}
	}
}

// nice reports whether v is a whole multiple of step (1, 2 or 5 times a
// power of ten), or, for step 0 (log axes), 1, 2 or 5 times a power of ten.
func nice(v, step float64) bool {
	m := func(x float64) float64 {
		e := math.Floor(math.Log10(math.Abs(x)))
		return math.Round(math.Abs(x)/math.Pow(10, e)*1e6) / 1e6
	}
	if step == 0 {
		f := m(v)
		return f == 1 || f == 2 || f == 5
	}
	if f := m(step); f != 1 && f != 2 && f != 5 {
		return false
	}
	k := v / step
	return math.Abs(k-math.Round(k)) < 1e-6
}
