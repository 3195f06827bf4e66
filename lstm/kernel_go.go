package lstm

import "math"

// The pure-Go block of gemm in float64, where there is no assembly and
// the CPU fuses multiply-adds without a run-time check (other
// architectures, amd64 built for GOAMD64=v3 or later; see blockedGo): two
// rows by four columns, eight sums held in registers across the whole
// reduction instead of one axpy over a row of d per coefficient. Each
// element still takes the coefficients in order of p and skips the zero
// ones, with math.FMA as gemmGo's axpy, so the results are gemmGo's bit
// for bit (TestGemmGoBlocksSameBits). A 4×4 tile spilled its sums on
// amd64, which has 16 vector registers. In float32 the same tile (a
// rounded product, then a sum) ran slower than the axpy loop
// (BenchmarkKernels/gemm32 against gemm32-axpy), so float32 has none.

// block4Go64 is gemm for rows r..r+3 and the columns j0 ≤ j < C of
// whole blocks of four in float64, two rows at a time; it returns the
// first column left.
func block4Go64(r, j0, C, n int, c []float64, cRow, cStep int, w []float64, wStride int, d []float64, dStride int) int {
	j := j0
	for ; j+4 <= C; j += 4 {
		for rr := r; rr < r+4; rr += 2 {
			c0, c1 := c[rr*cRow:], c[(rr+1)*cRow:]
			d0 := d[rr*dStride+j : rr*dStride+j+4 : rr*dStride+j+4]
			d1 := d[(rr+1)*dStride+j : (rr+1)*dStride+j+4 : (rr+1)*dStride+j+4]
			a00, a01, a02, a03 := d0[0], d0[1], d0[2], d0[3]
			a10, a11, a12, a13 := d1[0], d1[1], d1[2], d1[3]
			for p, ci, wi := 0, 0, j; p < n; p, ci, wi = p+1, ci+cStep, wi+wStride {
				ww := w[wi : wi+4 : wi+4]
				w0, w1, w2, w3 := ww[0], ww[1], ww[2], ww[3]
				if v := c0[ci]; v != 0 {
					a00, a01, a02, a03 = math.FMA(v, w0, a00), math.FMA(v, w1, a01), math.FMA(v, w2, a02), math.FMA(v, w3, a03)
				}
				if v := c1[ci]; v != 0 {
					a10, a11, a12, a13 = math.FMA(v, w0, a10), math.FMA(v, w1, a11), math.FMA(v, w2, a12), math.FMA(v, w3, a13)
				}
			}
			d0[0], d0[1], d0[2], d0[3] = a00, a01, a02, a03
			d1[0], d1[1], d1[2], d1[3] = a10, a11, a12, a13
		}
	}
	return j
}
