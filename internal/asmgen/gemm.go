package main

import "fmt"

// The blocks of package lstm's gemm (kernel.go): for r < rows and the
// columns j of the block,
//
//	d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
//
// accumulated in order of p with one fused multiply-add per term, so that
// every block, AVX2 or AVX-512, gives each element the same bits.

// gemmArgs loads gemm's eight arguments (strides in elements, scaled to
// bytes by shift): n CX, c SI, cRow R8, cStep R9, w DI, wStride R10,
// d DX, dStride R11.
func gemmArgs(a *asm, shift int) {
	for _, l := range []string{"n+0(FP), CX", "c+8(FP), SI", "cRow+16(FP), R8", "cStep+24(FP), R9",
		"w+32(FP), DI", "wStride+40(FP), R10", "d+48(FP), DX", "dStride+56(FP), R11"} {
		a.i("MOVQ %s", l)
	}
	for _, r := range []string{"R8", "R9", "R10", "R11"} {
		a.i("SHLQ $%d, %s", shift, r)
	}
}

// kern4 writes the 4-row block of two YMM vectors of columns: eight
// accumulators cover the FMA latency.
func kern4(a *asm, p prec, name string) {
	a.comment(fmt.Sprintf("func %s(n int, c *%s, cRow int, cStep int, w *%[2]s, wStride int, d *%[2]s, dStride int)", name, p.goT),
		"", fmt.Sprintf("Rows 0..3, columns 0..%d of the product.", 2*p.lanes(32)-1))
	a.text(name, 64)
	gemmArgs(a, p.shift)
	cr := []string{"SI", "R12", "R13", "R14"} // rows of c
	dr := []string{"DX", "AX", "BX", "R8"}    // rows of d (R8 is free once the c rows are set)
	a.i("LEAQ (SI)(R8*1), R12")
	a.i("LEAQ (R12)(R8*1), R13")
	a.i("LEAQ (R13)(R8*1), R14")
	a.i("LEAQ (DX)(R11*1), AX")
	a.i("LEAQ (AX)(R11*1), BX")
	a.i("LEAQ (BX)(R11*1), R8")
	for r := range 4 {
		a.i("%s 0(%s), Y%d", p.movu, dr[r], 2*r)
		a.i("%s 32(%s), Y%d", p.movu, dr[r], 2*r+1)
	}
	a.i("TESTQ CX, CX")
	a.i("JZ %sstore", name)
	a.label(name + "loop")
	a.i("%s 0(DI), Y8", p.movu)
	a.i("%s 32(DI), Y9", p.movu)
	for r := range 4 {
		a.i("%s (%s), Y%d", p.bcast, cr[r], 10+r)
		a.i("VFMADD231%s Y8, Y%d, Y%d", p.s, 10+r, 2*r)
		a.i("VFMADD231%s Y9, Y%d, Y%d", p.s, 10+r, 2*r+1)
	}
	for _, r := range cr {
		a.i("ADDQ R9, %s", r)
	}
	a.i("ADDQ R10, DI")
	a.next(name, "store")
	for r := range 4 {
		a.i("%s Y%d, 0(%s)", p.movu, 2*r, dr[r])
		a.i("%s Y%d, 32(%s)", p.movu, 2*r+1, dr[r])
	}
	a.ret()
	a.blank()
}

// gemm64 writes kernel_amd64.s: the AVX2 blocks in float64.
func gemm64() string {
	a := &asm{}
	a.comment("The AVX2/FMA block of gemm (kernel.go) in float64: 4 rows by 8 columns.",
		"Each element of d is accumulated in order of p with one fused",
		"multiply-add per term.")
	a.blank()
	kern4(a, f64, "kern4x8")
	return a.String()
}

// kernels32 writes kernel32_amd64.s: the float32 block, axpy and the
// Taylor activations.
func kernels32() string {
	a := &asm{}
	a.comment("float32 kernels: the 4×16 block of gemm, axpy and vector sigmoid and",
		"tanh. exp is 2^k·p(r) as in vmath_amd64.s with Cephes'",
		"split of ln 2 for float32 and a degree-7 Taylor polynomial (truncation",
		"below 3e-9 relative on |r| ≤ ln2/2); arguments are clamped to ±87.")
	a.blank()
	kern4(a, f32, "kern4x16s")
	a.comment("func axpy32FMA(a float32, x []float32, y []float32)",
		"y[i] += a·x[i] for i < len(y) &^ 31.")
	axpy(a, f32, "axpy32FMA", 4)
	a.blank()
	taylor(a, f32, "expf", "32")
	return a.String()
}

// kern8 writes the AVX-512 8-row block of two ZMM vectors of columns, the
// broadcasts of c embedded in the FMAs: sixteen accumulators.
func kern8(a *asm, p prec, name string) {
	a.comment(fmt.Sprintf("func %s(n int, c *%s, cRow int, cStep int, w *%[2]s, wStride int, d *%[2]s, dStride int)", name, p.goT),
		"", fmt.Sprintf("Rows 0..7, columns 0..%d of the product.", 2*p.lanes(64)-1))
	a.text(name, 64)
	gemmArgs(a, p.shift)
	a.i("LEAQ (SI)(R8*2), R12")
	a.i("ADDQ R8, R12")
	a.i("LEAQ (R12)(R8*2), R13")
	a.i("ADDQ R8, R13")
	a.i("LEAQ (DX)(R11*2), AX")
	a.i("ADDQ R11, AX")
	a.i("LEAQ (AX)(R11*2), BX")
	a.i("ADDQ R11, BX")
	// Row r of c at base cb[r/3] plus (r%3)·cRow, of d at db[r/3] plus (r%3)·dStride.
	at := func(base []string, stride string, r, off int) string {
		o := ""
		if off != 0 {
			o = fmt.Sprint(off)
		}
		switch r % 3 {
		case 1:
			return fmt.Sprintf("%s(%s)(%s*1)", o, base[r/3], stride)
		case 2:
			return fmt.Sprintf("%s(%s)(%s*2)", o, base[r/3], stride)
		}
		return fmt.Sprintf("%s(%s)", o, base[r/3])
	}
	cb, db := []string{"SI", "R12", "R13"}, []string{"DX", "AX", "BX"}
	for r := range 8 {
		a.i("%s %s, Z%d", p.movu, at(db, "R11", r, 0), 2*r)
		a.i("%s %s, Z%d", p.movu, at(db, "R11", r, 64), 2*r+1)
	}
	a.i("TESTQ CX, CX")
	a.i("JZ %sstore", name)
	a.label(name + "loop")
	a.i("%s (DI), Z16", p.movu)
	a.i("%s 64(DI), Z17", p.movu)
	for r := range 8 {
		a.i("VFMADD231%s.BCST %s, Z16, Z%d", p.s, at(cb, "R8", r, 0), 2*r)
		a.i("VFMADD231%s.BCST %s, Z17, Z%d", p.s, at(cb, "R8", r, 0), 2*r+1)
	}
	for _, r := range cb {
		a.i("ADDQ R9, %s", r)
	}
	a.i("ADDQ R10, DI")
	a.next(name, "store")
	for r := range 8 {
		a.i("%s Z%d, %s", p.movu, 2*r, at(db, "R11", r, 0))
		a.i("%s Z%d, %s", p.movu, 2*r+1, at(db, "R11", r, 64))
	}
	a.ret()
	a.blank()
}

// gemm512 writes kern512_amd64.s.
func gemm512() string {
	a := &asm{}
	a.comment("AVX-512 blocks of gemm (kernel.go), bit for bit the AVX2 blocks' results:",
		"8 rows by two ZMM vectors, 16 accumulators, so that each loaded vector",
		"of w serves eight multiply-adds.")
	a.blank()
	kern8(a, f64, "kern8x16")
	kern8(a, f32, "kern8x32s")
	return a.String()
}
