//go:build !purego

#include "textflag.h"

// The fused cell of the forward pass in float64 (cellForward): the four
// gates' activations, the new cell state, its tanh and the hidden state of
// several rows in one call. Every activation is computed exactly as
// internal/vmath's Sigmoid and Tanh compute it on AVX2/FMA (the same
// constants and the same operations in the same order: exp by Cody and
// Waite's reduction and a degree-12 Taylor polynomial in Horner's form,
// then one division), and the cell's products and sum as the Go loop
// rounds them, so the results are bit for bit those of cellForward.
//
// What changes is the schedule. One exponential is a chain of about twenty
// dependent operations; vmath's loops evaluate one vector at a time and the
// out-of-order window holds only two or three such chains, so they wait on
// latency. Here four vectors are evaluated side by side, their instructions
// interleaved, which keeps the FMA pipes busy (BenchmarkKernels/cell64).

DATA cellc<>+0(SB)/8, $0x3ff71547652b82fe
DATA cellc<>+8(SB)/8, $0x3ff71547652b82fe
DATA cellc<>+16(SB)/8, $0x3ff71547652b82fe
DATA cellc<>+24(SB)/8, $0x3ff71547652b82fe
DATA cellc<>+32(SB)/8, $0x3fe62e42fee00000
DATA cellc<>+40(SB)/8, $0x3fe62e42fee00000
DATA cellc<>+48(SB)/8, $0x3fe62e42fee00000
DATA cellc<>+56(SB)/8, $0x3fe62e42fee00000
DATA cellc<>+64(SB)/8, $0x3dea39ef35793c76
DATA cellc<>+72(SB)/8, $0x3dea39ef35793c76
DATA cellc<>+80(SB)/8, $0x3dea39ef35793c76
DATA cellc<>+88(SB)/8, $0x3dea39ef35793c76
DATA cellc<>+96(SB)/8, $0x4338000000000000
DATA cellc<>+104(SB)/8, $0x4338000000000000
DATA cellc<>+112(SB)/8, $0x4338000000000000
DATA cellc<>+120(SB)/8, $0x4338000000000000
DATA cellc<>+128(SB)/8, $0x4086200000000000
DATA cellc<>+136(SB)/8, $0x4086200000000000
DATA cellc<>+144(SB)/8, $0x4086200000000000
DATA cellc<>+152(SB)/8, $0x4086200000000000
DATA cellc<>+160(SB)/8, $0xc086200000000000
DATA cellc<>+168(SB)/8, $0xc086200000000000
DATA cellc<>+176(SB)/8, $0xc086200000000000
DATA cellc<>+184(SB)/8, $0xc086200000000000
DATA cellc<>+192(SB)/8, $0x3ff0000000000000
DATA cellc<>+200(SB)/8, $0x3ff0000000000000
DATA cellc<>+208(SB)/8, $0x3ff0000000000000
DATA cellc<>+216(SB)/8, $0x3ff0000000000000
DATA cellc<>+224(SB)/8, $0x4000000000000000
DATA cellc<>+232(SB)/8, $0x4000000000000000
DATA cellc<>+240(SB)/8, $0x4000000000000000
DATA cellc<>+248(SB)/8, $0x4000000000000000
DATA cellc<>+256(SB)/8, $0x00000000000003ff
DATA cellc<>+264(SB)/8, $0x00000000000003ff
DATA cellc<>+272(SB)/8, $0x00000000000003ff
DATA cellc<>+280(SB)/8, $0x00000000000003ff
DATA cellc<>+288(SB)/8, $0x3e21eed8eff8d898
DATA cellc<>+296(SB)/8, $0x3e21eed8eff8d898
DATA cellc<>+304(SB)/8, $0x3e21eed8eff8d898
DATA cellc<>+312(SB)/8, $0x3e21eed8eff8d898
DATA cellc<>+320(SB)/8, $0x3e5ae64567f544e4
DATA cellc<>+328(SB)/8, $0x3e5ae64567f544e4
DATA cellc<>+336(SB)/8, $0x3e5ae64567f544e4
DATA cellc<>+344(SB)/8, $0x3e5ae64567f544e4
DATA cellc<>+352(SB)/8, $0x3e927e4fb7789f5c
DATA cellc<>+360(SB)/8, $0x3e927e4fb7789f5c
DATA cellc<>+368(SB)/8, $0x3e927e4fb7789f5c
DATA cellc<>+376(SB)/8, $0x3e927e4fb7789f5c
DATA cellc<>+384(SB)/8, $0x3ec71de3a556c734
DATA cellc<>+392(SB)/8, $0x3ec71de3a556c734
DATA cellc<>+400(SB)/8, $0x3ec71de3a556c734
DATA cellc<>+408(SB)/8, $0x3ec71de3a556c734
DATA cellc<>+416(SB)/8, $0x3efa01a01a01a01a
DATA cellc<>+424(SB)/8, $0x3efa01a01a01a01a
DATA cellc<>+432(SB)/8, $0x3efa01a01a01a01a
DATA cellc<>+440(SB)/8, $0x3efa01a01a01a01a
DATA cellc<>+448(SB)/8, $0x3f2a01a01a01a01a
DATA cellc<>+456(SB)/8, $0x3f2a01a01a01a01a
DATA cellc<>+464(SB)/8, $0x3f2a01a01a01a01a
DATA cellc<>+472(SB)/8, $0x3f2a01a01a01a01a
DATA cellc<>+480(SB)/8, $0x3f56c16c16c16c17
DATA cellc<>+488(SB)/8, $0x3f56c16c16c16c17
DATA cellc<>+496(SB)/8, $0x3f56c16c16c16c17
DATA cellc<>+504(SB)/8, $0x3f56c16c16c16c17
DATA cellc<>+512(SB)/8, $0x3f81111111111111
DATA cellc<>+520(SB)/8, $0x3f81111111111111
DATA cellc<>+528(SB)/8, $0x3f81111111111111
DATA cellc<>+536(SB)/8, $0x3f81111111111111
DATA cellc<>+544(SB)/8, $0x3fa5555555555555
DATA cellc<>+552(SB)/8, $0x3fa5555555555555
DATA cellc<>+560(SB)/8, $0x3fa5555555555555
DATA cellc<>+568(SB)/8, $0x3fa5555555555555
DATA cellc<>+576(SB)/8, $0x3fc5555555555555
DATA cellc<>+584(SB)/8, $0x3fc5555555555555
DATA cellc<>+592(SB)/8, $0x3fc5555555555555
DATA cellc<>+600(SB)/8, $0x3fc5555555555555
DATA cellc<>+608(SB)/8, $0x3fe0000000000000
DATA cellc<>+616(SB)/8, $0x3fe0000000000000
DATA cellc<>+624(SB)/8, $0x3fe0000000000000
DATA cellc<>+632(SB)/8, $0x3fe0000000000000
GLOBL cellc<>(SB), RODATA|NOPTR, $640

#define C_LOG2E cellc<>+0(SB)
#define C_LN2HI cellc<>+32(SB)
#define C_LN2LO cellc<>+64(SB)
#define C_MAGIC cellc<>+96(SB)
#define C_HI cellc<>+128(SB)
#define C_LO cellc<>+160(SB)
#define C_ONE cellc<>+192(SB)
#define C_TWO cellc<>+224(SB)
#define C_BIAS cellc<>+256(SB)
#define C_C12 cellc<>+288(SB)
#define C_C11 cellc<>+320(SB)
#define C_C10 cellc<>+352(SB)
#define C_C9 cellc<>+384(SB)
#define C_C8 cellc<>+416(SB)
#define C_C7 cellc<>+448(SB)
#define C_C6 cellc<>+480(SB)
#define C_C5 cellc<>+512(SB)
#define C_C4 cellc<>+544(SB)
#define C_C3 cellc<>+576(SB)
#define C_C2 cellc<>+608(SB)

// OPE4 sets Y2, Y5, Y8, Y11 = 1 + exp(Y0, Y3, Y6, Y9), each argument first
// clamped to [Y13, Y14] = [−708, 708] (a NaN stays NaN: MINPD and MAXPD
// return their second source when one is NaN); Y1, Y4, Y7 and Y10 are
// scratch and the arguments are overwritten. The four evaluations'
// instructions alternate.
#define OPE4 \
	VMINPD       Y0, Y14, Y0 \
	VMINPD       Y3, Y14, Y3 \
	VMINPD       Y6, Y14, Y6 \
	VMINPD       Y9, Y14, Y9 \
	VMAXPD       Y0, Y13, Y0 \
	VMAXPD       Y3, Y13, Y3 \
	VMAXPD       Y6, Y13, Y6 \
	VMAXPD       Y9, Y13, Y9 \
	VMULPD       C_LOG2E, Y0, Y1 \
	VMULPD       C_LOG2E, Y3, Y4 \
	VMULPD       C_LOG2E, Y6, Y7 \
	VMULPD       C_LOG2E, Y9, Y10 \
	VROUNDPD     $0, Y1, Y1 \
	VROUNDPD     $0, Y4, Y4 \
	VROUNDPD     $0, Y7, Y7 \
	VROUNDPD     $0, Y10, Y10 \
	VFNMADD231PD C_LN2HI, Y1, Y0 \
	VFNMADD231PD C_LN2HI, Y4, Y3 \
	VFNMADD231PD C_LN2HI, Y7, Y6 \
	VFNMADD231PD C_LN2HI, Y10, Y9 \
	VFNMADD231PD C_LN2LO, Y1, Y0 \
	VFNMADD231PD C_LN2LO, Y4, Y3 \
	VFNMADD231PD C_LN2LO, Y7, Y6 \
	VFNMADD231PD C_LN2LO, Y10, Y9 \
	VMOVUPD      C_C12, Y2 \
	VMOVUPD      C_C12, Y5 \
	VMOVUPD      C_C12, Y8 \
	VMOVUPD      C_C12, Y11 \
	VFMADD213PD  C_C11, Y0, Y2 \
	VFMADD213PD  C_C11, Y3, Y5 \
	VFMADD213PD  C_C11, Y6, Y8 \
	VFMADD213PD  C_C11, Y9, Y11 \
	VFMADD213PD  C_C10, Y0, Y2 \
	VFMADD213PD  C_C10, Y3, Y5 \
	VFMADD213PD  C_C10, Y6, Y8 \
	VFMADD213PD  C_C10, Y9, Y11 \
	VFMADD213PD  C_C9, Y0, Y2 \
	VFMADD213PD  C_C9, Y3, Y5 \
	VFMADD213PD  C_C9, Y6, Y8 \
	VFMADD213PD  C_C9, Y9, Y11 \
	VFMADD213PD  C_C8, Y0, Y2 \
	VFMADD213PD  C_C8, Y3, Y5 \
	VFMADD213PD  C_C8, Y6, Y8 \
	VFMADD213PD  C_C8, Y9, Y11 \
	VFMADD213PD  C_C7, Y0, Y2 \
	VFMADD213PD  C_C7, Y3, Y5 \
	VFMADD213PD  C_C7, Y6, Y8 \
	VFMADD213PD  C_C7, Y9, Y11 \
	VFMADD213PD  C_C6, Y0, Y2 \
	VFMADD213PD  C_C6, Y3, Y5 \
	VFMADD213PD  C_C6, Y6, Y8 \
	VFMADD213PD  C_C6, Y9, Y11 \
	VFMADD213PD  C_C5, Y0, Y2 \
	VFMADD213PD  C_C5, Y3, Y5 \
	VFMADD213PD  C_C5, Y6, Y8 \
	VFMADD213PD  C_C5, Y9, Y11 \
	VFMADD213PD  C_C4, Y0, Y2 \
	VFMADD213PD  C_C4, Y3, Y5 \
	VFMADD213PD  C_C4, Y6, Y8 \
	VFMADD213PD  C_C4, Y9, Y11 \
	VFMADD213PD  C_C3, Y0, Y2 \
	VFMADD213PD  C_C3, Y3, Y5 \
	VFMADD213PD  C_C3, Y6, Y8 \
	VFMADD213PD  C_C3, Y9, Y11 \
	VFMADD213PD  C_C2, Y0, Y2 \
	VFMADD213PD  C_C2, Y3, Y5 \
	VFMADD213PD  C_C2, Y6, Y8 \
	VFMADD213PD  C_C2, Y9, Y11 \
	VFMADD213PD  C_ONE, Y0, Y2 \
	VFMADD213PD  C_ONE, Y3, Y5 \
	VFMADD213PD  C_ONE, Y6, Y8 \
	VFMADD213PD  C_ONE, Y9, Y11 \
	VFMADD213PD  C_ONE, Y0, Y2 \
	VFMADD213PD  C_ONE, Y3, Y5 \
	VFMADD213PD  C_ONE, Y6, Y8 \
	VFMADD213PD  C_ONE, Y9, Y11 \
	VADDPD       C_MAGIC, Y1, Y1 \
	VADDPD       C_MAGIC, Y4, Y4 \
	VADDPD       C_MAGIC, Y7, Y7 \
	VADDPD       C_MAGIC, Y10, Y10 \
	VPADDQ       C_BIAS, Y1, Y1 \
	VPADDQ       C_BIAS, Y4, Y4 \
	VPADDQ       C_BIAS, Y7, Y7 \
	VPADDQ       C_BIAS, Y10, Y10 \
	VPSLLQ       $52, Y1, Y1 \
	VPSLLQ       $52, Y4, Y4 \
	VPSLLQ       $52, Y7, Y7 \
	VPSLLQ       $52, Y10, Y10 \
	VMULPD       Y1, Y2, Y2 \
	VMULPD       Y4, Y5, Y5 \
	VMULPD       Y7, Y8, Y8 \
	VMULPD       Y10, Y11, Y11 \
	VADDPD       C_ONE, Y2, Y2 \
	VADDPD       C_ONE, Y5, Y5 \
	VADDPD       C_ONE, Y8, Y8 \
	VADDPD       C_ONE, Y11, Y11

// OPE1 is OPE4 for Y0 alone: Y2 = 1 + exp(Y0).
#define OPE1 \
	VMINPD       Y0, Y14, Y0 \
	VMAXPD       Y0, Y13, Y0 \
	VMULPD       C_LOG2E, Y0, Y1 \
	VROUNDPD     $0, Y1, Y1 \
	VFNMADD231PD C_LN2HI, Y1, Y0 \
	VFNMADD231PD C_LN2LO, Y1, Y0 \
	VMOVUPD      C_C12, Y2 \
	VFMADD213PD  C_C11, Y0, Y2 \
	VFMADD213PD  C_C10, Y0, Y2 \
	VFMADD213PD  C_C9, Y0, Y2 \
	VFMADD213PD  C_C8, Y0, Y2 \
	VFMADD213PD  C_C7, Y0, Y2 \
	VFMADD213PD  C_C6, Y0, Y2 \
	VFMADD213PD  C_C5, Y0, Y2 \
	VFMADD213PD  C_C4, Y0, Y2 \
	VFMADD213PD  C_C3, Y0, Y2 \
	VFMADD213PD  C_C2, Y0, Y2 \
	VFMADD213PD  C_ONE, Y0, Y2 \
	VFMADD213PD  C_ONE, Y0, Y2 \
	VADDPD       C_MAGIC, Y1, Y1 \
	VPADDQ       C_BIAS, Y1, Y1 \
	VPSLLQ       $52, Y1, Y1 \
	VMULPD       Y1, Y2, Y2 \
	VADDPD       C_ONE, Y2, Y2

// SIGRUN sets x = σ(x) = 1/(1+exp(0−x)) over BX bytes at AX (a multiple of
// 32), four vectors at a time and then one; it advances AX and clears BX.
// Y15 must be zero and Y13, Y14 the clamps.
#define SIGRUN(LFOUR, LONE, LDONE) \
	VMOVUPD C_ONE, Y12 \
	CMPQ    BX, $128 \
	JB      LONE \
LFOUR: \
	VMOVUPD 0(AX), Y0 \
	VMOVUPD 32(AX), Y3 \
	VMOVUPD 64(AX), Y6 \
	VMOVUPD 96(AX), Y9 \
	VSUBPD  Y0, Y15, Y0 \
	VSUBPD  Y3, Y15, Y3 \
	VSUBPD  Y6, Y15, Y6 \
	VSUBPD  Y9, Y15, Y9 \
	OPE4 \
	VDIVPD  Y2, Y12, Y2 \
	VDIVPD  Y5, Y12, Y5 \
	VDIVPD  Y8, Y12, Y8 \
	VDIVPD  Y11, Y12, Y11 \
	VMOVUPD Y2, 0(AX) \
	VMOVUPD Y5, 32(AX) \
	VMOVUPD Y8, 64(AX) \
	VMOVUPD Y11, 96(AX) \
	ADDQ    $128, AX \
	SUBQ    $128, BX \
	CMPQ    BX, $128 \
	JAE     LFOUR \
LONE: \
	TESTQ   BX, BX \
	JZ      LDONE \
	VMOVUPD (AX), Y0 \
	VSUBPD  Y0, Y15, Y0 \
	OPE1 \
	VDIVPD  Y2, Y12, Y2 \
	VMOVUPD Y2, (AX) \
	ADDQ    $32, AX \
	SUBQ    $32, BX \
	JMP     LONE \
LDONE:

// TANHRUN is SIGRUN for x = tanh(x) = 2/(1+exp(0−(x+x))) − 1.
#define TANHRUN(LFOUR, LONE, LDONE) \
	VMOVUPD C_TWO, Y12 \
	CMPQ    BX, $128 \
	JB      LONE \
LFOUR: \
	VMOVUPD 0(AX), Y0 \
	VMOVUPD 32(AX), Y3 \
	VMOVUPD 64(AX), Y6 \
	VMOVUPD 96(AX), Y9 \
	VADDPD  Y0, Y0, Y0 \
	VSUBPD  Y0, Y15, Y0 \
	VADDPD  Y3, Y3, Y3 \
	VSUBPD  Y3, Y15, Y3 \
	VADDPD  Y6, Y6, Y6 \
	VSUBPD  Y6, Y15, Y6 \
	VADDPD  Y9, Y9, Y9 \
	VSUBPD  Y9, Y15, Y9 \
	OPE4 \
	VDIVPD  Y2, Y12, Y2 \
	VSUBPD  C_ONE, Y2, Y2 \
	VDIVPD  Y5, Y12, Y5 \
	VSUBPD  C_ONE, Y5, Y5 \
	VDIVPD  Y8, Y12, Y8 \
	VSUBPD  C_ONE, Y8, Y8 \
	VDIVPD  Y11, Y12, Y11 \
	VSUBPD  C_ONE, Y11, Y11 \
	VMOVUPD Y2, 0(AX) \
	VMOVUPD Y5, 32(AX) \
	VMOVUPD Y8, 64(AX) \
	VMOVUPD Y11, 96(AX) \
	ADDQ    $128, AX \
	SUBQ    $128, BX \
	CMPQ    BX, $128 \
	JAE     LFOUR \
LONE: \
	TESTQ   BX, BX \
	JZ      LDONE \
	VMOVUPD (AX), Y0 \
	VADDPD  Y0, Y0, Y0 \
	VSUBPD  Y0, Y15, Y0 \
	OPE1 \
	VDIVPD  Y2, Y12, Y2 \
	VSUBPD  C_ONE, Y2, Y2 \
	VMOVUPD Y2, (AX) \
	ADDQ    $32, AX \
	SUBQ    $32, BX \
	JMP     LONE \
LDONE:

// func cell64(hid int, rows int, gate *float64, cp *float64, c *float64, tc *float64, h *float64)
//
// For each of rows rows, gate holding 4H pre-activations (i, f, g, o) a
// row, cp, c, tc and h H = hid values a row (cp nil for a zero previous
// state; cp may be c): i, f, o = σ(·) and g = tanh(·) in place,
// c = f·cp + i·g (each product rounded, then the sum, as the Go loop does),
// tc = tanh(c), h = o·tc. H must be a positive multiple of four.
TEXT ·cell64(SB), NOSPLIT, $0-56
	MOVQ    hid+0(FP), R8
	MOVQ    rows+8(FP), CX
	MOVQ    gate+16(FP), SI
	MOVQ    cp+24(FP), DX
	MOVQ    c+32(FP), DI
	MOVQ    tc+40(FP), R10
	MOVQ    h+48(FP), R11
	SHLQ    $3, R8
	LEAQ    (R8)(R8*2), R9
	VXORPD  Y15, Y15, Y15
	VMOVUPD C_HI, Y14
	VMOVUPD C_LO, Y13
	TESTQ   CX, CX
	JZ      cell64done

cell64row:
	// The gates: σ over i and f, tanh over g, σ over o.
	MOVQ SI, AX
	LEAQ (R8)(R8*1), BX
	SIGRUN(cell64if4, cell64if1, cell64ifdone)
	MOVQ R8, BX
	TANHRUN(cell64g4, cell64g1, cell64gdone)
	MOVQ R8, BX
	SIGRUN(cell64o4, cell64o1, cell64odone)

	// c = f·cp + i·g, also into tc.
	XORQ BX, BX
	LEAQ (SI)(R8*2), R12
	LEAQ (SI)(R8*1), R13

cell64c:
	VMOVUPD (SI)(BX*1), Y0
	VMULPD  (R12)(BX*1), Y0, Y0
	TESTQ   DX, DX
	JZ      cell64nocp
	VMOVUPD (R13)(BX*1), Y1
	VMULPD  (DX)(BX*1), Y1, Y1
	VADDPD  Y0, Y1, Y0

cell64nocp:
	VMOVUPD Y0, (DI)(BX*1)
	VMOVUPD Y0, (R10)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, R8
	JB      cell64c

	// tc = tanh(c), then h = o·tc.
	MOVQ R10, AX
	MOVQ R8, BX
	TANHRUN(cell64c4, cell64c1, cell64cdone)
	XORQ BX, BX
	LEAQ (SI)(R9*1), R12

cell64h:
	VMOVUPD (R12)(BX*1), Y0
	VMULPD  (R10)(BX*1), Y0, Y0
	VMOVUPD Y0, (R11)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, R8
	JB      cell64h

	LEAQ  (SI)(R8*4), SI
	ADDQ  R8, DI
	ADDQ  R8, R10
	ADDQ  R8, R11
	TESTQ DX, DX
	JZ    cell64next
	ADDQ  R8, DX

cell64next:
	DECQ CX
	JNZ  cell64row

cell64done:
	VZEROUPPER
	RET
