package lstm

import (
	"math"

	"github.com/crosscluster/crosscluster/internal/vmath"
)

// Dense kernels of the forward and backward passes, one set per precision.
// Matrices are row-major slices. Every product reduces to gemm, which runs
// 8-row blocks in AVX-512 assembly where the CPU has it (kern512_amd64.s),
// 4-row blocks in AVX2/FMA assembly (kernel_amd64.s, kernel32_amd64.s),
// 4-row blocks in Go without assembly in float64 (kernel_go.go) and plain
// Go loops elsewhere and at the edges; the AVX-512 and AVX2 blocks compute
// the same bits, and so do the Go blocks and loops. The
// assembly does no bounds checks, so gemm checks the extent of every
// operand before it starts.
//
// Which kernel computes an element decides its rounding: the assembly fuses
// every multiply-add, the float64 Go loops fuse too (math.FMA), the float32
// Go loops do not. Callers that split a product to run it on several cores
// therefore cut it at multiples of four rows from the start of the product
// they split, so that every element goes through the same kernel as in the
// whole product and the result does not depend on the split.

// float is the element type of the engines.
type float interface{ float32 | float64 }

// kernels are the primitives of one precision.
type kernels[T float] struct {
	axpy          func(a T, x, y []T) // y += a·x
	sigmoid, tanh func(x []T)         // in place
	// block adds the product of four rows of c with columns [0, width) of
	// w into four rows of d (the gemm operands, strides in elements); nil
	// where there is no assembly.
	block func(n int, c *T, cRow, cStep int, w *T, wStride int, d *T, dStride int)
	width int
	// goBlock is the pure-Go block (kernel_go.go) that replaces block
	// where there is no assembly (nil where it would be slower): gemm
	// for four rows from r and the columns from j0 in whole blocks of
	// four, returning the first column it left.
	goBlock func(r, j0, C, n int, c []T, cRow, cStep int, w []T, wStride int, d []T, dStride int) int
	// wide is a larger block, wideRows (a multiple of four) by wideWidth
	// (a multiple of width), with the same arguments as block; nil where
	// the CPU has no AVX-512.
	wide                func(n int, c *T, cRow, cStep int, w *T, wStride int, d *T, dStride int)
	wideRows, wideWidth int
	// cell is the fused cell on rows rows at once (see cells), for H a
	// multiple of cellLanes; nil where there is no assembly.
	cell      func(hid, rows int, gate, cp, c, tc, h *T)
	cellLanes int
	// bwd is the Go loop of cellBackward on rows rows at once, for H a
	// multiple of cellLanes; nil where there is no assembly.
	bwd func(hid, rows int, gate, tc, u, dh, dc, cp *T, cpStride int)
}

// kernelsFor returns the kernels of precision T on this machine.
func kernelsFor[T float]() *kernels[T] {
	var k any
	switch any(T(0)).(type) {
	case float64:
		k64 := &kernels[float64]{axpy: vmath.Axpy, sigmoid: vmath.Sigmoid, tanh: vmath.Tanh}
		if blockedGo {
			k64.goBlock = block4Go64
		}
		if useFMA {
			k64.block, k64.width = kern4x8, 8
			k64.cell, k64.cellLanes, k64.bwd = cell64, 4, bwd64
		}
		if useAVX512 {
			k64.wide, k64.wideRows, k64.wideWidth = kern8x16, 8, 16
		}
		k = k64
	case float32:
		k32 := &kernels[float32]{axpy: axpy32, sigmoid: sigmoid32, tanh: tanh32}
		if useFMA {
			k32.block, k32.width = kern4x16s, 16
			k32.cell, k32.cellLanes, k32.bwd = cell32, 8, bwd32
		}
		if useAVX512 {
			k32.wide, k32.wideRows, k32.wideWidth = kern8x32s, 8, 32
		}
		k = k32
	}
	return k.(*kernels[T])
}

// axpy sets y += a·x (fused multiply-adds, internal/vmath).
func axpy(a float64, x, y []float64) { vmath.Axpy(a, x, y) }

// axpy32 sets y += a·x in float32: fused in the assembly's blocks of 32,
// not fused in the Go loop that finishes.
func axpy32(a float32, x, y []float32) {
	x = x[:len(y)]
	n := 0
	if useFMA && len(y) >= 32 {
		n = len(y) &^ 31
		axpy32FMA(a, x, y[:n])
	}
	for i := n; i < len(y); i++ {
		y[i] += float32(a * x[i]) // rounded first: not fused on any GOAMD64 level
	}
}

// sigmoid32 sets x[i] = 1/(1+exp(-x[i])) in float32, eight at a time in
// assembly and the rest through package math.
func sigmoid32(x []float32) {
	n := 0
	if useFMA {
		n = len(x) &^ 7
		vsigmoid32(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = float32(1 / (1 + math.Exp(-float64(x[i]))))
	}
}

// tanh32 sets x[i] = tanh(x[i]) in float32, as sigmoid32 does.
func tanh32(x []float32) {
	n := 0
	if useFMA {
		n = len(x) &^ 7
		vtanh32(x[:n])
	}
	for i := n; i < len(x); i++ {
		x[i] = float32(math.Tanh(float64(x[i])))
	}
}

// dot returns x·y in four interleaved sums, each product rounded before
// it is added (float64(…)), so that no GOAMD64 level or architecture fuses
// them and the sum has the same bits everywhere.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i] * y[i])
		s1 += float64(x[i+1] * y[i+1])
		s2 += float64(x[i+2] * y[i+2])
		s3 += float64(x[i+3] * y[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * y[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// gemm sets, for r < R and j < C,
//
//	d[r·dStride + j] += Σ_{p<n} c[r·cRow + p·cStep] · w[p·wStride + j]
//
// each element accumulated in order of p. This covers A·W (c = A by rows),
// Aᵀ·W (c = A by columns) and, with a transposed copy of W, D·Wᵀ. Rows run
// in blocks of k.wideRows from r = 0 through k.wide, then of four through
// k.block (or k.goBlock without assembly), then one at a time.
func gemm[T float](k *kernels[T], R, C, n int, c []T, cRow, cStep int, w []T, wStride int, d []T, dStride int) {
	if R == 0 || C == 0 || n == 0 {
		return
	}
	if (R-1)*cRow+(n-1)*cStep >= len(c) || (n-1)*wStride+C > len(w) || (R-1)*dStride+C > len(d) {
		panic("lstm: kernel operand out of range")
	}
	r := 0
	if k.wide != nil {
		for ; r+k.wideRows <= R; r += k.wideRows {
			j := 0
			for ; j+k.wideWidth <= C; j += k.wideWidth {
				k.wide(n, &c[r*cRow], cRow, cStep, &w[j], wStride, &d[r*dStride+j], dStride)
			}
			for rr := r; rr < r+k.wideRows; rr += 4 {
				gemm4(k, rr, j, C, n, c, cRow, cStep, w, wStride, d, dStride)
			}
		}
	}
	if k.block != nil {
		for ; r+4 <= R; r += 4 {
			gemm4(k, r, 0, C, n, c, cRow, cStep, w, wStride, d, dStride)
		}
	} else if k.goBlock != nil {
		for ; r+4 <= R; r += 4 {
			j := k.goBlock(r, 0, C, n, c, cRow, cStep, w, wStride, d, dStride)
			for rr := r; rr < r+4; rr++ {
				gemmGo(k, rr, j, C, n, c, cRow, cStep, w, wStride, d, dStride)
			}
		}
	}
	for ; r < R; r++ {
		gemmGo(k, r, 0, C, n, c, cRow, cStep, w, wStride, d, dStride)
	}
}

// gemm4 is gemm for rows r..r+3 and columns j0 ≤ j < C: k.block on
// whole blocks of width columns, gemmGo on the rest.
func gemm4[T float](k *kernels[T], r, j0, C, n int, c []T, cRow, cStep int, w []T, wStride int, d []T, dStride int) {
	j := j0
	for ; j+k.width <= C; j += k.width {
		k.block(n, &c[r*cRow], cRow, cStep, &w[j], wStride, &d[r*dStride+j], dStride)
	}
	for rr := r; rr < r+4; rr++ {
		gemmGo(k, rr, j, C, n, c, cRow, cStep, w, wStride, d, dStride)
	}
}

// gemmGo is gemm for row r and columns j0 ≤ j < C, one axpy per non-zero
// coefficient.
func gemmGo[T float](k *kernels[T], r, j0, C, n int, c []T, cRow, cStep int, w []T, wStride int, d []T, dStride int) {
	if j0 >= C {
		return
	}
	dr := d[r*dStride+j0 : r*dStride+C]
	for p := range n {
		if v := c[r*cRow+p*cStep]; v != 0 {
			k.axpy(v, w[p*wStride+j0:p*wStride+C], dr)
		}
	}
}

// transposeInto writes the c×r transpose of the r×c matrix a into dst.
func transposeInto[T float](dst, a []T, r, c int) {
	for i := range r {
		row := a[i*c : (i+1)*c]
		for j, v := range row {
			dst[j*r+i] = v
		}
	}
}
