//go:build !purego

#include "textflag.h"
#include "kern4_amd64.h"

// func kern4x8(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int)
//
// Rows 0..3, columns 0..7 of the product (kern4_amd64.h).
TEXT ·kern4x8(SB), NOSPLIT, $0-64
	KERN4(VMOVUPD, VBROADCASTSD, VFMADD231PD, 3, loop4, store4)

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

