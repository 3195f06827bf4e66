//go:build !purego

#include "textflag.h"

// func kern4x8(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int)
//
// For r in 0..3 and j in 0..7:
//   d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
// Strides are in elements. Eight YMM accumulators cover the FMA latency.
TEXT ·kern4x8(SB), NOSPLIT, $0-64
	MOVQ n+0(FP), CX
	MOVQ c+8(FP), SI
	MOVQ cRow+16(FP), R8
	MOVQ cStep+24(FP), R9
	MOVQ w+32(FP), DI
	MOVQ wStride+40(FP), R10
	MOVQ d+48(FP), DX
	MOVQ dStride+56(FP), R11
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, R10
	SHLQ $3, R11
	LEAQ (SI)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R14
	LEAQ (DX)(R11*1), AX
	LEAQ (AX)(R11*1), BX
	LEAQ (BX)(R11*1), R8
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 0(AX), Y2
	VMOVUPD 32(AX), Y3
	VMOVUPD 0(BX), Y4
	VMOVUPD 32(BX), Y5
	VMOVUPD 0(R8), Y6
	VMOVUPD 32(R8), Y7
	TESTQ CX, CX
	JZ   store4

loop4:
	VMOVUPD      0(DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD (R12), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD (R13), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD (R14), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         R9, SI
	ADDQ         R9, R12
	ADDQ         R9, R13
	ADDQ         R9, R14
	ADDQ         R10, DI
	DECQ         CX
	JNZ          loop4

store4:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 0(AX)
	VMOVUPD Y3, 32(AX)
	VMOVUPD Y4, 0(BX)
	VMOVUPD Y5, 32(BX)
	VMOVUPD Y6, 0(R8)
	VMOVUPD Y7, 32(R8)
	VZEROUPPER
	RET

// func kern1x32(n int, c *float64, cStep int, w *float64, wStride int, d *float64)
//
// For j in 0..31: d[j] += Σ_{p<n} c[p*cStep] · w[p*wStride+j]
TEXT ·kern1x32(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ c+8(FP), SI
	MOVQ cStep+16(FP), R9
	MOVQ w+24(FP), DI
	MOVQ wStride+32(FP), R10
	MOVQ d+40(FP), DX
	SHLQ $3, R9
	SHLQ $3, R10
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7
	TESTQ CX, CX
	JZ   store1

loop1:
	VBROADCASTSD (SI), Y8
	VFMADD231PD  0(DI), Y8, Y0
	VFMADD231PD  32(DI), Y8, Y1
	VFMADD231PD  64(DI), Y8, Y2
	VFMADD231PD  96(DI), Y8, Y3
	VFMADD231PD  128(DI), Y8, Y4
	VFMADD231PD  160(DI), Y8, Y5
	VFMADD231PD  192(DI), Y8, Y6
	VFMADD231PD  224(DI), Y8, Y7
	ADDQ         R9, SI
	ADDQ         R10, DI
	DECQ         CX
	JNZ          loop1

store1:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

