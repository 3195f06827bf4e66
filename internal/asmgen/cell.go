package main

// The fused LSTM cell kernels of package lstm (cell_amd64.s): float64 and
// float32, in AVX2/FMA (cell64, cell32). The activations are written once
// (core) and unrolled here, interleaving two independent evaluations
// instruction by instruction (16 vector registers hold two chains of five), which assembler macros would need a dozen
// register arguments for; the generated file's comment explains the
// arithmetic.

import (
	"fmt"
	"strings"
)

const cellHeader = `// The fused cell of the forward pass (cellForward): the four gates'
// activations, the new cell state, its tanh and the hidden state of several
// rows in one call, in float64 (cell64) and float32 (cell32), AVX2/FMA.
//
// σ(x) = 1/(1+e^t) with t = −x and tanh(x) = (1−e^t)/(1+e^t) with t = −2x.
// e^t = 2^k·e^r by Cody and Waite's reduction (k = round(t·log2 e),
// r = t − k·ln2 with ln 2 in a high and a low part, |r| ≤ ln2/2), and e^r
// by its [m/m] Padé approximant N(r)/D(r), D(r) = N(−r), m = 6 in float64
// and 3 in float32, evaluated as N = E + r·O and D = E − r·O with E and O
// the even and odd parts in s = r². Then
//
//	σ(x) = D / (D + 2^k·N),  tanh(x) = (D − 2^k·N) / (D + 2^k·N),
//
// one division each, as 1/(1+e^t) costs. The truncation error of the
// approximant on |r| ≤ ln2/2 is below 2e-19 (m = 6) and 6e-9 (m = 3)
// relative, far below an ulp; against the degree-12 (float64) and degree-7
// (float32) Taylor polynomials of internal/vmath and vsigmoid32 it needs 7
// and 4 multiply-adds instead of 12 and 7, and the scaling, the sum and the
// division of the activation serve the approximant's quotient as well.
// Arguments are clamped so that 2^k stays a normal number (|t| ≤ 708, or
// 87 in float32); the clamps keep a NaN (MIN and MAX return their second
// source when one is NaN). TestActivationAccuracy bounds the errors.
`

// cellConst is one entry of a cell kernel's constant table.
type cellConst struct{ name, bits string }

func constsFor(double bool) []cellConst {
	if double {
		return []cellConst{
			{"nl1", "0xbff71547652b82fe"}, // -log2 e
			{"nl2", "0xc0071547652b82fe"}, // -2 log2 e
			{"ln2hi", "0x3fe62e42fee00000"}, {"ln2lo", "0x3dea39ef35793c76"},
			{"magic", "0x4338000000000000"}, {"bias", "0x00000000000003ff"},
			{"hi1", "0x4086200000000000"}, {"lo1", "0xc086200000000000"}, // ±708
			{"hi2", "0x4076200000000000"}, {"lo2", "0xc076200000000000"}, // ±354
			{"one", "0x3ff0000000000000"},
			{"e1", "0x3fbd1745d1745d17"}, {"e2", "0x3f54afd6a052bf5b"}, {"e3", "0x3eb937e11175f095"},
			{"o0", "0x3fe0000000000000"}, {"o1", "0x3f8f07c1f07c1f08"}, {"o2", "0x3f108cabb37565e2"},
		}
	}
	return []cellConst{
		{"nl1", "0xbfb8aa3b"}, {"nl2", "0xc038aa3b"},
		{"ln2hi", "0x3f318000"}, {"ln2lo", "0xb95e8083"},
		{"bias", "0x0000007f"},
		{"hi1", "0x42ae0000"}, {"lo1", "0xc2ae0000"}, // ±87
		{"hi2", "0x422e0000"}, {"lo2", "0xc22e0000"}, // ±43.5
		{"one", "0x3f800000"},
		{"e1", "0x3dcccccd"}, {"o0", "0x3f000000"}, {"o1", "0x3c088889"},
	}
}

// cell returns the text of cell_amd64.s after the preamble.
func cell() string {
	var out []string
	out = append(out, cellHeader)
	out = kernel(out, true)
	out = kernel(out, false)
	return strings.Join(out, "\n") + "\n"
}

// interleave merges the instruction lists one instruction of each at a time.
func interleave(lists [][]string) []string {
	n := 0
	for _, l := range lists {
		n = max(n, len(l))
	}
	var out []string
	for i := range n {
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
			}
		}
	}
	return out
}

// kernel appends the constant table and the code of one kernel: float64
// (double) or float32.
func kernel(out []string, double bool) []string {
	w := func(s string) { out = append(out, s) }
	P, ft, esz := "PS", "float32", 4
	if double {
		P, ft, esz = "PD", "float64", 8
	}
	vb, R, tab, name := 32, "Y", "cy", "cell32"
	if double {
		name = "cell64"
	}
	if double {
		tab += "d"
	} else {
		tab += "s"
	}
	consts := constsFor(double)
	// The constant table: full vectors.
	rep := 32 / esz
	for i, c := range consts {
		for l := range rep {
			w(fmt.Sprintf("DATA %s<>+%d(SB)/%d, $%s", tab, (i*rep+l)*esz, esz, c.bits))
		}
	}
	w(fmt.Sprintf("GLOBL %s<>(SB), RODATA|NOPTR, $%d", tab, len(consts)*rep*esz))
	w("")
	C := map[string]string{}
	for i, c := range consts {
		C[c.name] = fmt.Sprintf("%s<>+%d(SB)", tab, i*rep*esz)
	}
	cm := func(op, c string) string { return op + " " + C[c] } // constant memory operand
	nchains := 2
	chains := make([][5]string, nchains)
	for i := range chains {
		for j := range 5 {
			chains[i][j] = fmt.Sprintf("%s%d", R, 5*i+j)
		}
	}
	HI, LO, rnd := "Y14", "Y13", "VROUND"+P+" $0"
	movu := "VMOVUPS"
	if double {
		movu = "VMOVUPD"
	}
	load := func(c, reg string) string { // a whole constant vector into reg
		return fmt.Sprintf("%s %s, %s", movu, C[c], reg)
	}
	// core evaluates σ (sig) or tanh of the vector in ch[0], in place,
	// with ch[1:] as scratch.
	core := func(ch [5]string, sig bool) []string {
		a, b, c, d, e := ch[0], ch[1], ch[2], ch[3], ch[4]
		var L []string
		l := func(f string, args ...any) { L = append(L, fmt.Sprintf(f, args...)) }
		l("VMIN%s %s, %s, %s", P, a, HI, a)
		l("VMAX%s %s, %s, %s", P, a, LO, a)
		if sig {
			l("%s, %s, %s", cm("VMUL"+P, "nl1"), a, b)
		} else {
			l("%s, %s, %s", cm("VMUL"+P, "nl2"), a, b)
		}
		l("%s, %s, %s", rnd, b, b)
		if !sig {
			l("VADD%s %s, %s, %s", P, a, a, a)
		}
		l("%s, %s, %s", cm("VFNMSUB231"+P, "ln2hi"), b, a)
		l("%s, %s, %s", cm("VFNMADD231"+P, "ln2lo"), b, a)
		l("VMUL%s %s, %s, %s", P, a, a, c)
		if double {
			L = append(L, load("e3", d))
			l("%s, %s, %s", cm("VFMADD213"+P, "e2"), c, d)
			l("%s, %s, %s", cm("VFMADD213"+P, "e1"), c, d)
			l("%s, %s, %s", cm("VFMADD213"+P, "one"), c, d)
			L = append(L, load("o2", e))
			l("%s, %s, %s", cm("VFMADD213"+P, "o1"), c, e)
			l("%s, %s, %s", cm("VFMADD213"+P, "o0"), c, e)
		} else {
			L = append(L, load("e1", d))
			l("%s, %s, %s", cm("VFMADD213"+P, "one"), c, d)
			L = append(L, load("o1", e))
			l("%s, %s, %s", cm("VFMADD213"+P, "o0"), c, e)
		}
		l("VMUL%s %s, %s, %s", P, e, a, e) // q = r·O
		l("VADD%s %s, %s, %s", P, e, d, a) // N = E + q
		l("VSUB%s %s, %s, %s", P, e, d, d) // D = E − q
		if double {
			l("%s, %s, %s", cm("VADDPD", "magic"), b, b)
			l("%s, %s, %s", cm("VPADDQ", "bias"), b, b)
			l("VPSLLQ $52, %s, %s", b, b)
		} else {
			l("VCVTPS2DQ %s, %s", b, b)
			l("%s, %s, %s", cm("VPADDD", "bias"), b, b)
			l("VPSLLD $23, %s, %s", b, b)
		}
		l("VMUL%s %s, %s, %s", P, b, a, a) // M = 2^k·N
		l("VADD%s %s, %s, %s", P, a, d, c) // D + M
		if !sig {
			l("VSUB%s %s, %s, %s", P, a, d, d) // D − M
		}
		l("VDIV%s %s, %s, %s", P, c, d, a) // result in a
		return L
	}
	// run applies core in place over BX bytes at AX.
	run := func(sig bool, pre string) []string {
		full := nchains * vb
		L := []string{fmt.Sprintf("CMPQ BX, $%d", full), "JB   " + pre + "one", pre + "many:"}
		var cores [][]string
		for i, ch := range chains {
			L = append(L, fmt.Sprintf("VMOVU%s %d(AX), %s", P, i*vb, ch[0]))
			cores = append(cores, core(ch, sig))
		}
		L = append(L, interleave(cores)...)
		for i, ch := range chains {
			L = append(L, fmt.Sprintf("VMOVU%s %s, %d(AX)", P, ch[0], i*vb))
		}
		L = append(L, fmt.Sprintf("ADDQ $%d, AX", full), fmt.Sprintf("SUBQ $%d, BX", full),
			fmt.Sprintf("CMPQ BX, $%d", full), "JAE  "+pre+"many")
		L = append(L, pre+"one:", "TESTQ BX, BX", "JZ   "+pre+"done")
		L = append(L, fmt.Sprintf("VMOVU%s (AX), %s", P, chains[0][0]))
		L = append(L, core(chains[0], sig)...)
		L = append(L, fmt.Sprintf("VMOVU%s %s, (AX)", P, chains[0][0]))
		L = append(L, fmt.Sprintf("ADDQ $%d, AX", vb), fmt.Sprintf("SUBQ $%d, BX", vb), "JMP  "+pre+"one")
		return append(L, pre+"done:")
	}
	clamps := func(which string) []string {
		return []string{fmt.Sprintf("VMOVU%s %s, %s", P, C["hi"+which], HI), fmt.Sprintf("VMOVU%s %s, %s", P, C["lo"+which], LO)}
	}
	shift := 2
	if double {
		shift = 3
	}
	lanes := vb / esz
	isa := "AVX2/FMA"
	w(fmt.Sprintf("// func %s(hid int, rows int, gate *%s, cp *%s, c *%s, tc *%s, h *%s)", name, ft, ft, ft, ft, ft))
	w("//")
	w("// For each of rows rows, gate holding 4H pre-activations (i, f, g, o) a")
	w("// row, cp, c, tc and h H = hid values a row (cp nil for a zero previous")
	w("// state; cp may be c): i, f, o = σ(·) and g = tanh(·) in place,")
	w("// c = f·cp + i·g (each product rounded, then the sum), tc = tanh(c),")
	w(fmt.Sprintf("// h = o·tc. H must be a positive multiple of %d. %s.", lanes, isa))
	w(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $0-56", name))
	for _, l := range []string{
		"MOVQ hid+0(FP), R8", "MOVQ rows+8(FP), CX", "MOVQ gate+16(FP), SI", "MOVQ cp+24(FP), DX",
		"MOVQ c+32(FP), DI", "MOVQ tc+40(FP), R10", "MOVQ h+48(FP), R11",
		fmt.Sprintf("SHLQ $%d, R8", shift), "LEAQ (R8)(R8*2), R9", "TESTQ CX, CX", "JZ   " + name + "ret",
	} {
		w("\t" + l)
	}
	w(name + "row:")
	L := []string{"// σ over i and f, tanh over g, σ over o."}
	L = append(L, clamps("1")...)
	L = append(L, "MOVQ SI, AX", "LEAQ (R8)(R8*1), BX")
	L = append(L, run(true, name+"if")...)
	L = append(L, clamps("2")...)
	L = append(L, "MOVQ R8, BX")
	L = append(L, run(false, name+"g")...)
	L = append(L, clamps("1")...)
	L = append(L, "MOVQ R8, BX")
	L = append(L, run(true, name+"o")...)
	L = append(L, "// c = f·cp + i·g, also into tc.")
	L = append(L, "XORQ BX, BX", "LEAQ (SI)(R8*2), R12", "LEAQ (SI)(R8*1), R13")
	L = append(L, name+"c:")
	L = append(L, fmt.Sprintf("VMOVU%s (SI)(BX*1), %s0", P, R), fmt.Sprintf("VMUL%s (R12)(BX*1), %s0, %s0", P, R, R),
		"TESTQ DX, DX", "JZ   "+name+"nocp",
		fmt.Sprintf("VMOVU%s (R13)(BX*1), %s1", P, R), fmt.Sprintf("VMUL%s (DX)(BX*1), %s1, %s1", P, R, R),
		fmt.Sprintf("VADD%s %s0, %s1, %s0", P, R, R, R))
	L = append(L, name+"nocp:")
	L = append(L, fmt.Sprintf("VMOVU%s %s0, (DI)(BX*1)", P, R), fmt.Sprintf("VMOVU%s %s0, (R10)(BX*1)", P, R),
		fmt.Sprintf("ADDQ $%d, BX", vb), "CMPQ BX, R8", "JB   "+name+"c")
	L = append(L, "// tc = tanh(c), then h = o·tc.")
	L = append(L, clamps("2")...)
	L = append(L, "MOVQ R10, AX", "MOVQ R8, BX")
	L = append(L, run(false, name+"tc")...)
	L = append(L, "XORQ BX, BX", "LEAQ (SI)(R9*1), R12")
	L = append(L, name+"h:")
	L = append(L, fmt.Sprintf("VMOVU%s (R12)(BX*1), %s0", P, R), fmt.Sprintf("VMUL%s (R10)(BX*1), %s0, %s0", P, R, R),
		fmt.Sprintf("VMOVU%s %s0, (R11)(BX*1)", P, R), fmt.Sprintf("ADDQ $%d, BX", vb), "CMPQ BX, R8", "JB   "+name+"h")
	L = append(L, "LEAQ (SI)(R8*4), SI", "ADDQ R8, DI", "ADDQ R8, R10", "ADDQ R8, R11", "TESTQ DX, DX", "JZ   "+name+"next", "ADDQ R8, DX")
	L = append(L, name+"next:", "DECQ CX", "JNZ  "+name+"row", name+"ret:", "VZEROUPPER", "RET")
	for _, l := range L {
		if strings.HasSuffix(l, ":") {
			w("")
			w(l)
		} else {
			w("\t" + l)
		}
	}
	w("")
	return out
}
