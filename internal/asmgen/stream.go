package main

import "fmt"

// Streaming kernels: one pass over slices, four vectors an iteration.

// axpy writes name(a T, x, y []T): y[i] = a·x[i] + y[i], fused, for
// i < len(y) rounded down to nv vectors.
func axpy(a *asm, p prec, name string, nv int) {
	a.text(name, 56)
	a.i("MOVQ x_base+8(FP), SI")
	a.i("MOVQ y_base+32(FP), DI")
	a.i("MOVQ y_len+40(FP), CX")
	a.i("SHRQ $%d, CX", 5-p.shift+2)
	a.i("JZ %sdone", name)
	a.i("%s a+0(FP), Y15", p.bcast)
	a.label(name + "loop")
	for v := range nv {
		a.i("%s %d(DI), Y%d", p.movu, 32*v, v)
	}
	for v := range nv {
		a.i("VFMADD231%s %d(SI), Y15, Y%d", p.s, 32*v, v)
	}
	for v := range nv {
		a.i("%s Y%d, %d(DI)", p.movu, v, 32*v)
	}
	a.i("ADDQ $%d, SI", 32*nv)
	a.i("ADDQ $%d, DI", 32*nv)
	a.next(name, "done")
	a.ret()
}

// dot writes dotFMA(x, y []float64) float64.
func dot(a *asm) {
	a.comment("func dotFMA(x []float64, y []float64) float64", "",
		"Σ x[i]·y[i] for i < len(x) &^ 15 (len(y) ≥ len(x) is the caller's job):",
		"element i accumulates, fused, into lane i mod 16 (four registers of",
		"four), and the lanes reduce as ((a0+a1)+(a2+a3)) per register lane,",
		"then (l0+l2)+(l1+l3); dotGo computes the same.")
	a.text("dotFMA", 56)
	a.i("MOVQ x_base+0(FP), SI")
	a.i("MOVQ x_len+8(FP), CX")
	a.i("MOVQ y_base+24(FP), DI")
	for v := range 4 {
		a.i("VXORPD Y%d, Y%d, Y%d", v, v, v)
	}
	a.i("SHRQ $4, CX")
	a.i("JZ dotreduce")
	a.label("dotloop")
	for v := range 4 {
		a.i("VMOVUPD %d(SI), Y%d", 32*v, 4+v)
	}
	for v := range 4 {
		a.i("VFMADD231PD %d(DI), Y%d, Y%d", 32*v, 4+v, v)
	}
	a.i("ADDQ $128, SI")
	a.i("ADDQ $128, DI")
	a.i("DECQ CX")
	a.i("JNZ dotloop")
	a.label("dotreduce")
	a.i("VADDPD Y1, Y0, Y0")
	a.i("VADDPD Y3, Y2, Y2")
	a.i("VADDPD Y2, Y0, Y0")
	a.i("VEXTRACTF128 $1, Y0, X1")
	a.i("VADDPD X1, X0, X0")
	a.i("VHADDPD X0, X0, X0")
	a.i("VMOVSD X0, ret+48(FP)")
	a.ret()
}

// elementwise writes name(dst, x, ...) for i < len(dst) &^ 15: after the
// instructions head, load four vectors of x from SI, apply each of ops to
// each vector (op(offset, register number)), store them to DI and advance
// the pointers ptrs.
func elementwise(a *asm, name string, frame int, head []string, ptrs []string, ops ...func(off, v int) string) {
	a.text(name, frame)
	for _, s := range head {
		a.i("%s", s)
	}
	a.label(name + "loop")
	for v := range 4 {
		a.i("VMOVUPD %d(SI), Y%d", 32*v, v)
	}
	for _, op := range ops {
		for v := range 4 {
			a.i("%s", op(32*v, v))
		}
	}
	for v := range 4 {
		a.i("VMOVUPD Y%d, %d(DI)", v, 32*v)
	}
	for _, r := range ptrs {
		a.i("ADDQ $128, %s", r)
	}
	a.next(name, "done")
	a.ret()
}

// mul writes mulAVX(dst, x, y []float64).
func mul(a *asm) {
	elementwise(a, "mulAVX", 72,
		[]string{"MOVQ dst_base+0(FP), DI", "MOVQ dst_len+8(FP), CX", "MOVQ x_base+24(FP), SI", "MOVQ y_base+48(FP), DX",
			"SHRQ $4, CX", "JZ mulAVXdone"},
		[]string{"SI", "DX", "DI"},
		func(off, v int) string { return fmt.Sprintf("VMULPD %d(DX), Y%d, Y%d", off, v, v) })
}

// standardize writes standardize_amd64.s.
func standardize() string {
	a := &asm{}
	a.comment("func standardizeAVX(dst []float64, x []float64, center, scale float64)", "",
		"dst[i] = (x[i] − center) / scale for i < len(dst) &^ 15 (x at least as",
		"long is the caller's job). Four independent divisions are in flight per",
		"iteration: the divider, not the loads, bounds the loop.")
	elementwise(a, "standardizeAVX", 64,
		[]string{"MOVQ dst_base+0(FP), DI", "MOVQ dst_len+8(FP), CX", "MOVQ x_base+24(FP), SI",
			"VBROADCASTSD center+48(FP), Y4", "VBROADCASTSD scale+56(FP), Y5", "SHRQ $4, CX", "JZ standardizeAVXdone"},
		[]string{"SI", "DI"},
		func(_, v int) string { return fmt.Sprintf("VSUBPD Y4, Y%d, Y%d", v, v) },
		func(_, v int) string { return fmt.Sprintf("VDIVPD Y5, Y%d, Y%d", v, v) })
	return a.String()
}
