package synth

import (
	"math"
	"slices"
	"testing"
)

// TestOverlapBench: every shape is reproducible from its seed, has the
// documented size, domain split and feature count, finite values, and the
// property it is there for: distinct values of each feature (continuous:
// almost all; tied: few, with a third or so of queue times exactly zero).
func TestOverlapBench(t *testing.T) {
	const n = 20000
	for _, shape := range OverlapShapes {
		t.Run(shape, func(t *testing.T) {
			x, y, names, err := OverlapBench(shape, n, 3)
			if err != nil {
				t.Fatal(err)
			}
			x2, y2, _, _ := OverlapBench(shape, n, 3)
			if !slices.Equal(x, x2) || !slices.Equal(y, y2) {
				t.Fatal("same seed, different data")
			}
			d := len(names)
			wantD, wantSrc := 6, n/2
			switch shape {
			case "wide":
				wantD = 12
			case "imbalanced":
				wantSrc = n / 4
			}
			if d != wantD || len(x) != n*d || len(y) != n {
				t.Fatalf("%d features, %d values, %d labels; want %d features", d, len(x), len(y), wantD)
			}
			if src := n - slices.Index(y, 1); slices.Index(y, 1) != wantSrc || src != n-wantSrc {
				t.Fatalf("first target row %d, want %d", slices.Index(y, 1), wantSrc)
			}
			for i, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("value %d (row %d, %s) is %v", i, i/d, names[i%d], v)
				}
			}
			for j, name := range names {
				col := make([]float64, n)
				for i := range n {
					col[i] = x[i*d+j]
				}
				zeros := 0
				whole := true
				for _, v := range col {
					if v == 0 {
						zeros++
					}
					whole = whole && v == math.Round(v)
				}
				slices.Sort(col)
				distinct := len(slices.Compact(col))
				accounting := shape == "tied" || shape == "imbalanced" || shape == "wide"
				switch {
				case shape == "continuous" && distinct < n*99/100:
					t.Errorf("%s: %d distinct values of %d, want continuous", name, distinct, n)
				case accounting && j < 3 && distinct > 400:
					// Stampede Feb 2018: 18 core counts, 29 limits.
					t.Errorf("%s: %d distinct values, want a few hundred at most", name, distinct)
				case accounting && j < 5 && (!whole || distinct > n/2):
					// Whole seconds: Stampede Feb 2018 has 1486 runtimes
					// and 302 queue times among 2326 jobs.
					t.Errorf("%s: whole numbers %v, %d distinct of %d: want whole seconds with ties", name, whole, distinct, n)
				case accounting && name == "queue_time_sec" && zeros < n/5:
					// Stampede Feb 2018: 770 of 2326 did not queue.
					t.Errorf("queue_time_sec: %d zeros of %d, want about a quarter or more", zeros, n)
				}
			}
		})
	}
	if _, _, _, err := OverlapBench("nope", 10, 1); err == nil {
		t.Error("unknown shape accepted")
	}
}

func TestReplicate(t *testing.T) {
	x := []float64{1, 10, 2, 20, 3, 30} // rows: source 1, target 2, source 3
	y := []int{0, 1, 0}
	gx, gy := Replicate(x, y, 2, 7)
	wantX := []float64{1, 10, 3, 30, 1, 10, 3, 30, 1, 10, 2, 20, 2, 20}
	wantY := []int{0, 0, 0, 0, 0, 1, 1}
	if !slices.Equal(gx, wantX) || !slices.Equal(gy, wantY) {
		t.Errorf("Replicate = %v %v, want %v %v", gx, gy, wantX, wantY)
	}
}
