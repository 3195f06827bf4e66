package overlap

import "math"

// smdVR returns stats.SMD(x, y) and stats.VarianceRatio(x, y), bit for bit,
// for NaN-free x and y (Fit's columns are finite or imputed). The stats
// functions each compute both samples' means and variances, so calling
// both costs eight passes over the data; this costs four.
func smdVR(x, y []float64) (smd, vr float64) {
	mx, vx := meanVarFinite(x)
	my, vy := meanVarFinite(y)
	return smdVRFrom(mx, vx, len(x), my, vy, len(y))
}

// smdVRFrom is smdVR from each sample's meanVarFinite and length.
func smdVRFrom(mx, vx float64, nx int, my, vy float64, ny int) (smd, vr float64) {
	if nx < 2 || ny < 2 {
		return math.NaN(), math.NaN()
	}
	if d := mx - my; d != 0 {
		smd = d / math.Sqrt((vx+vy)/2)
	}
	return smd, vx / vy
}

// meanVarFinite is stats' corrected two-pass mean and sample variance, in
// the same order of operations, for NaN-free x with at least two values
// (otherwise the variance is meaningless and smdVR does not use it).
func meanVarFinite(x []float64) (mean, variance float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	fn := float64(len(x))
	mean = s / fn
	var c, sq float64
	for _, v := range x {
		d := v - mean
		c += d
		sq += d * d
	}
	return mean, (sq - c*c/fn) / (fn - 1)
}

// moments holds a sample's size, mean and sample variance.
type moments struct {
	n        int
	mean, vr float64
}

// groupMoments returns, for each domain d, the moments of col's values on
// all of d's rows and on d's in-band rows (group[i] = 2·domain + in-band).
//
// Both are the corrected two-pass mean and variance (as meanVarFinite):
// the second pass takes each value's deviation from its group's mean and
// from its domain's. The sums run in four lanes (rows i mod 4), so that
// consecutive rows of a group do not wait for each other's additions. The
// results agree with stats.SMD and stats.VarianceRatio on the split rows
// to rounding, not bit for bit: the sums are taken in a different order.
func groupMoments(col []float64, group []uint8) (all, in [2]moments) {
	const lanes = 4
	var n [4]int
	var s [lanes][4]float64
	i := 0
	for ; i+lanes <= len(col); i += lanes {
		g0, g1, g2, g3 := group[i]&3, group[i+1]&3, group[i+2]&3, group[i+3]&3
		s[0][g0] += col[i]
		s[1][g1] += col[i+1]
		s[2][g2] += col[i+2]
		s[3][g3] += col[i+3]
		n[g0]++
		n[g1]++
		n[g2]++
		n[g3]++
	}
	for ; i < len(col); i++ {
		g := group[i] & 3
		s[0][g] += col[i]
		n[g]++
	}
	// Groups: 0 source out of band, 1 source in band, 2 and 3 target.
	// Per group: its mean, and its domain's.
	var sum, m, md [4]float64
	for g := range sum {
		sum[g] = s[0][g] + s[1][g] + s[2][g] + s[3][g]
		m[g] = sum[g] / float64(n[g])
	}
	for g := range md {
		o := g &^ 1
		md[g] = (sum[o] + sum[o+1]) / float64(n[o]+n[o+1])
	}
	// Deviations from the group's mean (c, q) and the domain's (cd, qd).
	var c, q, cd, qd [lanes][4]float64
	dev := func(lane int, g uint8, v float64) {
		d, e := v-m[g], v-md[g]
		c[lane][g] += d
		q[lane][g] += d * d
		cd[lane][g] += e
		qd[lane][g] += e * e
	}
	i = 0
	for ; i+lanes <= len(col); i += lanes {
		dev(0, group[i]&3, col[i])
		dev(1, group[i+1]&3, col[i+1])
		dev(2, group[i+2]&3, col[i+2])
		dev(3, group[i+3]&3, col[i+3])
	}
	for ; i < len(col); i++ {
		dev(0, group[i]&3, col[i])
	}
	lsum := func(a *[lanes][4]float64, g int) float64 { return a[0][g] + a[1][g] + a[2][g] + a[3][g] }
	mom := func(n int, mean, c, q float64) moments {
		fn := float64(n)
		return moments{n: n, mean: mean, vr: (q - c*c/fn) / (fn - 1)}
	}
	for d := range 2 {
		o, ib := 2*d, 2*d+1
		in[d] = mom(n[ib], m[ib], lsum(&c, ib), lsum(&q, ib))
		all[d] = mom(n[o]+n[ib], md[o], lsum(&cd, o)+lsum(&cd, ib), lsum(&qd, o)+lsum(&qd, ib))
	}
	return all, in
}
