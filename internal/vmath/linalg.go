package vmath

import "math"

// Axpy sets y[i] = a·x[i] + y[i] with one rounding (a fused multiply-add)
// for every i < len(y), as math.FMA(a, x[i], y[i]): sixteen at a time
// with AVX2/FMA where the CPU has them, the rest, and everything
// elsewhere, with math.FMA, which rounds the same. It panics if x is
// shorter than y.
func Axpy(a float64, x, y []float64) {
	x = x[:len(y)]
	n := 0
	if useFMA {
		n = len(y) &^ 15
		axpyFMA(a, x, y[:n])
	}
	for i := n; i < len(y); i++ {
		y[i] = math.FMA(a, x[i], y[i])
	}
}

// Dot returns Σ x[i]·y[i] over i < len(x), accumulated with fused
// multiply-adds in sixteen lanes (element i in lane i mod 16) that are
// then added pairwise; the last len(x) mod 16 elements follow one by one.
// The AVX2 kernel and the Go loop compute exactly the same. It panics if
// y is shorter than x.
func Dot(x, y []float64) float64 {
	y = y[:len(x)]
	n := len(x) &^ 15
	var s float64
	if useFMA {
		s = dotFMA(x[:n], y[:n])
	} else {
		s = dotGo(x[:n], y[:n])
	}
	for i := n; i < len(x); i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return s
}

// dotGo is dotFMA in Go, for len(x) a multiple of 16.
func dotGo(x, y []float64) float64 {
	var a [16]float64
	for i := 0; i < len(x); i += 16 {
		for l := range a {
			a[l] = math.FMA(x[i+l], y[i+l], a[l])
		}
	}
	var v [4]float64
	for l := range v {
		v[l] = (a[l] + a[4+l]) + (a[8+l] + a[12+l])
	}
	return (v[0] + v[2]) + (v[1] + v[3])
}

// Mul sets dst[i] = x[i]·y[i] for i < len(dst). It panics if x or y is
// shorter than dst.
func Mul(dst, x, y []float64) {
	x, y = x[:len(dst)], y[:len(dst)]
	n := 0
	if useFMA {
		n = len(dst) &^ 15
		mulAVX(dst[:n], x, y)
	}
	for i := n; i < len(dst); i++ {
		dst[i] = x[i] * y[i]
	}
}
