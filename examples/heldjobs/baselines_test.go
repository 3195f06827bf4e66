package main

import (
	"math"
	"slices"
	"testing"

	"github.com/crosscluster/crosscluster/lstm"
)

// TestBaselines builds data in which the hold code alone decides the label
// and the tensors say nothing: the hold-code rule scores F1 1, the majority
// class the F1 of always releasing, and every interval holds its score.
func TestBaselines(t *testing.T) {
	mk := func(n int) (lstm.Data, []int) {
		d := lstm.Data{X: make([][][]float64, n), Y: make([]int, n)}
		codes := make([]int, n)
		for i := range d.X {
			codes[i] = 1 + i%3 // codes 1 and 2 released, 3 removed
			if codes[i] != 3 {
				d.Y[i] = 1
			}
			d.X[i] = [][]float64{{1, 0}, {float64(i % 2), 1}}
		}
		return d, codes
	}
	train, trainCodes := mk(90)
	test, testCodes := mk(30)
	got, err := baselines(train, test, trainCodes, testCodes, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"majority class", "hold-code rule", "logistic regression"}
	if len(got) != 3 {
		t.Fatalf("%d baselines", len(got))
	}
	for i, s := range got {
		if s.name != names[i] || !(s.lo <= s.f1 && s.f1 <= s.hi) || math.IsNaN(s.lo) {
			t.Errorf("baseline %d = %+v", i, s)
		}
	}
	if got[1].f1 != 1 {
		t.Errorf("hold-code rule F1 %v on data its code decides, want 1", got[1].f1)
	}
	if want := 2 * (2.0 / 3) / (1 + 2.0/3); math.Abs(got[0].f1-want) > 1e-12 {
		t.Errorf("majority F1 %v, want %v (always release)", got[0].f1, want)
	}
}

func TestTimeOrder(t *testing.T) {
	if got := timeOrder([]int64{30, 10, 20, 10}); !slices.Equal(got, []int{1, 3, 2, 0}) {
		t.Errorf("timeOrder = %v", got)
	}
}
