//go:build !purego

#include "textflag.h"

// func nonZero16(x []float64, idx []int32) int
//
// Writes to idx, in increasing order, the index of every x[i] != 0 (a NaN
// counts, as it compares unequal; -0 does not) for i < len(x) &^ 15, and
// returns how many there are; idx must have room for all of them (the
// caller's job). Blocks of sixteen whose bits are all zero, most of a
// sparse row, cost one OR of four vectors and a test.
TEXT ·nonZero16(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   idx_base+24(FP), DI
	XORQ   AX, AX
	XORQ   DX, DX
	VXORPD Y15, Y15, Y15
	SHRQ   $4, CX
	JZ     nzdone

nzloop:
	VMOVDQU 0(SI), Y0
	VPOR    32(SI), Y0, Y0
	VPOR    64(SI), Y0, Y0
	VPOR    96(SI), Y0, Y0
	VPTEST  Y0, Y0
	JNZ     nzblock

nznext:
	ADDQ $128, SI
	ADDQ $16, DX
	DECQ CX
	JNZ  nzloop

nzdone:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

nzblock:
	// A 16-bit mask of the elements that compare unequal to zero
	// (predicate 4, NEQ_UQ: true for NaN).
	VCMPPD    $4, 0(SI), Y15, Y1
	VMOVMSKPD Y1, BX
	VCMPPD    $4, 32(SI), Y15, Y1
	VMOVMSKPD Y1, R8
	SHLQ      $4, R8
	ORQ       R8, BX
	VCMPPD    $4, 64(SI), Y15, Y1
	VMOVMSKPD Y1, R8
	SHLQ      $8, R8
	ORQ       R8, BX
	VCMPPD    $4, 96(SI), Y15, Y1
	VMOVMSKPD Y1, R8
	SHLQ      $12, R8
	ORQ       R8, BX
	TESTQ     BX, BX
	JZ        nznext

nzbits:
	BSFQ BX, R8
	ADDQ DX, R8
	MOVL R8, (DI)(AX*4)
	INCQ AX
	LEAQ -1(BX), R9
	ANDQ R9, BX
	JNZ  nzbits
	JMP  nznext
