package lstm

import "github.com/crosscluster/crosscluster/internal/vmath"

// Dense kernels of the forward and backward passes. Matrices are row-major
// slices. Every product reduces to gemmAcc, which runs 4×8 (or 1×32) blocks
// in AVX2/FMA assembly where the CPU has it (kernel_amd64.s) and plain Go
// loops elsewhere and at the edges. The assembly does no bounds checks, so
// gemmAcc checks the extent of every operand before it starts.

// axpy sets y += a·x (fused multiply-adds, internal/vmath).
func axpy(a float64, x, y []float64) { vmath.Axpy(a, x, y) }

// dot returns x·y.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// gemmAcc sets, for r < R and j < C,
//
//	d[r·dStride + j] += Σ_{p<n} c[r·cRow + p·cStep] · w[p·wStride + j]
//
// which covers A·W (c = A by rows), Aᵀ·W (c = A by columns) and, with a
// transposed copy of W, D·Wᵀ.
func gemmAcc(R, C, n int, c []float64, cRow, cStep int, w []float64, wStride int, d []float64, dStride int) {
	if R == 0 || C == 0 || n == 0 {
		return
	}
	if (R-1)*cRow+(n-1)*cStep >= len(c) || (n-1)*wStride+C > len(w) || (R-1)*dStride+C > len(d) {
		panic("lstm: kernel operand out of range")
	}
	r := 0
	if useFMA {
		for ; r+4 <= R; r += 4 {
			j := 0
			for ; j+8 <= C; j += 8 {
				kern4x8(n, &c[r*cRow], cRow, cStep, &w[j], wStride, &d[r*dStride+j], dStride)
			}
			for rr := r; rr < r+4; rr++ {
				gemmAccGo(rr, j, C, n, c, cRow, cStep, w, wStride, d, dStride)
			}
		}
		for ; r < R; r++ {
			j := 0
			for ; j+32 <= C; j += 32 {
				kern1x32(n, &c[r*cRow], cStep, &w[j], wStride, &d[r*dStride+j])
			}
			gemmAccGo(r, j, C, n, c, cRow, cStep, w, wStride, d, dStride)
		}
		return
	}
	for ; r < R; r++ {
		gemmAccGo(r, 0, C, n, c, cRow, cStep, w, wStride, d, dStride)
	}
}

// gemmAccGo is gemmAcc for row r and columns j0 ≤ j < C in Go.
func gemmAccGo(r, j0, C, n int, c []float64, cRow, cStep int, w []float64, wStride int, d []float64, dStride int) {
	if j0 >= C {
		return
	}
	dr := d[r*dStride+j0 : r*dStride+C]
	for p := range n {
		if v := c[r*cRow+p*cStep]; v != 0 {
			axpy(v, w[p*wStride+j0:p*wStride+C], dr)
		}
	}
}

// gemvT sets dst += xᵀ·W for W of len(x) rows and len(dst) columns.
func gemvT(dst, w, x []float64) {
	gemmAcc(1, len(dst), len(x), x, 0, 1, w, len(dst), dst, 0)
}

// gemmNN sets dst += A·W for dst B×N, A B×K, W K×N.
func gemmNN(dst, a, w []float64, B, K, N int) {
	gemmAcc(B, N, K, a, K, 1, w, N, dst, N)
}

// gemmTN sets dst += Aᵀ·D for dst K×N, A B×K, D B×N.
func gemmTN(dst, a, d []float64, B, K, N int) {
	gemmAcc(K, N, B, a, 1, K, d, N, dst, N)
}

// gemmNT sets dst += D·Wᵀ for dst B×K, D B×N, given wT = Wᵀ (N×K).
func gemmNT(dst, d, wT []float64, B, K, N int) {
	gemmAcc(B, K, N, d, N, 1, wT, K, dst, K)
}

// transposeInto writes the c×r transpose of the r×c matrix a into dst.
func transposeInto(dst, a []float64, r, c int) {
	for i := range r {
		row := a[i*c : (i+1)*c]
		for j, v := range row {
			dst[j*r+i] = v
		}
	}
}
