package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// aucTol: AUC is a ratio of sums of weight products; scikit-learn sums the
// trapezoids of the ROC curve in a different order, so the two agree to a
// few ulps times the number of distinct scores.
const aucTol = 1e-12

// Golden values in testdata/auc_cases.json: scikit-learn 1.2.1
// roc_auc_score(y, s, sample_weight=w), written by
// /usr/bin/python3 stats/testdata/gen_core.py.
func TestAUCGolden(t *testing.T) {
	var g struct {
		Cases []struct {
			Name     string    `json:"name"`
			Scores   []float64 `json:"scores"`
			Positive []bool    `json:"positive"`
			Weights  []float64 `json:"weights"`
			AUC      float64   `json:"auc"`
		} `json:"cases"`
	}
	ksLoadJSON(t, "auc_cases.json", &g)
	if len(g.Cases) < 10 {
		t.Fatalf("only %d cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s0 := slices.Clone(c.Scores)
			got, err := AUC(c.Scores, c.Positive, c.Weights)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-c.AUC) > aucTol {
				t.Errorf("AUC = %.17g, scikit-learn %.17g", got, c.AUC)
			}
			if !slices.Equal(s0, c.Scores) {
				t.Error("scores modified")
			}
		})
	}
}

// aucBrute is the definition: the weighted share of (positive, negative)
// pairs ordered correctly, ties ½.
func aucBrute(s []float64, pos []bool, w []float64) float64 {
	var num, den float64
	for i := range s {
		for j := range s {
			if !pos[i] || pos[j] {
				continue
			}
			wij := w[i] * w[j]
			den += wij
			switch {
			case s[i] > s[j]:
				num += wij
			case s[i] == s[j]:
				num += wij / 2
			}
		}
	}
	return num / den
}

func TestAUCBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 5, 50, radixMin + 100} { // the last exercises the radix path
		trials := 5
		if n > radixMin {
			trials = 1
		}
		for trial := 0; trial < trials; trial++ {
			s := make([]float64, n)
			pos := make([]bool, n)
			w := make([]float64, n)
			for i := range s {
				s[i] = math.Round(rng.NormFloat64()*4) / 4 // many ties
				pos[i] = rng.IntN(2) == 1
				w[i] = rng.Float64() * 2
			}
			pos[0], pos[1] = true, false
			got, err := AUC(s, pos, w)
			if err != nil {
				t.Fatal(err)
			}
			if want := aucBrute(s, pos, w); math.Abs(got-want) > aucTol {
				t.Errorf("n=%d: AUC %.17g, brute force %.17g", n, got, want)
			}
		}
	}
}

func TestAUCErrors(t *testing.T) {
	tests := []struct {
		name   string
		s      []float64
		pos    []bool
		w      []float64
		target error
	}{
		{"empty", nil, nil, nil, ErrEmpty},
		{"one class", []float64{1, 2}, []bool{true, true}, nil, ErrOneClass},
		{"zero weight class", []float64{1, 2}, []bool{true, false}, []float64{1, 0}, ErrOneClass},
		{"NaN score", []float64{1, math.NaN()}, []bool{true, false}, nil, ErrNaN},
		{"negative weight", []float64{1, 2}, []bool{true, false}, []float64{1, -1}, ErrWeight},
		{"NaN weight", []float64{1, 2}, []bool{true, false}, []float64{1, math.NaN()}, ErrWeight},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AUC(tc.s, tc.pos, tc.w)
			if !errors.Is(err, tc.target) {
				t.Errorf("error %v, want %v", err, tc.target)
			}
		})
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("length mismatch did not panic")
			}
		}()
		AUC([]float64{1}, []bool{true, false}, nil)
	}()
}
