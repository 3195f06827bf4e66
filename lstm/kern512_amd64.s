//go:build !purego

#include "textflag.h"

// AVX-512 blocks of gemm (kernel.go). Each element of d is accumulated in
// order of p with one fused multiply-add per term, as in the AVX2 blocks,
// so a product comes out bit for bit the same whichever blocks compute it.
// The 32 ZMM registers hold a larger tile than the AVX2 blocks' 4×8 (or
// 4×16 in float32): 8 rows by two vectors, 16 accumulators, so that the FMA
// latency is covered with room to spare and each loaded vector of w serves
// eight multiply-adds. The broadcasts of c are embedded in the FMAs
// (.BCST). On the passes' three shapes (BenchmarkKernels/gemm*) this tile
// ran 26-28 float64 and 51-54 float32 multiply-adds per ns on one core,
// against 20-25 and 44-51 for the AVX2 blocks; a 4-row tile of four
// vectors was as fast where it fits, measured when the weight gradients'
// tasks were 32 columns wide (too narrow for it in float32); they are 64
// now, and it was not tried again.

// func kern8x16(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int)
//
// Rows 0..7, columns 0..15 of the product: for r < 8 and j < 16,
//
//	d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
TEXT ·kern8x16(SB), NOSPLIT, $0-64
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
	LEAQ (SI)(R8*2), R12
	ADDQ R8, R12
	LEAQ (R12)(R8*2), R13
	ADDQ R8, R13
	LEAQ (DX)(R11*2), AX
	ADDQ R11, AX
	LEAQ (AX)(R11*2), BX
	ADDQ R11, BX
	VMOVUPD (DX), Z0
	VMOVUPD 64(DX), Z1
	VMOVUPD (DX)(R11*1), Z2
	VMOVUPD 64(DX)(R11*1), Z3
	VMOVUPD (DX)(R11*2), Z4
	VMOVUPD 64(DX)(R11*2), Z5
	VMOVUPD (AX), Z6
	VMOVUPD 64(AX), Z7
	VMOVUPD (AX)(R11*1), Z8
	VMOVUPD 64(AX)(R11*1), Z9
	VMOVUPD (AX)(R11*2), Z10
	VMOVUPD 64(AX)(R11*2), Z11
	VMOVUPD (BX), Z12
	VMOVUPD 64(BX), Z13
	VMOVUPD (BX)(R11*1), Z14
	VMOVUPD 64(BX)(R11*1), Z15
	TESTQ CX, CX
	JZ    k8x16store
k8x16loop:
	VMOVUPD (DI), Z16
	VMOVUPD 64(DI), Z17
	VFMADD231PD.BCST (SI), Z16, Z0
	VFMADD231PD.BCST (SI), Z17, Z1
	VFMADD231PD.BCST (SI)(R8*1), Z16, Z2
	VFMADD231PD.BCST (SI)(R8*1), Z17, Z3
	VFMADD231PD.BCST (SI)(R8*2), Z16, Z4
	VFMADD231PD.BCST (SI)(R8*2), Z17, Z5
	VFMADD231PD.BCST (R12), Z16, Z6
	VFMADD231PD.BCST (R12), Z17, Z7
	VFMADD231PD.BCST (R12)(R8*1), Z16, Z8
	VFMADD231PD.BCST (R12)(R8*1), Z17, Z9
	VFMADD231PD.BCST (R12)(R8*2), Z16, Z10
	VFMADD231PD.BCST (R12)(R8*2), Z17, Z11
	VFMADD231PD.BCST (R13), Z16, Z12
	VFMADD231PD.BCST (R13), Z17, Z13
	VFMADD231PD.BCST (R13)(R8*1), Z16, Z14
	VFMADD231PD.BCST (R13)(R8*1), Z17, Z15
	ADDQ R9, SI
	ADDQ R9, R12
	ADDQ R9, R13
	ADDQ R10, DI
	DECQ CX
	JNZ  k8x16loop
k8x16store:
	VMOVUPD Z0, (DX)
	VMOVUPD Z1, 64(DX)
	VMOVUPD Z2, (DX)(R11*1)
	VMOVUPD Z3, 64(DX)(R11*1)
	VMOVUPD Z4, (DX)(R11*2)
	VMOVUPD Z5, 64(DX)(R11*2)
	VMOVUPD Z6, (AX)
	VMOVUPD Z7, 64(AX)
	VMOVUPD Z8, (AX)(R11*1)
	VMOVUPD Z9, 64(AX)(R11*1)
	VMOVUPD Z10, (AX)(R11*2)
	VMOVUPD Z11, 64(AX)(R11*2)
	VMOVUPD Z12, (BX)
	VMOVUPD Z13, 64(BX)
	VMOVUPD Z14, (BX)(R11*1)
	VMOVUPD Z15, 64(BX)(R11*1)
	VZEROUPPER
	RET

// func kern8x32s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int)
//
// Rows 0..7, columns 0..31 of the product: for r < 8 and j < 32,
//
//	d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
TEXT ·kern8x32s(SB), NOSPLIT, $0-64
	MOVQ n+0(FP), CX
	MOVQ c+8(FP), SI
	MOVQ cRow+16(FP), R8
	MOVQ cStep+24(FP), R9
	MOVQ w+32(FP), DI
	MOVQ wStride+40(FP), R10
	MOVQ d+48(FP), DX
	MOVQ dStride+56(FP), R11
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	SHLQ $2, R11
	LEAQ (SI)(R8*2), R12
	ADDQ R8, R12
	LEAQ (R12)(R8*2), R13
	ADDQ R8, R13
	LEAQ (DX)(R11*2), AX
	ADDQ R11, AX
	LEAQ (AX)(R11*2), BX
	ADDQ R11, BX
	VMOVUPS (DX), Z0
	VMOVUPS 64(DX), Z1
	VMOVUPS (DX)(R11*1), Z2
	VMOVUPS 64(DX)(R11*1), Z3
	VMOVUPS (DX)(R11*2), Z4
	VMOVUPS 64(DX)(R11*2), Z5
	VMOVUPS (AX), Z6
	VMOVUPS 64(AX), Z7
	VMOVUPS (AX)(R11*1), Z8
	VMOVUPS 64(AX)(R11*1), Z9
	VMOVUPS (AX)(R11*2), Z10
	VMOVUPS 64(AX)(R11*2), Z11
	VMOVUPS (BX), Z12
	VMOVUPS 64(BX), Z13
	VMOVUPS (BX)(R11*1), Z14
	VMOVUPS 64(BX)(R11*1), Z15
	TESTQ CX, CX
	JZ    k8x32sstore
k8x32sloop:
	VMOVUPS (DI), Z16
	VMOVUPS 64(DI), Z17
	VFMADD231PS.BCST (SI), Z16, Z0
	VFMADD231PS.BCST (SI), Z17, Z1
	VFMADD231PS.BCST (SI)(R8*1), Z16, Z2
	VFMADD231PS.BCST (SI)(R8*1), Z17, Z3
	VFMADD231PS.BCST (SI)(R8*2), Z16, Z4
	VFMADD231PS.BCST (SI)(R8*2), Z17, Z5
	VFMADD231PS.BCST (R12), Z16, Z6
	VFMADD231PS.BCST (R12), Z17, Z7
	VFMADD231PS.BCST (R12)(R8*1), Z16, Z8
	VFMADD231PS.BCST (R12)(R8*1), Z17, Z9
	VFMADD231PS.BCST (R12)(R8*2), Z16, Z10
	VFMADD231PS.BCST (R12)(R8*2), Z17, Z11
	VFMADD231PS.BCST (R13), Z16, Z12
	VFMADD231PS.BCST (R13), Z17, Z13
	VFMADD231PS.BCST (R13)(R8*1), Z16, Z14
	VFMADD231PS.BCST (R13)(R8*1), Z17, Z15
	ADDQ R9, SI
	ADDQ R9, R12
	ADDQ R9, R13
	ADDQ R10, DI
	DECQ CX
	JNZ  k8x32sloop
k8x32sstore:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, (DX)(R11*1)
	VMOVUPS Z3, 64(DX)(R11*1)
	VMOVUPS Z4, (DX)(R11*2)
	VMOVUPS Z5, 64(DX)(R11*2)
	VMOVUPS Z6, (AX)
	VMOVUPS Z7, 64(AX)
	VMOVUPS Z8, (AX)(R11*1)
	VMOVUPS Z9, 64(AX)(R11*1)
	VMOVUPS Z10, (AX)(R11*2)
	VMOVUPS Z11, 64(AX)(R11*2)
	VMOVUPS Z12, (BX)
	VMOVUPS Z13, 64(BX)
	VMOVUPS Z14, (BX)(R11*1)
	VMOVUPS Z15, 64(BX)(R11*1)
	VZEROUPPER
	RET

