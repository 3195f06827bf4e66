// Package vmath evaluates the logistic sigmoid and tanh over float64
// slices in place, four at a time with AVX2/FMA where the CPU has them
// (vmath_amd64.s) and with package math elsewhere. The vector results are
// within a few ulps of package math's (1e-14 absolute is tested).
//
// lstm's gates and stats' logistic regression use them.
package vmath

import "math"

// Sigmoid sets x[i] = 1/(1+exp(-x[i])).
func Sigmoid(x []float64) {
	n := 0
	if useFMA {
		n = len(x) &^ 3
		vsigmoid(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = sigmoid(x[i])
	}
}

// Tanh sets x[i] = tanh(x[i]).
func Tanh(x []float64) {
	n := 0
	if useFMA {
		n = len(x) &^ 3
		vtanh(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = math.Tanh(x[i])
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
