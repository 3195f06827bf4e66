package hugemem

import (
	"testing"
	"unsafe"
)

// TestFloat64s: slices of every size come back zeroed with the length and
// capacity asked for, large ones 2 MiB-aligned on Linux, and stay
// writable.
func TestFloat64s(t *testing.T) {
	for _, n := range []int{0, 1, 1000, Threshold/8 - 1, Threshold / 8, hugePage / 8, hugePage/8 + 1, 3 * hugePage / 8} {
		x := Float64s(n)
		if len(x) != n || cap(x) != n {
			t.Fatalf("len %d cap %d, want %d", len(x), cap(x), n)
		}
		if supported && n*8 >= Threshold && uintptr(unsafe.Pointer(unsafe.SliceData(x)))%hugePage != 0 {
			t.Errorf("n=%d: not 2 MiB-aligned", n)
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
