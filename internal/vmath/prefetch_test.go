package vmath

import (
	"slices"
	"testing"
)

// TestPrefetch: Prefetch accepts nil, empty, one-element and unaligned
// slices and slices that end at their array's end, and changes nothing.
// (It asks only for the lines the slice itself covers; a line's start is
// rounded down within the slice's first line.)
func TestPrefetch(t *testing.T) {
	Prefetch(nil)
	x := make([]float64, 1000)
	for i := range x {
		x[i] = float64(i) * 1.5
	}
	want := slices.Clone(x)
	for _, s := range [][]float64{x[:0], x[:1], x[1:2], x[3:], x[7:901], x[len(x)-1:], x} {
		Prefetch(s)
	}
	if !slices.Equal(x, want) {
		t.Fatal("Prefetch changed its input")
	}
}
