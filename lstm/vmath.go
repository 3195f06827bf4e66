package lstm

import "math"

// sigmoidInPlace sets x[i] = 1/(1+exp(-x[i])), vectorised where the CPU
// allows (vmath_amd64.s).
func sigmoidInPlace(x []float64) {
	n := 0
	if useFMA {
		n = len(x) &^ 3
		vsigmoid(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = sigmoid(x[i])
	}
}

// tanhInPlace sets x[i] = tanh(x[i]), vectorised where the CPU allows.
func tanhInPlace(x []float64) {
	n := 0
	if useFMA {
		n = len(x) &^ 3
		vtanh(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = math.Tanh(x[i])
	}
}
