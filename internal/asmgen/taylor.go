package main

import (
	"fmt"
	"math"
)

// The Taylor family of vector activations: sigmoid and tanh over a slice
// in place, float64 in package vmath (vsigmoid, vtanh) and float32 in
// package lstm (vsigmoid32, vtanh32), both built on one exp (onePlusExp).

// taylorConsts is the constant table of onePlusExp: ln 2 split by Cody and
// Waite (Cephes' split in float32), the clamps, 1, 2, the exponent bias and
// the coefficients 1/n! of the Taylor polynomial from n = deg down to 2.
func taylorConsts(p prec) []constant {
	var cs []constant
	if p == f64 {
		cs = []constant{
			{"log2e", 8, 0x3ff71547652b82fe},
			{"ln2hi", 8, 0x3fe62e42fee00000}, {"ln2lo", 8, 0x3dea39ef35793c76},
			{"magic", 8, 0x4338000000000000},                             // 1.5·2^52: adding it rounds to an integer in the low bits
			{"hi", 8, 0x4086200000000000}, {"lo", 8, 0xc086200000000000}, // ±708
			{"one", 8, 0x3ff0000000000000}, {"two", 8, 0x4000000000000000},
			{"bias", 8, 0x3ff},
		}
	} else {
		cs = []constant{
			{"log2e", 4, 0x3fb8aa3b},
			{"ln2hi", 4, 0x3f318000}, {"ln2lo", 4, 0xb95e8083},
			{"hi", 4, 0x42ae0000}, {"lo", 4, 0xc2ae0000}, // ±87
			{"one", 4, 0x3f800000}, {"two", 4, 0x40000000},
			{"bias", 4, 0x7f},
		}
	}
	for n := taylorDegree(p); n >= 2; n-- {
		f := 1.0
		for k := 2; k <= n; k++ {
			f *= float64(k)
		}
		c := constant{fmt.Sprintf("c%d", n), p.size, math.Float64bits(1 / f)}
		if p == f32 {
			c.bits = uint64(math.Float32bits(float32(1 / f)))
		}
		cs = append(cs, c)
	}
	return cs
}

// taylorDegree is the degree of the polynomial: its truncation error on
// |r| ≤ ln2/2 is below 2e-16 relative in float64 (12) and 3e-9 in float32
// (7).
func taylorDegree(p prec) int {
	if p == f64 {
		return 12
	}
	return 7
}

// onePlusExp sets Y3 = 1 + exp(Y0) for each lane, Y0 first clamped to
// [Y7, Y6]; Y1 and Y2 are scratch. C is the constant table.
func onePlusExp(a *asm, p prec, C map[string]string) {
	s := p.s
	a.i("VMIN%s Y0, Y6, Y0", s)
	a.i("VMAX%s Y0, Y7, Y0", s)
	a.i("VMUL%s %s, Y0, Y1", s, C["log2e"]) // k = round(x·log2 e)
	a.i("VROUND%s $0, Y1, Y1", s)
	a.i("VMOVA%s Y0, Y2", s)
	a.i("VFNMADD231%s %s, Y1, Y2", s, C["ln2hi"]) // r = x − k·ln 2
	a.i("VFNMADD231%s %s, Y1, Y2", s, C["ln2lo"])
	d := taylorDegree(p)
	a.i("%s %s, Y3", p.movu, C[fmt.Sprint("c", d)]) // Horner
	for n := d - 1; n >= 2; n-- {
		a.i("VFMADD213%s %s, Y2, Y3", s, C[fmt.Sprint("c", n)])
	}
	a.i("VFMADD213%s %s, Y2, Y3", s, C["one"])
	a.i("VFMADD213%s %s, Y2, Y3", s, C["one"])
	if p == f64 { // 2^k into the exponent field
		a.i("VADDPD %s, Y1, Y1", C["magic"])
		a.i("VPADDQ %s, Y1, Y1", C["bias"])
		a.i("VPSLLQ $52, Y1, Y1")
	} else {
		a.i("VCVTPS2DQ Y1, Y1")
		a.i("VPADDD %s, Y1, Y1", C["bias"])
		a.i("VPSLLD $23, Y1, Y1")
	}
	a.i("VMUL%s Y1, Y3, Y3", s)
	a.i("VADD%s %s, Y3, Y3", s, C["one"])
}

// activation writes name(x []T): x[i] = σ(x[i]) = 1/(1+exp(−x[i])) or,
// with tanh, tanh(x[i]) = 2/(1+exp(−2x[i])) − 1, for the first len(x)
// rounded down to whole vectors.
func activation(a *asm, p prec, C map[string]string, name string, tanh bool) {
	what := "1/(1+exp(-x[i]))"
	if tanh {
		what = "tanh(x[i]) = 2/(1+exp(-2x[i])) − 1"
	}
	a.comment(fmt.Sprintf("func %s(x []%s)", name, p.goT),
		fmt.Sprintf("x[i] = %s for the first len(x) &^ %d elements.", what, p.lanes(32)-1))
	a.text(name, 24)
	a.i("MOVQ x_base+0(FP), SI")
	a.i("MOVQ x_len+8(FP), CX")
	a.i("SHRQ $%d, CX", 5-p.shift)
	a.i("JZ %sdone", name)
	a.i("VXOR%s Y4, Y4, Y4", p.s)
	a.i("%s %s, Y6", p.movu, C["hi"])
	a.i("%s %s, Y7", p.movu, C["lo"])
	a.label(name + "loop")
	a.i("%s (SI), Y0", p.movu)
	if tanh {
		a.i("VADD%s Y0, Y0, Y0", p.s)
	}
	a.i("VSUB%s Y0, Y4, Y0", p.s)
	onePlusExp(a, p, C)
	if tanh {
		a.i("%s %s, Y5", p.movu, C["two"])
	} else {
		a.i("%s %s, Y5", p.movu, C["one"])
	}
	a.i("VDIV%s Y3, Y5, Y5", p.s)
	if tanh {
		a.i("VSUB%s %s, Y5, Y5", p.s, C["one"])
	}
	a.i("%s Y5, (SI)", p.movu)
	a.i("ADDQ $32, SI")
	a.next(name, "done")
	a.ret()
	a.blank()
}

// taylor writes the constant table (named table) and the two activations
// of precision p, suffixed suffix.
func taylor(a *asm, p prec, table, suffix string) {
	C := a.table(table, taylorConsts(p)...)
	a.blank()
	activation(a, p, C, "vsigmoid"+suffix, false)
	activation(a, p, C, "vtanh"+suffix, true)
}

// vmath writes vmath_amd64.s: the float64 activations and the streaming
// kernels of package vmath.
func vmath() string {
	a := &asm{}
	a.comment("Vector sigmoid and tanh for AVX2/FMA (package vmath). exp(x) is computed as 2^k·p(r)",
		"with k = round(x·log2 e), r = x − k·ln 2 (ln 2 split in a high and a low",
		"part, Cody and Waite), and p the degree-12 Taylor polynomial, whose",
		"truncation error on |r| ≤ ln2/2 is below 2e-16 relative. Arguments are",
		"clamped to ±708 so that 2^k stays a normal number (the clamp keeps a NaN",
		"argument NaN: MINPD and MAXPD return their second source when one is NaN); the sigmoid and tanh",
		"built on it are then within a few ulps of the exact values (tested against",
		"package math in vmath_test.go).")
	a.blank()
	taylor(a, f64, "expc", "")
	a.comment("func axpyFMA(a float64, x []float64, y []float64)", "",
		"y[i] = a·x[i] + y[i], fused, for i < len(y) &^ 15 (len(x) ≥ len(y) is",
		"the caller's job).")
	axpy(a, f64, "axpyFMA", 4)
	a.blank()
	dot(a)
	a.blank()
	a.comment("func mulAVX(dst []float64, x []float64, y []float64)", "",
		"dst[i] = x[i]·y[i] for i < len(dst) &^ 15 (x and y at least as long is",
		"the caller's job).")
	mul(a)
	return a.String()
}
