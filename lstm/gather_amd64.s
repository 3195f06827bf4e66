//go:build !purego

#include "textflag.h"

// The first layer's input product of one sample and step, whose input row
// is sparse (one-hot blocks): d = bias + Σ_n val[n]·w[idx[n]], each element
// accumulated in order of n with one fused multiply-add per term, as
// copying the bias and running one axpy per non-zero does (the bits of
// net.forward's loop). The columns go in chunks of eight ZMM vectors held
// in registers across all the non-zeros, so d is written once instead of
// being read and written by every axpy. AVX-512F.

// GATHER is the body of gather64 and gather32: MOVU, BCAST and FMA of one
// precision, CHUNK the bytes of eight vectors, CVT the instructions that
// put val[n] (float64) into X8 in that precision.
#define GATHER(MOVU, FMA, CHUNK, SHIFT, CVT, BCAST, CHUNKL, NZL, STOREL, DONEL) \
	MOVQ cols+0(FP), CX \
	MOVQ bias+8(FP), SI \
	MOVQ w+16(FP), R8 \
	MOVQ wStride+24(FP), R9 \
	MOVQ idx_base+32(FP), R10 \
	MOVQ idx_len+40(FP), R11 \
	MOVQ val_base+56(FP), R12 \
	MOVQ d+80(FP), DI \
	SHLQ $SHIFT, R9 \
	SHLQ $SHIFT, CX \
	TESTQ CX, CX \
	JZ   DONEL \
CHUNKL: \
	MOVU 0(SI), Z0 \
	MOVU 64(SI), Z1 \
	MOVU 128(SI), Z2 \
	MOVU 192(SI), Z3 \
	MOVU 256(SI), Z4 \
	MOVU 320(SI), Z5 \
	MOVU 384(SI), Z6 \
	MOVU 448(SI), Z7 \
	XORQ BX, BX \
	CMPQ BX, R11 \
	JAE  STOREL \
NZL: \
	MOVLQSX (R10)(BX*4), AX \
	IMULQ R9, AX \
	ADDQ R8, AX \
	CVT \
	BCAST X8, Z8 \
	FMA 0(AX), Z8, Z0 \
	FMA 64(AX), Z8, Z1 \
	FMA 128(AX), Z8, Z2 \
	FMA 192(AX), Z8, Z3 \
	FMA 256(AX), Z8, Z4 \
	FMA 320(AX), Z8, Z5 \
	FMA 384(AX), Z8, Z6 \
	FMA 448(AX), Z8, Z7 \
	INCQ BX \
	CMPQ BX, R11 \
	JB   NZL \
STOREL: \
	MOVU Z0, 0(DI) \
	MOVU Z1, 64(DI) \
	MOVU Z2, 128(DI) \
	MOVU Z3, 192(DI) \
	MOVU Z4, 256(DI) \
	MOVU Z5, 320(DI) \
	MOVU Z6, 384(DI) \
	MOVU Z7, 448(DI) \
	ADDQ $CHUNK, SI \
	ADDQ $CHUNK, DI \
	ADDQ $CHUNK, R8 \
	SUBQ $CHUNK, CX \
	JNZ  CHUNKL \
DONEL: \
	VZEROUPPER \
	RET

#define CVT64 VMOVSD (R12)(BX*8), X8
#define CVT32 VCVTSD2SS (R12)(BX*8), X8, X8

// func gather64(cols int, bias *float64, w *float64, wStride int, idx []int32, val []float64, d *float64)
//
// d[j] = bias[j] + Σ_n val[n]·w[idx[n]·wStride + j] for j < cols, a
// multiple of 64.
TEXT ·gather64(SB), NOSPLIT, $0-88
	GATHER(VMOVUPD, VFMADD231PD, 512, 3, CVT64, VBROADCASTSD, g64chunk, g64nz, g64store, g64done)

// func gather32(cols int, bias *float32, w *float32, wStride int, idx []int32, val []float64, d *float32)
//
// gather64 in float32, each val[n] rounded to float32 first; cols a
// multiple of 128.
TEXT ·gather32(SB), NOSPLIT, $0-88
	GATHER(VMOVUPS, VFMADD231PS, 512, 2, CVT32, VBROADCASTSS, g32chunk, g32nz, g32store, g32done)
