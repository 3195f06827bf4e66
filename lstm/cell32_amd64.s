//go:build !purego

#include "textflag.h"

// The fused cell of the forward pass in float32, as cell_amd64.s is in
// float64: the activations exactly as vsigmoid32 and vtanh32 compute them
// (kernel32_amd64.s: the same constants, a degree-7 Taylor polynomial for
// exp), the cell's products and sum rounded as the Go loop rounds them, so
// the results are bit for bit those of cellForward; four vectors of eight
// are evaluated side by side.

DATA cellf<>+0(SB)/4, $0x3fb8aa3b
DATA cellf<>+4(SB)/4, $0x3fb8aa3b
DATA cellf<>+8(SB)/4, $0x3fb8aa3b
DATA cellf<>+12(SB)/4, $0x3fb8aa3b
DATA cellf<>+16(SB)/4, $0x3fb8aa3b
DATA cellf<>+20(SB)/4, $0x3fb8aa3b
DATA cellf<>+24(SB)/4, $0x3fb8aa3b
DATA cellf<>+28(SB)/4, $0x3fb8aa3b
DATA cellf<>+32(SB)/4, $0x3f318000
DATA cellf<>+36(SB)/4, $0x3f318000
DATA cellf<>+40(SB)/4, $0x3f318000
DATA cellf<>+44(SB)/4, $0x3f318000
DATA cellf<>+48(SB)/4, $0x3f318000
DATA cellf<>+52(SB)/4, $0x3f318000
DATA cellf<>+56(SB)/4, $0x3f318000
DATA cellf<>+60(SB)/4, $0x3f318000
DATA cellf<>+64(SB)/4, $0xb95e8083
DATA cellf<>+68(SB)/4, $0xb95e8083
DATA cellf<>+72(SB)/4, $0xb95e8083
DATA cellf<>+76(SB)/4, $0xb95e8083
DATA cellf<>+80(SB)/4, $0xb95e8083
DATA cellf<>+84(SB)/4, $0xb95e8083
DATA cellf<>+88(SB)/4, $0xb95e8083
DATA cellf<>+92(SB)/4, $0xb95e8083
DATA cellf<>+96(SB)/4, $0x42ae0000
DATA cellf<>+100(SB)/4, $0x42ae0000
DATA cellf<>+104(SB)/4, $0x42ae0000
DATA cellf<>+108(SB)/4, $0x42ae0000
DATA cellf<>+112(SB)/4, $0x42ae0000
DATA cellf<>+116(SB)/4, $0x42ae0000
DATA cellf<>+120(SB)/4, $0x42ae0000
DATA cellf<>+124(SB)/4, $0x42ae0000
DATA cellf<>+128(SB)/4, $0xc2ae0000
DATA cellf<>+132(SB)/4, $0xc2ae0000
DATA cellf<>+136(SB)/4, $0xc2ae0000
DATA cellf<>+140(SB)/4, $0xc2ae0000
DATA cellf<>+144(SB)/4, $0xc2ae0000
DATA cellf<>+148(SB)/4, $0xc2ae0000
DATA cellf<>+152(SB)/4, $0xc2ae0000
DATA cellf<>+156(SB)/4, $0xc2ae0000
DATA cellf<>+160(SB)/4, $0x3f800000
DATA cellf<>+164(SB)/4, $0x3f800000
DATA cellf<>+168(SB)/4, $0x3f800000
DATA cellf<>+172(SB)/4, $0x3f800000
DATA cellf<>+176(SB)/4, $0x3f800000
DATA cellf<>+180(SB)/4, $0x3f800000
DATA cellf<>+184(SB)/4, $0x3f800000
DATA cellf<>+188(SB)/4, $0x3f800000
DATA cellf<>+192(SB)/4, $0x40000000
DATA cellf<>+196(SB)/4, $0x40000000
DATA cellf<>+200(SB)/4, $0x40000000
DATA cellf<>+204(SB)/4, $0x40000000
DATA cellf<>+208(SB)/4, $0x40000000
DATA cellf<>+212(SB)/4, $0x40000000
DATA cellf<>+216(SB)/4, $0x40000000
DATA cellf<>+220(SB)/4, $0x40000000
DATA cellf<>+224(SB)/4, $0x0000007f
DATA cellf<>+228(SB)/4, $0x0000007f
DATA cellf<>+232(SB)/4, $0x0000007f
DATA cellf<>+236(SB)/4, $0x0000007f
DATA cellf<>+240(SB)/4, $0x0000007f
DATA cellf<>+244(SB)/4, $0x0000007f
DATA cellf<>+248(SB)/4, $0x0000007f
DATA cellf<>+252(SB)/4, $0x0000007f
DATA cellf<>+256(SB)/4, $0x39500d01
DATA cellf<>+260(SB)/4, $0x39500d01
DATA cellf<>+264(SB)/4, $0x39500d01
DATA cellf<>+268(SB)/4, $0x39500d01
DATA cellf<>+272(SB)/4, $0x39500d01
DATA cellf<>+276(SB)/4, $0x39500d01
DATA cellf<>+280(SB)/4, $0x39500d01
DATA cellf<>+284(SB)/4, $0x39500d01
DATA cellf<>+288(SB)/4, $0x3ab60b61
DATA cellf<>+292(SB)/4, $0x3ab60b61
DATA cellf<>+296(SB)/4, $0x3ab60b61
DATA cellf<>+300(SB)/4, $0x3ab60b61
DATA cellf<>+304(SB)/4, $0x3ab60b61
DATA cellf<>+308(SB)/4, $0x3ab60b61
DATA cellf<>+312(SB)/4, $0x3ab60b61
DATA cellf<>+316(SB)/4, $0x3ab60b61
DATA cellf<>+320(SB)/4, $0x3c088889
DATA cellf<>+324(SB)/4, $0x3c088889
DATA cellf<>+328(SB)/4, $0x3c088889
DATA cellf<>+332(SB)/4, $0x3c088889
DATA cellf<>+336(SB)/4, $0x3c088889
DATA cellf<>+340(SB)/4, $0x3c088889
DATA cellf<>+344(SB)/4, $0x3c088889
DATA cellf<>+348(SB)/4, $0x3c088889
DATA cellf<>+352(SB)/4, $0x3d2aaaab
DATA cellf<>+356(SB)/4, $0x3d2aaaab
DATA cellf<>+360(SB)/4, $0x3d2aaaab
DATA cellf<>+364(SB)/4, $0x3d2aaaab
DATA cellf<>+368(SB)/4, $0x3d2aaaab
DATA cellf<>+372(SB)/4, $0x3d2aaaab
DATA cellf<>+376(SB)/4, $0x3d2aaaab
DATA cellf<>+380(SB)/4, $0x3d2aaaab
DATA cellf<>+384(SB)/4, $0x3e2aaaab
DATA cellf<>+388(SB)/4, $0x3e2aaaab
DATA cellf<>+392(SB)/4, $0x3e2aaaab
DATA cellf<>+396(SB)/4, $0x3e2aaaab
DATA cellf<>+400(SB)/4, $0x3e2aaaab
DATA cellf<>+404(SB)/4, $0x3e2aaaab
DATA cellf<>+408(SB)/4, $0x3e2aaaab
DATA cellf<>+412(SB)/4, $0x3e2aaaab
DATA cellf<>+416(SB)/4, $0x3f000000
DATA cellf<>+420(SB)/4, $0x3f000000
DATA cellf<>+424(SB)/4, $0x3f000000
DATA cellf<>+428(SB)/4, $0x3f000000
DATA cellf<>+432(SB)/4, $0x3f000000
DATA cellf<>+436(SB)/4, $0x3f000000
DATA cellf<>+440(SB)/4, $0x3f000000
DATA cellf<>+444(SB)/4, $0x3f000000
GLOBL cellf<>(SB), RODATA|NOPTR, $448

#define F_LOG2E cellf<>+0(SB)
#define F_LN2HI cellf<>+32(SB)
#define F_LN2LO cellf<>+64(SB)
#define F_HI cellf<>+96(SB)
#define F_LO cellf<>+128(SB)
#define F_ONE cellf<>+160(SB)
#define F_TWO cellf<>+192(SB)
#define F_BIAS cellf<>+224(SB)
#define F_C7 cellf<>+256(SB)
#define F_C6 cellf<>+288(SB)
#define F_C5 cellf<>+320(SB)
#define F_C4 cellf<>+352(SB)
#define F_C3 cellf<>+384(SB)
#define F_C2 cellf<>+416(SB)

// OPEF4 sets Y2, Y5, Y8, Y11 = 1 + exp(Y0, Y3, Y6, Y9), each argument first
// clamped to [Y13, Y14] = [−87, 87] (a NaN stays NaN: MINPS and MAXPS
// return their second source when one is NaN); Y1, Y4, Y7 and Y10 are
// scratch and the arguments are overwritten. The four evaluations'
// instructions alternate.
#define OPEF4 \
	VMINPS       Y0, Y14, Y0 \
	VMINPS       Y3, Y14, Y3 \
	VMINPS       Y6, Y14, Y6 \
	VMINPS       Y9, Y14, Y9 \
	VMAXPS       Y0, Y13, Y0 \
	VMAXPS       Y3, Y13, Y3 \
	VMAXPS       Y6, Y13, Y6 \
	VMAXPS       Y9, Y13, Y9 \
	VMULPS       F_LOG2E, Y0, Y1 \
	VMULPS       F_LOG2E, Y3, Y4 \
	VMULPS       F_LOG2E, Y6, Y7 \
	VMULPS       F_LOG2E, Y9, Y10 \
	VROUNDPS     $0, Y1, Y1 \
	VROUNDPS     $0, Y4, Y4 \
	VROUNDPS     $0, Y7, Y7 \
	VROUNDPS     $0, Y10, Y10 \
	VFNMADD231PS F_LN2HI, Y1, Y0 \
	VFNMADD231PS F_LN2HI, Y4, Y3 \
	VFNMADD231PS F_LN2HI, Y7, Y6 \
	VFNMADD231PS F_LN2HI, Y10, Y9 \
	VFNMADD231PS F_LN2LO, Y1, Y0 \
	VFNMADD231PS F_LN2LO, Y4, Y3 \
	VFNMADD231PS F_LN2LO, Y7, Y6 \
	VFNMADD231PS F_LN2LO, Y10, Y9 \
	VMOVUPS      F_C7, Y2 \
	VMOVUPS      F_C7, Y5 \
	VMOVUPS      F_C7, Y8 \
	VMOVUPS      F_C7, Y11 \
	VFMADD213PS  F_C6, Y0, Y2 \
	VFMADD213PS  F_C6, Y3, Y5 \
	VFMADD213PS  F_C6, Y6, Y8 \
	VFMADD213PS  F_C6, Y9, Y11 \
	VFMADD213PS  F_C5, Y0, Y2 \
	VFMADD213PS  F_C5, Y3, Y5 \
	VFMADD213PS  F_C5, Y6, Y8 \
	VFMADD213PS  F_C5, Y9, Y11 \
	VFMADD213PS  F_C4, Y0, Y2 \
	VFMADD213PS  F_C4, Y3, Y5 \
	VFMADD213PS  F_C4, Y6, Y8 \
	VFMADD213PS  F_C4, Y9, Y11 \
	VFMADD213PS  F_C3, Y0, Y2 \
	VFMADD213PS  F_C3, Y3, Y5 \
	VFMADD213PS  F_C3, Y6, Y8 \
	VFMADD213PS  F_C3, Y9, Y11 \
	VFMADD213PS  F_C2, Y0, Y2 \
	VFMADD213PS  F_C2, Y3, Y5 \
	VFMADD213PS  F_C2, Y6, Y8 \
	VFMADD213PS  F_C2, Y9, Y11 \
	VFMADD213PS  F_ONE, Y0, Y2 \
	VFMADD213PS  F_ONE, Y3, Y5 \
	VFMADD213PS  F_ONE, Y6, Y8 \
	VFMADD213PS  F_ONE, Y9, Y11 \
	VFMADD213PS  F_ONE, Y0, Y2 \
	VFMADD213PS  F_ONE, Y3, Y5 \
	VFMADD213PS  F_ONE, Y6, Y8 \
	VFMADD213PS  F_ONE, Y9, Y11 \
	VCVTPS2DQ    Y1, Y1 \
	VCVTPS2DQ    Y4, Y4 \
	VCVTPS2DQ    Y7, Y7 \
	VCVTPS2DQ    Y10, Y10 \
	VPADDD       F_BIAS, Y1, Y1 \
	VPADDD       F_BIAS, Y4, Y4 \
	VPADDD       F_BIAS, Y7, Y7 \
	VPADDD       F_BIAS, Y10, Y10 \
	VPSLLD       $23, Y1, Y1 \
	VPSLLD       $23, Y4, Y4 \
	VPSLLD       $23, Y7, Y7 \
	VPSLLD       $23, Y10, Y10 \
	VMULPS       Y1, Y2, Y2 \
	VMULPS       Y4, Y5, Y5 \
	VMULPS       Y7, Y8, Y8 \
	VMULPS       Y10, Y11, Y11 \
	VADDPS       F_ONE, Y2, Y2 \
	VADDPS       F_ONE, Y5, Y5 \
	VADDPS       F_ONE, Y8, Y8 \
	VADDPS       F_ONE, Y11, Y11

// OPEF1 is OPEF4 for Y0 alone: Y2 = 1 + exp(Y0).
#define OPEF1 \
	VMINPS       Y0, Y14, Y0 \
	VMAXPS       Y0, Y13, Y0 \
	VMULPS       F_LOG2E, Y0, Y1 \
	VROUNDPS     $0, Y1, Y1 \
	VFNMADD231PS F_LN2HI, Y1, Y0 \
	VFNMADD231PS F_LN2LO, Y1, Y0 \
	VMOVUPS      F_C7, Y2 \
	VFMADD213PS  F_C6, Y0, Y2 \
	VFMADD213PS  F_C5, Y0, Y2 \
	VFMADD213PS  F_C4, Y0, Y2 \
	VFMADD213PS  F_C3, Y0, Y2 \
	VFMADD213PS  F_C2, Y0, Y2 \
	VFMADD213PS  F_ONE, Y0, Y2 \
	VFMADD213PS  F_ONE, Y0, Y2 \
	VCVTPS2DQ    Y1, Y1 \
	VPADDD       F_BIAS, Y1, Y1 \
	VPSLLD       $23, Y1, Y1 \
	VMULPS       Y1, Y2, Y2 \
	VADDPS       F_ONE, Y2, Y2

// SIGRUNF sets x = σ(x) = 1/(1+exp(0−x)) over BX bytes at AX (a multiple of
// 32), four vectors at a time and then one; it advances AX and clears BX.
// Y15 must be zero and Y13, Y14 the clamps.
#define SIGRUNF(LFOUR, LONE, LDONE) \
	VMOVUPS F_ONE, Y12 \
	CMPQ    BX, $128 \
	JB      LONE \
LFOUR: \
	VMOVUPS 0(AX), Y0 \
	VMOVUPS 32(AX), Y3 \
	VMOVUPS 64(AX), Y6 \
	VMOVUPS 96(AX), Y9 \
	VSUBPS  Y0, Y15, Y0 \
	VSUBPS  Y3, Y15, Y3 \
	VSUBPS  Y6, Y15, Y6 \
	VSUBPS  Y9, Y15, Y9 \
	OPEF4 \
	VDIVPS  Y2, Y12, Y2 \
	VDIVPS  Y5, Y12, Y5 \
	VDIVPS  Y8, Y12, Y8 \
	VDIVPS  Y11, Y12, Y11 \
	VMOVUPS Y2, 0(AX) \
	VMOVUPS Y5, 32(AX) \
	VMOVUPS Y8, 64(AX) \
	VMOVUPS Y11, 96(AX) \
	ADDQ    $128, AX \
	SUBQ    $128, BX \
	CMPQ    BX, $128 \
	JAE     LFOUR \
LONE: \
	TESTQ   BX, BX \
	JZ      LDONE \
	VMOVUPS (AX), Y0 \
	VSUBPS  Y0, Y15, Y0 \
	OPEF1 \
	VDIVPS  Y2, Y12, Y2 \
	VMOVUPS Y2, (AX) \
	ADDQ    $32, AX \
	SUBQ    $32, BX \
	JMP     LONE \
LDONE:

// TANHRUNF is SIGRUNF for x = tanh(x) = 2/(1+exp(0−(x+x))) − 1.
#define TANHRUNF(LFOUR, LONE, LDONE) \
	VMOVUPS F_TWO, Y12 \
	CMPQ    BX, $128 \
	JB      LONE \
LFOUR: \
	VMOVUPS 0(AX), Y0 \
	VMOVUPS 32(AX), Y3 \
	VMOVUPS 64(AX), Y6 \
	VMOVUPS 96(AX), Y9 \
	VADDPS  Y0, Y0, Y0 \
	VSUBPS  Y0, Y15, Y0 \
	VADDPS  Y3, Y3, Y3 \
	VSUBPS  Y3, Y15, Y3 \
	VADDPS  Y6, Y6, Y6 \
	VSUBPS  Y6, Y15, Y6 \
	VADDPS  Y9, Y9, Y9 \
	VSUBPS  Y9, Y15, Y9 \
	OPEF4 \
	VDIVPS  Y2, Y12, Y2 \
	VSUBPS  F_ONE, Y2, Y2 \
	VDIVPS  Y5, Y12, Y5 \
	VSUBPS  F_ONE, Y5, Y5 \
	VDIVPS  Y8, Y12, Y8 \
	VSUBPS  F_ONE, Y8, Y8 \
	VDIVPS  Y11, Y12, Y11 \
	VSUBPS  F_ONE, Y11, Y11 \
	VMOVUPS Y2, 0(AX) \
	VMOVUPS Y5, 32(AX) \
	VMOVUPS Y8, 64(AX) \
	VMOVUPS Y11, 96(AX) \
	ADDQ    $128, AX \
	SUBQ    $128, BX \
	CMPQ    BX, $128 \
	JAE     LFOUR \
LONE: \
	TESTQ   BX, BX \
	JZ      LDONE \
	VMOVUPS (AX), Y0 \
	VADDPS  Y0, Y0, Y0 \
	VSUBPS  Y0, Y15, Y0 \
	OPEF1 \
	VDIVPS  Y2, Y12, Y2 \
	VSUBPS  F_ONE, Y2, Y2 \
	VMOVUPS Y2, (AX) \
	ADDQ    $32, AX \
	SUBQ    $32, BX \
	JMP     LONE \
LDONE:

// func cell32(hid int, rows int, gate *float32, cp *float32, c *float32, tc *float32, h *float32)
//
// For each of rows rows, gate holding 4H pre-activations (i, f, g, o) a
// row, cp, c, tc and h H = hid values a row (cp nil for a zero previous
// state; cp may be c): i, f, o = σ(·) and g = tanh(·) in place,
// c = f·cp + i·g (each product rounded, then the sum, as the Go loop does),
// tc = tanh(c), h = o·tc. H must be a positive multiple of eight.
TEXT ·cell32(SB), NOSPLIT, $0-56
	MOVQ    hid+0(FP), R8
	MOVQ    rows+8(FP), CX
	MOVQ    gate+16(FP), SI
	MOVQ    cp+24(FP), DX
	MOVQ    c+32(FP), DI
	MOVQ    tc+40(FP), R10
	MOVQ    h+48(FP), R11
	SHLQ    $2, R8
	LEAQ    (R8)(R8*2), R9
	VXORPS  Y15, Y15, Y15
	VMOVUPS F_HI, Y14
	VMOVUPS F_LO, Y13
	TESTQ   CX, CX
	JZ      cell32done

cell32row:
	// The gates: σ over i and f, tanh over g, σ over o.
	MOVQ SI, AX
	LEAQ (R8)(R8*1), BX
	SIGRUNF(cell32if4, cell32if1, cell32ifdone)
	MOVQ R8, BX
	TANHRUNF(cell32g4, cell32g1, cell32gdone)
	MOVQ R8, BX
	SIGRUNF(cell32o4, cell32o1, cell32odone)

	// c = f·cp + i·g, also into tc.
	XORQ BX, BX
	LEAQ (SI)(R8*2), R12
	LEAQ (SI)(R8*1), R13

cell32c:
	VMOVUPS (SI)(BX*1), Y0
	VMULPS  (R12)(BX*1), Y0, Y0
	TESTQ   DX, DX
	JZ      cell32nocp
	VMOVUPS (R13)(BX*1), Y1
	VMULPS  (DX)(BX*1), Y1, Y1
	VADDPS  Y0, Y1, Y0

cell32nocp:
	VMOVUPS Y0, (DI)(BX*1)
	VMOVUPS Y0, (R10)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, R8
	JB      cell32c

	// tc = tanh(c), then h = o·tc.
	MOVQ R10, AX
	MOVQ R8, BX
	TANHRUNF(cell32c4, cell32c1, cell32cdone)
	XORQ BX, BX
	LEAQ (SI)(R9*1), R12

cell32h:
	VMOVUPS (R12)(BX*1), Y0
	VMULPS  (R10)(BX*1), Y0, Y0
	VMOVUPS Y0, (R11)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, R8
	JB      cell32h

	LEAQ  (SI)(R8*4), SI
	ADDQ  R8, DI
	ADDQ  R8, R10
	ADDQ  R8, R11
	TESTQ DX, DX
	JZ    cell32next
	ADDQ  R8, DX

cell32next:
	DECQ CX
	JNZ  cell32row

cell32done:
	VZEROUPPER
	RET
