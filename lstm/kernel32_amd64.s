//go:build !purego

#include "textflag.h"
#include "kern4_amd64.h"

// float32 kernels: the 4×16 block of gemm, axpy and vector sigmoid and
// tanh. exp is 2^k·p(r) as in vmath_amd64.s with Cephes'
// split of ln 2 for float32 and a degree-7 Taylor polynomial (truncation
// below 3e-9 relative on |r| ≤ ln2/2); arguments are clamped to ±87.

DATA expf<>+0(SB)/4, $0x3fb8aa3b
DATA expf<>+4(SB)/4, $0x3fb8aa3b
DATA expf<>+8(SB)/4, $0x3fb8aa3b
DATA expf<>+12(SB)/4, $0x3fb8aa3b
DATA expf<>+16(SB)/4, $0x3fb8aa3b
DATA expf<>+20(SB)/4, $0x3fb8aa3b
DATA expf<>+24(SB)/4, $0x3fb8aa3b
DATA expf<>+28(SB)/4, $0x3fb8aa3b
DATA expf<>+32(SB)/4, $0x3f318000
DATA expf<>+36(SB)/4, $0x3f318000
DATA expf<>+40(SB)/4, $0x3f318000
DATA expf<>+44(SB)/4, $0x3f318000
DATA expf<>+48(SB)/4, $0x3f318000
DATA expf<>+52(SB)/4, $0x3f318000
DATA expf<>+56(SB)/4, $0x3f318000
DATA expf<>+60(SB)/4, $0x3f318000
DATA expf<>+64(SB)/4, $0xb95e8083
DATA expf<>+68(SB)/4, $0xb95e8083
DATA expf<>+72(SB)/4, $0xb95e8083
DATA expf<>+76(SB)/4, $0xb95e8083
DATA expf<>+80(SB)/4, $0xb95e8083
DATA expf<>+84(SB)/4, $0xb95e8083
DATA expf<>+88(SB)/4, $0xb95e8083
DATA expf<>+92(SB)/4, $0xb95e8083
DATA expf<>+96(SB)/4, $0x42ae0000
DATA expf<>+100(SB)/4, $0x42ae0000
DATA expf<>+104(SB)/4, $0x42ae0000
DATA expf<>+108(SB)/4, $0x42ae0000
DATA expf<>+112(SB)/4, $0x42ae0000
DATA expf<>+116(SB)/4, $0x42ae0000
DATA expf<>+120(SB)/4, $0x42ae0000
DATA expf<>+124(SB)/4, $0x42ae0000
DATA expf<>+128(SB)/4, $0xc2ae0000
DATA expf<>+132(SB)/4, $0xc2ae0000
DATA expf<>+136(SB)/4, $0xc2ae0000
DATA expf<>+140(SB)/4, $0xc2ae0000
DATA expf<>+144(SB)/4, $0xc2ae0000
DATA expf<>+148(SB)/4, $0xc2ae0000
DATA expf<>+152(SB)/4, $0xc2ae0000
DATA expf<>+156(SB)/4, $0xc2ae0000
DATA expf<>+160(SB)/4, $0x3f800000
DATA expf<>+164(SB)/4, $0x3f800000
DATA expf<>+168(SB)/4, $0x3f800000
DATA expf<>+172(SB)/4, $0x3f800000
DATA expf<>+176(SB)/4, $0x3f800000
DATA expf<>+180(SB)/4, $0x3f800000
DATA expf<>+184(SB)/4, $0x3f800000
DATA expf<>+188(SB)/4, $0x3f800000
DATA expf<>+192(SB)/4, $0x40000000
DATA expf<>+196(SB)/4, $0x40000000
DATA expf<>+200(SB)/4, $0x40000000
DATA expf<>+204(SB)/4, $0x40000000
DATA expf<>+208(SB)/4, $0x40000000
DATA expf<>+212(SB)/4, $0x40000000
DATA expf<>+216(SB)/4, $0x40000000
DATA expf<>+220(SB)/4, $0x40000000
DATA expf<>+224(SB)/4, $0x0000007f
DATA expf<>+228(SB)/4, $0x0000007f
DATA expf<>+232(SB)/4, $0x0000007f
DATA expf<>+236(SB)/4, $0x0000007f
DATA expf<>+240(SB)/4, $0x0000007f
DATA expf<>+244(SB)/4, $0x0000007f
DATA expf<>+248(SB)/4, $0x0000007f
DATA expf<>+252(SB)/4, $0x0000007f
DATA expf<>+256(SB)/4, $0x39500d01
DATA expf<>+260(SB)/4, $0x39500d01
DATA expf<>+264(SB)/4, $0x39500d01
DATA expf<>+268(SB)/4, $0x39500d01
DATA expf<>+272(SB)/4, $0x39500d01
DATA expf<>+276(SB)/4, $0x39500d01
DATA expf<>+280(SB)/4, $0x39500d01
DATA expf<>+284(SB)/4, $0x39500d01
DATA expf<>+288(SB)/4, $0x3ab60b61
DATA expf<>+292(SB)/4, $0x3ab60b61
DATA expf<>+296(SB)/4, $0x3ab60b61
DATA expf<>+300(SB)/4, $0x3ab60b61
DATA expf<>+304(SB)/4, $0x3ab60b61
DATA expf<>+308(SB)/4, $0x3ab60b61
DATA expf<>+312(SB)/4, $0x3ab60b61
DATA expf<>+316(SB)/4, $0x3ab60b61
DATA expf<>+320(SB)/4, $0x3c088889
DATA expf<>+324(SB)/4, $0x3c088889
DATA expf<>+328(SB)/4, $0x3c088889
DATA expf<>+332(SB)/4, $0x3c088889
DATA expf<>+336(SB)/4, $0x3c088889
DATA expf<>+340(SB)/4, $0x3c088889
DATA expf<>+344(SB)/4, $0x3c088889
DATA expf<>+348(SB)/4, $0x3c088889
DATA expf<>+352(SB)/4, $0x3d2aaaab
DATA expf<>+356(SB)/4, $0x3d2aaaab
DATA expf<>+360(SB)/4, $0x3d2aaaab
DATA expf<>+364(SB)/4, $0x3d2aaaab
DATA expf<>+368(SB)/4, $0x3d2aaaab
DATA expf<>+372(SB)/4, $0x3d2aaaab
DATA expf<>+376(SB)/4, $0x3d2aaaab
DATA expf<>+380(SB)/4, $0x3d2aaaab
DATA expf<>+384(SB)/4, $0x3e2aaaab
DATA expf<>+388(SB)/4, $0x3e2aaaab
DATA expf<>+392(SB)/4, $0x3e2aaaab
DATA expf<>+396(SB)/4, $0x3e2aaaab
DATA expf<>+400(SB)/4, $0x3e2aaaab
DATA expf<>+404(SB)/4, $0x3e2aaaab
DATA expf<>+408(SB)/4, $0x3e2aaaab
DATA expf<>+412(SB)/4, $0x3e2aaaab
DATA expf<>+416(SB)/4, $0x3f000000
DATA expf<>+420(SB)/4, $0x3f000000
DATA expf<>+424(SB)/4, $0x3f000000
DATA expf<>+428(SB)/4, $0x3f000000
DATA expf<>+432(SB)/4, $0x3f000000
DATA expf<>+436(SB)/4, $0x3f000000
DATA expf<>+440(SB)/4, $0x3f000000
DATA expf<>+444(SB)/4, $0x3f000000
GLOBL expf<>(SB), RODATA|NOPTR, $448

// ONE_PLUS_EXPF sets Y3 = 1 + exp(Y0) for eight lanes, Y0 first clamped to
// [Y7, Y6] = [−87, 87]; it uses Y1 and Y2 as scratch.
#define ONE_PLUS_EXPF \
	VMINPS Y0, Y6, Y0 \
	VMAXPS Y0, Y7, Y0 \
	VMULPS expf<>+0(SB), Y0, Y1 \
	VROUNDPS $0, Y1, Y1 \
	VMOVAPS Y0, Y2 \
	VFNMADD231PS expf<>+32(SB), Y1, Y2 \
	VFNMADD231PS expf<>+64(SB), Y1, Y2 \
	VMOVUPS expf<>+256(SB), Y3 \
	VFMADD213PS expf<>+288(SB), Y2, Y3 \
	VFMADD213PS expf<>+320(SB), Y2, Y3 \
	VFMADD213PS expf<>+352(SB), Y2, Y3 \
	VFMADD213PS expf<>+384(SB), Y2, Y3 \
	VFMADD213PS expf<>+416(SB), Y2, Y3 \
	VFMADD213PS expf<>+160(SB), Y2, Y3 \
	VFMADD213PS expf<>+160(SB), Y2, Y3 \
	VCVTPS2DQ Y1, Y1 \
	VPADDD expf<>+224(SB), Y1, Y1 \
	VPSLLD $23, Y1, Y1 \
	VMULPS Y1, Y3, Y3 \
	VADDPS expf<>+160(SB), Y3, Y3

// func kern4x16s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int)
//
// Rows 0..3, columns 0..15 of the product (kern4_amd64.h).
TEXT ·kern4x16s(SB), NOSPLIT, $0-64
	KERN4(VMOVUPS, VBROADCASTSS, VFMADD231PS, 2, loop16, store16)

// func axpy32FMA(a float32, x []float32, y []float32)
// y[i] += a·x[i] for i < len(y) &^ 31.
TEXT ·axpy32FMA(SB), NOSPLIT, $0-56
	MOVQ         x_base+8(FP), SI
	MOVQ         y_base+32(FP), DI
	MOVQ         y_len+40(FP), CX
	SHRQ         $5, CX
	JZ           axpy32done
	VBROADCASTSS a+0(FP), Y15

axpy32loop:
	VMOVUPS     0(DI), Y0
	VMOVUPS     32(DI), Y1
	VMOVUPS     64(DI), Y2
	VMOVUPS     96(DI), Y3
	VFMADD231PS 0(SI), Y15, Y0
	VFMADD231PS 32(SI), Y15, Y1
	VFMADD231PS 64(SI), Y15, Y2
	VFMADD231PS 96(SI), Y15, Y3
	VMOVUPS     Y0, 0(DI)
	VMOVUPS     Y1, 32(DI)
	VMOVUPS     Y2, 64(DI)
	VMOVUPS     Y3, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         axpy32loop

axpy32done:
	VZEROUPPER
	RET

// func vsigmoid32(x []float32)
TEXT ·vsigmoid32(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $3, CX
	JZ   vsigmoid32done
	VXORPS Y4, Y4, Y4
	VMOVUPS expf<>+96(SB), Y6
	VMOVUPS expf<>+128(SB), Y7

vsigmoid32loop:
	VMOVUPS (SI), Y0
	VSUBPS  Y0, Y4, Y0
	ONE_PLUS_EXPF
	VMOVUPS expf<>+160(SB), Y5
	VDIVPS Y3, Y5, Y5
	VMOVUPS Y5, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  vsigmoid32loop

vsigmoid32done:
	VZEROUPPER
	RET

// func vtanh32(x []float32)
TEXT ·vtanh32(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $3, CX
	JZ   vtanh32done
	VXORPS Y4, Y4, Y4
	VMOVUPS expf<>+96(SB), Y6
	VMOVUPS expf<>+128(SB), Y7

vtanh32loop:
	VMOVUPS (SI), Y0
	VADDPS  Y0, Y0, Y0
	VSUBPS  Y0, Y4, Y0
	ONE_PLUS_EXPF
	VMOVUPS expf<>+192(SB), Y5
	VDIVPS Y3, Y5, Y5
	VSUBPS expf<>+160(SB), Y5, Y5
	VMOVUPS Y5, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  vtanh32loop

vtanh32done:
	VZEROUPPER
	RET
