package main

// rowTerms writes rows_amd64.s: the per-row terms of package logit's
// Newton pass (rowTermsAVX2), as rowTerms's Go loop computes each.
func rowTerms() string {
	a := &asm{}
	a.comment("func rowTermsAVX2(g, h, eta, mu []float64, lab []uint8, w []float64, w0, w1 float64) bool",
		"",
		"Four rows per iteration, as rowTerms's Go loop computes each:",
		"y = lab&1 as 0.0 or 1.0, the weight w[i] or w0/w1 chosen by y,",
		"g = w·(mu − y), h = (w·mu)·(1 − mu), and the wrong-side test",
		"(2y − 1)·eta ≤ 0 for w ≠ 0 (NaN weights count as non-zero, as in Go),",
		"collected in a mask.")
	a.text("rowTermsAVX2", 161)
	lines(a, "MOVQ g_base+0(FP), DI", "MOVQ g_len+8(FP), CX", "MOVQ h_base+24(FP), R8", "MOVQ eta_base+48(FP), R9",
		"MOVQ mu_base+72(FP), R10", "MOVQ lab_base+96(FP), R11", "MOVQ w_base+120(FP), R12",
		"VBROADCASTSD w0+144(FP), Y10", "VBROADCASTSD w1+152(FP), Y11",
		"MOVQ $1, AX", "MOVQ AX, X12", "VPBROADCASTQ X12, Y12 // int64 1 in every lane",
		"MOVQ $0x3ff0000000000000, AX", "MOVQ AX, X13", "VPBROADCASTQ X13, Y13 // 1.0",
		"VXORPD Y14, Y14, Y14 // 0.0",
		"VXORPD Y15, Y15, Y15 // wrong-side mask, accumulated",
		"SHRQ $2, CX", "JZ done")
	a.label("loop")
	lines(a, "MOVL (R11), AX", "MOVQ AX, X0",
		"VPMOVZXBQ X0, Y0 // four labels as int64",
		"VPAND Y12, Y0, Y0 // lab & 1",
		"VPCMPEQQ Y12, Y0, Y1 // all ones where y = 1",
		"VANDPD Y13, Y1, Y2 // y as 0.0 or 1.0",
		"TESTQ R12, R12", "JZ classw",
		"VMOVUPD (R12), Y3 // per-row weights",
		"ADDQ $32, R12", "JMP haveW")
	a.label("classw")
	lines(a, "VBLENDVPD Y1, Y11, Y10, Y3 // w1 where y = 1, else w0")
	a.label("haveW")
	lines(a, "VMOVUPD (R10), Y4 // mu",
		"VSUBPD Y2, Y4, Y5 // mu − y",
		"VMULPD Y3, Y5, Y5 // g = w·(mu − y)",
		"VMOVUPD Y5, (DI)",
		"VMULPD Y4, Y3, Y6 // w·mu",
		"VSUBPD Y4, Y13, Y7 // 1 − mu",
		"VMULPD Y7, Y6, Y6 // h",
		"VMOVUPD Y6, (R8)",
		"VADDPD Y2, Y2, Y8 // 2y",
		"VSUBPD Y13, Y8, Y8 // 2y − 1",
		"VMULPD (R9), Y8, Y8 // (2y − 1)·eta",
		"VCMPPD $0x02, Y14, Y8, Y8 // ≤ 0 (ordered: NaN is not)",
		"VCMPPD $0x04, Y14, Y3, Y9 // w ≠ 0 (unordered: NaN is)",
		"VANDPD Y9, Y8, Y8",
		"VORPD Y8, Y15, Y15",
		"ADDQ $4, R11", "ADDQ $32, R10", "ADDQ $32, R9", "ADDQ $32, R8", "ADDQ $32, DI",
		"DECQ CX", "JNZ loop")
	a.label("done")
	lines(a, "VMOVMSKPD Y15, AX", "TESTL AX, AX", "SETNE ret+160(FP)", "VZEROUPPER", "RET")
	return a.String()
}
