//go:build !purego

#include "textflag.h"

DATA bwdone<>+0(SB)/8, $0x3ff0000000000000
DATA bwdone<>+8(SB)/8, $0x3ff0000000000000
DATA bwdone<>+16(SB)/8, $0x3ff0000000000000
DATA bwdone<>+24(SB)/8, $0x3ff0000000000000
DATA bwdone<>+32(SB)/4, $0x3f800000
DATA bwdone<>+36(SB)/4, $0x3f800000
DATA bwdone<>+40(SB)/4, $0x3f800000
DATA bwdone<>+44(SB)/4, $0x3f800000
DATA bwdone<>+48(SB)/4, $0x3f800000
DATA bwdone<>+52(SB)/4, $0x3f800000
DATA bwdone<>+56(SB)/4, $0x3f800000
DATA bwdone<>+60(SB)/4, $0x3f800000
GLOBL bwdone<>(SB), RODATA|NOPTR, $64

// BWD is the body of bwd64 and bwd32, which differ in their element type
// only (MUL, ADD, SUB and MOVU of one precision, SHIFT log2 of its size,
// ONE the offset of a vector of ones in bwdone<>). Per row, for each
// vector of hidden units j, with the activated gates i, f, g, o, tanh(c) tc,
// the gradient u from above, dh and dc from the next step and cp the
// previous cell state, exactly as engine.backward's Go loop computes them
// (the same operations in the same order, none fused):
//
//	dh' = u + dh
//	dc' = dc + (dh'·o)·(1 − tc·tc)
//	i ← ((dc'·g)·i)·(1 − i)
//	f ← ((dc'·cp)·f)·(1 − f)
//	g ← (dc'·i)·(1 − g·g)
//	o ← ((dh'·tc)·o)·(1 − o)
//	dc ← dc'·f
#define BWD(MUL, ADD, SUB, MOVU, SHIFT, ONE, ROW, COL) \
	MOVQ hid+0(FP), R8 \
	MOVQ rows+8(FP), CX \
	MOVQ gate+16(FP), SI \
	MOVQ tc+24(FP), DI \
	MOVQ u+32(FP), R10 \
	MOVQ dh+40(FP), R11 \
	MOVQ dc+48(FP), R12 \
	MOVQ cp+56(FP), R13 \
	MOVQ cpStride+64(FP), DX \
	SHLQ $SHIFT, R8 \
	SHLQ $SHIFT, DX \
	LEAQ (R8)(R8*2), R9 \
	MOVU bwdone<>+ONE(SB), Y15 \
	TESTQ CX, CX \
	JZ   bwdret \
ROW: \
	XORQ BX, BX \
	MOVQ SI, AX \
COL: \
	MOVU (AX), Y0 \
	MOVU (AX)(R8*1), Y1 \
	MOVU (AX)(R8*2), Y2 \
	MOVU (AX)(R9*1), Y3 \
	MOVU (DI)(BX*1), Y4 \
	MOVU (R10)(BX*1), Y5 \
	ADD  (R11)(BX*1), Y5, Y5 \
	MUL  Y4, Y4, Y6 \
	SUB  Y6, Y15, Y6 \
	MUL  Y3, Y5, Y7 \
	MUL  Y6, Y7, Y7 \
	ADD  (R12)(BX*1), Y7, Y7 \
	MUL  Y2, Y7, Y8 \
	MUL  Y0, Y8, Y8 \
	SUB  Y0, Y15, Y9 \
	MUL  Y9, Y8, Y8 \
	MOVU Y8, (AX) \
	MUL  (R13)(BX*1), Y7, Y9 \
	MUL  Y1, Y9, Y9 \
	SUB  Y1, Y15, Y10 \
	MUL  Y10, Y9, Y9 \
	MOVU Y9, (AX)(R8*1) \
	MUL  Y0, Y7, Y10 \
	MUL  Y2, Y2, Y11 \
	SUB  Y11, Y15, Y11 \
	MUL  Y11, Y10, Y10 \
	MOVU Y10, (AX)(R8*2) \
	MUL  Y4, Y5, Y11 \
	MUL  Y3, Y11, Y11 \
	SUB  Y3, Y15, Y12 \
	MUL  Y12, Y11, Y11 \
	MOVU Y11, (AX)(R9*1) \
	MUL  Y1, Y7, Y12 \
	MOVU Y12, (R12)(BX*1) \
	ADDQ $32, AX \
	ADDQ $32, BX \
	CMPQ BX, R8 \
	JB   COL \
	LEAQ (SI)(R8*4), SI \
	ADDQ R8, DI \
	ADDQ R8, R10 \
	ADDQ R8, R11 \
	ADDQ R8, R12 \
	ADDQ DX, R13 \
	DECQ CX \
	JNZ  ROW \
bwdret: \
	VZEROUPPER \
	RET

// func bwd64(hid int, rows int, gate *float64, tc *float64, u *float64, dh *float64, dc *float64, cp *float64, cpStride int)
//
// The elementwise step of backpropagation through time for rows rows:
// gate holds 4H activated gates a row, turned into the gradients of their
// pre-activations in place; tc, u, dh and dc hold H = hid values a row, dc
// updated in place; cp rows are cpStride apart (0 to reuse one row of
// zeros). H must be a positive multiple of four.
TEXT ·bwd64(SB), NOSPLIT, $0-72
	BWD(VMULPD, VADDPD, VSUBPD, VMOVUPD, 3, 0, bwd64row, bwd64col)

// func bwd32(hid int, rows int, gate *float32, tc *float32, u *float32, dh *float32, dc *float32, cp *float32, cpStride int)
//
// bwd64 in float32; H must be a positive multiple of eight.
TEXT ·bwd32(SB), NOSPLIT, $0-72
	BWD(VMULPS, VADDPS, VSUBPS, VMOVUPS, 2, 32, bwd32row, bwd32col)
