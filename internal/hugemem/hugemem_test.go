package hugemem

import "testing"

// TestFloat64s: slices of every size come back zeroed with the length
// asked for, whether or not huge pages were advised, and stay writable.
func TestFloat64s(t *testing.T) {
	for _, n := range []int{0, 1, 1000, Threshold/8 - 1, Threshold / 8, 3 * Threshold / 8} {
		x := Float64s(n)
		if len(x) != n {
			t.Fatalf("len %d, want %d", len(x), n)
		}
		for i, v := range x {
			if v != 0 {
				t.Fatalf("n=%d: x[%d] = %v, want 0", n, i, v)
			}
			x[i] = float64(i)
		}
		for i, v := range x {
			if v != float64(i) {
				t.Fatalf("n=%d: x[%d] = %v after writing", n, i, v)
			}
		}
	}
}
