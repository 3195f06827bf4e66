package logit

// rowTerms sets, for the rows of one block, the gradient and Hessian
// weights of the loss at the probabilities mu (σ of eta):
//
//	g[i] = w_i·(mu[i] − y_i),  h[i] = (w_i·mu[i])·(1 − mu[i]),
//
// with y_i = lab[i]&1 and w_i = w[i], or wClass[y_i] when w is nil, and
// reports whether a row of positive weight lies on the wrong side of the
// boundary or on it ((2y_i − 1)·eta[i] ≤ 0). Four rows at a time with AVX2
// where the CPU has it; the rest, and everything elsewhere, in Go with the
// same operations in the same order, so the bits are the same.
func rowTerms(g, h, eta, mu []float64, lab []uint8, w []float64, wClass [2]float64) (wrong bool) {
	n := len(g)
	h, eta, mu, lab = h[:n], eta[:n], mu[:n], lab[:n]
	if w != nil {
		w = w[:n]
	}
	k := 0
	if useAVX2 {
		k = n &^ 3
		if k > 0 {
			wrong = rowTermsAVX2(g[:k], h, eta, mu, lab, w, wClass[0], wClass[1])
		}
	}
	for i := k; i < n; i++ {
		li := lab[i] & 1
		wi := wClass[li]
		if w != nil {
			wi = w[i]
		}
		yi := float64(li)
		// Two conditional moves, not a short-circuit branch.
		bad := false
		if (2*yi-1)*eta[i] <= 0 {
			bad = true
		}
		if wi == 0 {
			bad = false
		}
		wrong = wrong || bad
		m := mu[i]
		g[i] = wi * (m - yi)
		h[i] = wi * m * (1 - m)
	}
	return wrong
}
