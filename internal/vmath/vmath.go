// Package vmath evaluates the logistic sigmoid and tanh over float64
// slices in place, four at a time with AVX2/FMA where the CPU has them
// (vmath_amd64.s) and with package math elsewhere. The vector results are
// within a few ulps of package math's (1e-14 absolute and, for the sigmoid
// down to -700, 8e-16 relative are tested).
//
// lstm's gates and stats' logistic regression use them.
package vmath

import "math"

// Sigmoid sets x[i] = 1/(1+exp(-x[i])). Every element goes through the
// same code (the vector kernel takes a short tail padded to four), so
// equal inputs give equal outputs wherever they sit in x.
func Sigmoid(x []float64) {
	if !useFMA {
		for i, v := range x {
			x[i] = sigmoid(v)
		}
		return
	}
	vectorTail(x, vsigmoid)
}

// Tanh sets x[i] = tanh(x[i]), the same function at every position.
func Tanh(x []float64) {
	if !useFMA {
		for i, v := range x {
			x[i] = math.Tanh(v)
		}
		return
	}
	vectorTail(x, vtanh)
}

// vectorTail runs kernel, which handles multiples of four elements, on all
// of x, the last len(x) mod 4 elements in a padded copy.
func vectorTail(x []float64, kernel func([]float64)) {
	n := len(x) &^ 3
	kernel(x[:n])
	if n < len(x) {
		var t [4]float64
		copy(t[:], x[n:])
		kernel(t[:])
		copy(x[n:], t[:])
	}
}

// sigmoid is the scalar logistic function, without overflow for large |x|.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
