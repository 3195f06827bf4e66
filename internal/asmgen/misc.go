package main

// Small kernels of one function each.

// adam writes adam_amd64.s: package lstm's Adam update, four at a time.
func adam() string {
	a := &asm{}
	a.comment("func adamAVX(w []float64, g []float64, mom []float64, vel []float64, k *[7]float64)",
		"",
		"The Adam update of adamUpdate (train.go) for i < len(w) &^ 3, four at a",
		"time, with k = {β1, 1−β1, β2, 1−β2, step size, √(bias correction 2), ε}",
		"and the same operations in the same order as the Go loop, none fused:",
		"",
		"\tmom = β1·mom + (1−β1)·g",
		"\tvel = β2·vel + ((1−β2)·g)·g",
		"\tw   = w − (step·mom) / (√vel / √bc2 + ε)",
		"",
		"g, mom and vel must be at least as long as w (the caller's job).")
	a.text("adamAVX", 104)
	lines(a, "MOVQ w_base+0(FP), DI", "MOVQ w_len+8(FP), CX", "MOVQ g_base+24(FP), SI", "MOVQ mom_base+48(FP), R8",
		"MOVQ vel_base+72(FP), R9", "MOVQ k+96(FP), AX", "SHRQ $2, CX", "JZ adamdone")
	for i := range 7 {
		a.i("VBROADCASTSD %d(AX), Y%d", 8*i, 9+i)
	}
	a.label("adamloop")
	lines(a, "VMOVUPD (SI), Y0",
		"VMULPD (R8), Y9, Y1", "VMULPD Y0, Y10, Y2", "VADDPD Y2, Y1, Y1", "VMOVUPD Y1, (R8)", // mom
		"VMULPD (R9), Y11, Y3", "VMULPD Y0, Y12, Y4", "VMULPD Y0, Y4, Y4", "VADDPD Y4, Y3, Y3", "VMOVUPD Y3, (R9)", // vel
		"VSQRTPD Y3, Y5", "VDIVPD Y14, Y5, Y5", "VADDPD Y15, Y5, Y5", "VMULPD Y1, Y13, Y6", "VDIVPD Y5, Y6, Y6",
		"VMOVUPD (DI), Y7", "VSUBPD Y6, Y7, Y7", "VMOVUPD Y7, (DI)", // w
		"ADDQ $32, SI", "ADDQ $32, DI", "ADDQ $32, R8", "ADDQ $32, R9", "DECQ CX", "JNZ adamloop")
	a.label("adamdone")
	lines(a, "VZEROUPPER", "RET")
	return a.String()
}

// scan writes scan_amd64.s: package lstm's list of the non-zeros of a row.
func scan() string {
	a := &asm{}
	a.comment("func nonZero16(x []float64, idx []int32) int",
		"",
		"Writes to idx, in increasing order, the index of every x[i] != 0 (a NaN",
		"counts, as it compares unequal; -0 does not) for i < len(x) &^ 15, and",
		"returns how many there are; idx must have room for all of them (the",
		"caller's job). Blocks of sixteen whose bits are all zero, most of a",
		"sparse row, cost one OR of four vectors and a test.")
	a.text("nonZero16", 56)
	lines(a, "MOVQ x_base+0(FP), SI", "MOVQ x_len+8(FP), CX", "MOVQ idx_base+24(FP), DI", "XORQ AX, AX", "XORQ DX, DX",
		"VXORPD Y15, Y15, Y15", "SHRQ $4, CX", "JZ nzdone")
	a.label("nzloop")
	lines(a, "VMOVDQU 0(SI), Y0", "VPOR 32(SI), Y0, Y0", "VPOR 64(SI), Y0, Y0", "VPOR 96(SI), Y0, Y0", "VPTEST Y0, Y0", "JNZ nzblock")
	a.label("nznext")
	lines(a, "ADDQ $128, SI", "ADDQ $16, DX", "DECQ CX", "JNZ nzloop")
	a.label("nzdone")
	lines(a, "MOVQ AX, ret+48(FP)", "VZEROUPPER", "RET")
	a.label("nzblock")
	a.i("// A 16-bit mask of the elements that compare unequal to zero")
	a.i("// (predicate 4, NEQ_UQ: true for NaN).")
	for v := range 4 {
		a.i("VCMPPD $4, %d(SI), Y15, Y1", 32*v)
		if v == 0 {
			a.i("VMOVMSKPD Y1, BX")
			continue
		}
		lines(a, "VMOVMSKPD Y1, R8")
		a.i("SHLQ $%d, R8", 4*v)
		a.i("ORQ R8, BX")
	}
	lines(a, "TESTQ BX, BX", "JZ nznext")
	a.label("nzbits")
	lines(a, "BSFQ BX, R8", "ADDQ DX, R8", "MOVL R8, (DI)(AX*4)", "INCQ AX", "LEAQ -1(BX), R9", "ANDQ R9, BX", "JNZ nzbits", "JMP nznext")
	return a.String()
}

// prefetch writes prefetch_amd64.s: package vmath's hint to bring a slice
// into the L2 cache.
func prefetch() string {
	a := &asm{}
	a.comment("func prefetchL2(p *float64, n int)",
		"",
		"PREFETCHT1 (into the second-level cache and above) for every 64-byte",
		"line that [p, p+8n) touches. Prefetches neither fault nor change",
		"memory.")
	a.text("prefetchL2", 16)
	lines(a, "MOVQ p+0(FP), SI", "MOVQ n+8(FP), CX", "LEAQ (SI)(CX*8), CX", "ANDQ $-64, SI")
	a.label("pfloop")
	lines(a, "PREFETCHT1 (SI)", "ADDQ $64, SI", "CMPQ SI, CX", "JB pfloop", "RET")
	return a.String()
}

// lines writes each instruction as it is.
func lines(a *asm, ls ...string) {
	for _, l := range ls {
		a.i("%s", l)
	}
}
