//go:build !purego

#include "textflag.h"

// Vector sigmoid and tanh for AVX2/FMA (package vmath). exp(x) is computed as 2^k·p(r)
// with k = round(x·log2 e), r = x − k·ln 2 (ln 2 split in a high and a low
// part, Cody and Waite), and p the degree-12 Taylor polynomial, whose
// truncation error on |r| ≤ ln2/2 is below 2e-16 relative. Arguments are
// clamped to ±708 so that 2^k stays a normal number (the clamp keeps a NaN
// argument NaN: MINPD and MAXPD return their second source when one is NaN); the sigmoid and tanh
// built on it are then within a few ulps of the exact values (tested against
// package math in vmath_test.go).

DATA expc<>+0(SB)/8, $0x3ff71547652b82fe
DATA expc<>+8(SB)/8, $0x3ff71547652b82fe
DATA expc<>+16(SB)/8, $0x3ff71547652b82fe
DATA expc<>+24(SB)/8, $0x3ff71547652b82fe
DATA expc<>+32(SB)/8, $0x3fe62e42fee00000
DATA expc<>+40(SB)/8, $0x3fe62e42fee00000
DATA expc<>+48(SB)/8, $0x3fe62e42fee00000
DATA expc<>+56(SB)/8, $0x3fe62e42fee00000
DATA expc<>+64(SB)/8, $0x3dea39ef35793c76
DATA expc<>+72(SB)/8, $0x3dea39ef35793c76
DATA expc<>+80(SB)/8, $0x3dea39ef35793c76
DATA expc<>+88(SB)/8, $0x3dea39ef35793c76
DATA expc<>+96(SB)/8, $0x4338000000000000
DATA expc<>+104(SB)/8, $0x4338000000000000
DATA expc<>+112(SB)/8, $0x4338000000000000
DATA expc<>+120(SB)/8, $0x4338000000000000
DATA expc<>+128(SB)/8, $0x4086200000000000
DATA expc<>+136(SB)/8, $0x4086200000000000
DATA expc<>+144(SB)/8, $0x4086200000000000
DATA expc<>+152(SB)/8, $0x4086200000000000
DATA expc<>+160(SB)/8, $0xc086200000000000
DATA expc<>+168(SB)/8, $0xc086200000000000
DATA expc<>+176(SB)/8, $0xc086200000000000
DATA expc<>+184(SB)/8, $0xc086200000000000
DATA expc<>+192(SB)/8, $0x3ff0000000000000
DATA expc<>+200(SB)/8, $0x3ff0000000000000
DATA expc<>+208(SB)/8, $0x3ff0000000000000
DATA expc<>+216(SB)/8, $0x3ff0000000000000
DATA expc<>+224(SB)/8, $0x4000000000000000
DATA expc<>+232(SB)/8, $0x4000000000000000
DATA expc<>+240(SB)/8, $0x4000000000000000
DATA expc<>+248(SB)/8, $0x4000000000000000
DATA expc<>+256(SB)/8, $0x00000000000003ff
DATA expc<>+264(SB)/8, $0x00000000000003ff
DATA expc<>+272(SB)/8, $0x00000000000003ff
DATA expc<>+280(SB)/8, $0x00000000000003ff
DATA expc<>+288(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+296(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+304(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+312(SB)/8, $0x3e21eed8eff8d898
DATA expc<>+320(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+328(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+336(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+344(SB)/8, $0x3e5ae64567f544e4
DATA expc<>+352(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+360(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+368(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+376(SB)/8, $0x3e927e4fb7789f5c
DATA expc<>+384(SB)/8, $0x3ec71de3a556c734
DATA expc<>+392(SB)/8, $0x3ec71de3a556c734
DATA expc<>+400(SB)/8, $0x3ec71de3a556c734
DATA expc<>+408(SB)/8, $0x3ec71de3a556c734
DATA expc<>+416(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+424(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+432(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+440(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+448(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+456(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+464(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+472(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+480(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+488(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+496(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+504(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+512(SB)/8, $0x3f81111111111111
DATA expc<>+520(SB)/8, $0x3f81111111111111
DATA expc<>+528(SB)/8, $0x3f81111111111111
DATA expc<>+536(SB)/8, $0x3f81111111111111
DATA expc<>+544(SB)/8, $0x3fa5555555555555
DATA expc<>+552(SB)/8, $0x3fa5555555555555
DATA expc<>+560(SB)/8, $0x3fa5555555555555
DATA expc<>+568(SB)/8, $0x3fa5555555555555
DATA expc<>+576(SB)/8, $0x3fc5555555555555
DATA expc<>+584(SB)/8, $0x3fc5555555555555
DATA expc<>+592(SB)/8, $0x3fc5555555555555
DATA expc<>+600(SB)/8, $0x3fc5555555555555
DATA expc<>+608(SB)/8, $0x3fe0000000000000
DATA expc<>+616(SB)/8, $0x3fe0000000000000
DATA expc<>+624(SB)/8, $0x3fe0000000000000
DATA expc<>+632(SB)/8, $0x3fe0000000000000
GLOBL expc<>(SB), RODATA|NOPTR, $640

// ONE_PLUS_EXP sets Y3 = 1 + exp(Y0) for four lanes, Y0 first clamped to
// [Y7, Y6] = [−708, 708]; it uses Y1 and Y2 as scratch.
#define ONE_PLUS_EXP \
	VMINPD Y0, Y6, Y0 \
	VMAXPD Y0, Y7, Y0 \
	VMULPD expc<>+0(SB), Y0, Y1 \
	VROUNDPD $0, Y1, Y1 \
	VMOVAPD Y0, Y2 \
	VFNMADD231PD expc<>+32(SB), Y1, Y2 \
	VFNMADD231PD expc<>+64(SB), Y1, Y2 \
	VMOVUPD expc<>+288(SB), Y3 \
	VFMADD213PD expc<>+320(SB), Y2, Y3 \
	VFMADD213PD expc<>+352(SB), Y2, Y3 \
	VFMADD213PD expc<>+384(SB), Y2, Y3 \
	VFMADD213PD expc<>+416(SB), Y2, Y3 \
	VFMADD213PD expc<>+448(SB), Y2, Y3 \
	VFMADD213PD expc<>+480(SB), Y2, Y3 \
	VFMADD213PD expc<>+512(SB), Y2, Y3 \
	VFMADD213PD expc<>+544(SB), Y2, Y3 \
	VFMADD213PD expc<>+576(SB), Y2, Y3 \
	VFMADD213PD expc<>+608(SB), Y2, Y3 \
	VFMADD213PD expc<>+192(SB), Y2, Y3 \
	VFMADD213PD expc<>+192(SB), Y2, Y3 \
	VADDPD expc<>+96(SB), Y1, Y1 \
	VPADDQ expc<>+256(SB), Y1, Y1 \
	VPSLLQ $52, Y1, Y1 \
	VMULPD Y1, Y3, Y3 \
	VADDPD expc<>+192(SB), Y3, Y3

// func vsigmoid(x []float64)
// x[i] = 1/(1+exp(-x[i])) for the first len(x) &^ 3 elements.
TEXT ·vsigmoid(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $2, CX
	JZ   sigdone
	VXORPD Y4, Y4, Y4
	VMOVUPD expc<>+128(SB), Y6
	VMOVUPD expc<>+160(SB), Y7

sigloop:
	VMOVUPD (SI), Y0
	VSUBPD  Y0, Y4, Y0
	ONE_PLUS_EXP
	VMOVUPD expc<>+192(SB), Y5
	VDIVPD Y3, Y5, Y5
	VMOVUPD Y5, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  sigloop

sigdone:
	VZEROUPPER
	RET

// func vtanh(x []float64)
// x[i] = tanh(x[i]) = 2/(1+exp(-2x[i])) − 1 for the first len(x) &^ 3 elements.
TEXT ·vtanh(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $2, CX
	JZ   tanhdone
	VXORPD Y4, Y4, Y4
	VMOVUPD expc<>+128(SB), Y6
	VMOVUPD expc<>+160(SB), Y7

tanhloop:
	VMOVUPD (SI), Y0
	VADDPD  Y0, Y0, Y0
	VSUBPD  Y0, Y4, Y0
	ONE_PLUS_EXP
	VMOVUPD expc<>+224(SB), Y5
	VDIVPD Y3, Y5, Y5
	VSUBPD expc<>+192(SB), Y5, Y5
	VMOVUPD Y5, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  tanhloop

tanhdone:
	VZEROUPPER
	RET

// func axpyFMA(a float64, x []float64, y []float64)
//
// y[i] = a·x[i] + y[i], fused, for i < len(y) &^ 15 (len(x) ≥ len(y) is
// the caller's job).
TEXT ·axpyFMA(SB), NOSPLIT, $0-56
	MOVQ         x_base+8(FP), SI
	MOVQ         y_base+32(FP), DI
	MOVQ         y_len+40(FP), CX
	SHRQ         $4, CX
	JZ           axpydone
	VBROADCASTSD a+0(FP), Y15

axpyloop:
	VMOVUPD     0(DI), Y0
	VMOVUPD     32(DI), Y1
	VMOVUPD     64(DI), Y2
	VMOVUPD     96(DI), Y3
	VFMADD231PD 0(SI), Y15, Y0
	VFMADD231PD 32(SI), Y15, Y1
	VFMADD231PD 64(SI), Y15, Y2
	VFMADD231PD 96(SI), Y15, Y3
	VMOVUPD     Y0, 0(DI)
	VMOVUPD     Y1, 32(DI)
	VMOVUPD     Y2, 64(DI)
	VMOVUPD     Y3, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         axpyloop

axpydone:
	VZEROUPPER
	RET

// func dotFMA(x []float64, y []float64) float64
//
// Σ x[i]·y[i] for i < len(x) &^ 15 (len(y) ≥ len(x) is the caller's job):
// element i accumulates, fused, into lane i mod 16 (four registers of
// four), and the lanes reduce as ((a0+a1)+(a2+a3)) per register lane,
// then (l0+l2)+(l1+l3); dotGo computes the same.
TEXT ·dotFMA(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	SHRQ   $4, CX
	JZ     dotreduce

dotloop:
	VMOVUPD     0(SI), Y4
	VMOVUPD     32(SI), Y5
	VMOVUPD     64(SI), Y6
	VMOVUPD     96(SI), Y7
	VFMADD231PD 0(DI), Y4, Y0
	VFMADD231PD 32(DI), Y5, Y1
	VFMADD231PD 64(DI), Y6, Y2
	VFMADD231PD 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         dotloop

dotreduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VMOVSD       X0, ret+48(FP)
	VZEROUPPER
	RET

// func mulAVX(dst []float64, x []float64, y []float64)
//
// dst[i] = x[i]·y[i] for i < len(dst) &^ 15 (x and y at least as long is
// the caller's job).
TEXT ·mulAVX(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	SHRQ $4, CX
	JZ   muldone

mulloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMULPD  0(DX), Y0, Y0
	VMULPD  32(DX), Y1, Y1
	VMULPD  64(DX), Y2, Y2
	VMULPD  96(DX), Y3, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	DECQ    CX
	JNZ     mulloop

muldone:
	VZEROUPPER
	RET
