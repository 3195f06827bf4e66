package main

// bwd writes bwd_amd64.s: the elementwise step of backpropagation through
// time of package lstm (bwd64, bwd32).
func bwd() string {
	a := &asm{}
	C := a.table("bwdone", constant{"one64", 8, 0x3ff0000000000000}, constant{"one32", 4, 0x3f800000})
	a.blank()
	a.comment("Per row, for each vector of hidden units j, with the activated gates",
		"i, f, g, o, tanh(c) tc, the gradient u from above, dh and dc from the next",
		"step and cp the previous cell state, exactly as engine.backward's Go loop",
		"computes them (the same operations in the same order, none fused):",
		"",
		"\tdh' = u + dh",
		"\tdc' = dc + (dh'·o)·(1 − tc·tc)",
		"\ti ← ((dc'·g)·i)·(1 − i)",
		"\tf ← ((dc'·cp)·f)·(1 − f)",
		"\tg ← (dc'·i)·(1 − g·g)",
		"\to ← ((dh'·tc)·o)·(1 − o)",
		"\tdc ← dc'·f")
	a.blank()
	a.comment("func bwd64(hid int, rows int, gate *float64, tc *float64, u *float64, dh *float64, dc *float64, cp *float64, cpStride int)",
		"",
		"The elementwise step of backpropagation through time for rows rows:",
		"gate holds 4H activated gates a row, turned into the gradients of their",
		"pre-activations in place; tc, u, dh and dc hold H = hid values a row, dc",
		"updated in place; cp rows are cpStride apart (0 to reuse one row of",
		"zeros). H must be a positive multiple of four.")
	bwdKernel(a, f64, "bwd64", C["one64"])
	a.blank()
	a.comment("func bwd32(hid int, rows int, gate *float32, tc *float32, u *float32, dh *float32, dc *float32, cp *float32, cpStride int)",
		"",
		"bwd64 in float32; H must be a positive multiple of eight.")
	bwdKernel(a, f32, "bwd32", C["one32"])
	return a.String()
}

// bwdKernel writes one precision's kernel; one is the operand of a vector
// of ones.
func bwdKernel(a *asm, p prec, name, one string) {
	s, mov := p.s, p.movu
	a.text(name, 72)
	for _, l := range []string{"hid+0(FP), R8", "rows+8(FP), CX", "gate+16(FP), SI", "tc+24(FP), DI", "u+32(FP), R10",
		"dh+40(FP), R11", "dc+48(FP), R12", "cp+56(FP), R13", "cpStride+64(FP), DX"} {
		a.i("MOVQ %s", l)
	}
	a.i("SHLQ $%d, R8", p.shift)
	a.i("SHLQ $%d, DX", p.shift)
	a.i("LEAQ (R8)(R8*2), R9")
	a.i("%s %s, Y15", mov, one)
	a.i("TESTQ CX, CX")
	a.i("JZ %sret", name)
	a.label(name + "row")
	a.i("XORQ BX, BX")
	a.i("MOVQ SI, AX")
	a.label(name + "col")
	for _, l := range [][2]string{
		{mov, "(AX), Y0"}, {mov, "(AX)(R8*1), Y1"}, {mov, "(AX)(R8*2), Y2"}, {mov, "(AX)(R9*1), Y3"}, // i f g o
		{mov, "(DI)(BX*1), Y4"},                                       // tc
		{mov, "(R10)(BX*1), Y5"}, {"VADD" + s, "(R11)(BX*1), Y5, Y5"}, // dh' = u + dh
		{"VMUL" + s, "Y4, Y4, Y6"}, {"VSUB" + s, "Y6, Y15, Y6"}, // 1 − tc·tc
		{"VMUL" + s, "Y3, Y5, Y7"}, {"VMUL" + s, "Y6, Y7, Y7"}, {"VADD" + s, "(R12)(BX*1), Y7, Y7"}, // dc'
		{"VMUL" + s, "Y2, Y7, Y8"}, {"VMUL" + s, "Y0, Y8, Y8"}, {"VSUB" + s, "Y0, Y15, Y9"}, {"VMUL" + s, "Y9, Y8, Y8"},
		{mov, "Y8, (AX)"}, // i
		{"VMUL" + s, "(R13)(BX*1), Y7, Y9"}, {"VMUL" + s, "Y1, Y9, Y9"}, {"VSUB" + s, "Y1, Y15, Y10"}, {"VMUL" + s, "Y10, Y9, Y9"},
		{mov, "Y9, (AX)(R8*1)"}, // f
		{"VMUL" + s, "Y0, Y7, Y10"}, {"VMUL" + s, "Y2, Y2, Y11"}, {"VSUB" + s, "Y11, Y15, Y11"}, {"VMUL" + s, "Y11, Y10, Y10"},
		{mov, "Y10, (AX)(R8*2)"}, // g
		{"VMUL" + s, "Y4, Y5, Y11"}, {"VMUL" + s, "Y3, Y11, Y11"}, {"VSUB" + s, "Y3, Y15, Y12"}, {"VMUL" + s, "Y12, Y11, Y11"},
		{mov, "Y11, (AX)(R9*1)"},                               // o
		{"VMUL" + s, "Y1, Y7, Y12"}, {mov, "Y12, (R12)(BX*1)"}, // dc
		{"ADDQ", "$32, AX"}, {"ADDQ", "$32, BX"}, {"CMPQ", "BX, R8"}, {"JB", name + "col"},
		{"LEAQ", "(SI)(R8*4), SI"}, {"ADDQ", "R8, DI"}, {"ADDQ", "R8, R10"}, {"ADDQ", "R8, R11"}, {"ADDQ", "R8, R12"},
		{"ADDQ", "DX, R13"}, {"DECQ", "CX"}, {"JNZ", name + "row"},
	} {
		a.i("%s %s", l[0], l[1])
	}
	a.label(name + "ret")
	a.ret()
}
