// KERN4 is the body of kern4x8 (float64) and kern4x16s (float32), which
// differ only in their element width: for r in 0..3 and the two vectors of
// columns j of one YMM register each,
//
//	d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
//
// accumulated in order of p with fused multiply-adds. Strides are in
// elements; SHIFT is log2 of the element size. Eight YMM accumulators cover
// the FMA latency. LOOP and STORE name the labels of one expansion.
#define KERN4(MOVU, BCAST, FMA, SHIFT, LOOP, STORE) \
	MOVQ n+0(FP), CX \
	MOVQ c+8(FP), SI \
	MOVQ cRow+16(FP), R8 \
	MOVQ cStep+24(FP), R9 \
	MOVQ w+32(FP), DI \
	MOVQ wStride+40(FP), R10 \
	MOVQ d+48(FP), DX \
	MOVQ dStride+56(FP), R11 \
	SHLQ $SHIFT, R8 \
	SHLQ $SHIFT, R9 \
	SHLQ $SHIFT, R10 \
	SHLQ $SHIFT, R11 \
	LEAQ (SI)(R8*1), R12 \
	LEAQ (R12)(R8*1), R13 \
	LEAQ (R13)(R8*1), R14 \
	LEAQ (DX)(R11*1), AX \
	LEAQ (AX)(R11*1), BX \
	LEAQ (BX)(R11*1), R8 \
	MOVU 0(DX), Y0 \
	MOVU 32(DX), Y1 \
	MOVU 0(AX), Y2 \
	MOVU 32(AX), Y3 \
	MOVU 0(BX), Y4 \
	MOVU 32(BX), Y5 \
	MOVU 0(R8), Y6 \
	MOVU 32(R8), Y7 \
	TESTQ CX, CX \
	JZ   STORE \
LOOP: \
	MOVU  0(DI), Y8 \
	MOVU  32(DI), Y9 \
	BCAST (SI), Y10 \
	FMA   Y8, Y10, Y0 \
	FMA   Y9, Y10, Y1 \
	BCAST (R12), Y11 \
	FMA   Y8, Y11, Y2 \
	FMA   Y9, Y11, Y3 \
	BCAST (R13), Y12 \
	FMA   Y8, Y12, Y4 \
	FMA   Y9, Y12, Y5 \
	BCAST (R14), Y13 \
	FMA   Y8, Y13, Y6 \
	FMA   Y9, Y13, Y7 \
	ADDQ  R9, SI \
	ADDQ  R9, R12 \
	ADDQ  R9, R13 \
	ADDQ  R9, R14 \
	ADDQ  R10, DI \
	DECQ  CX \
	JNZ   LOOP \
STORE: \
	MOVU Y0, 0(DX) \
	MOVU Y1, 32(DX) \
	MOVU Y2, 0(AX) \
	MOVU Y3, 32(AX) \
	MOVU Y4, 0(BX) \
	MOVU Y5, 32(BX) \
	MOVU Y6, 0(R8) \
	MOVU Y7, 32(R8) \
	VZEROUPPER \
	RET

// KERN8 is the body of kern8x16 (float64) and kern8x32s (float32), the
// AVX-512 blocks of kern512_amd64.s, which differ only in their element
// width: for r in 0..7 and the two ZMM vectors of columns j,
//
//	d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
//
// accumulated in order of p with fused multiply-adds, the broadcasts of c
// embedded in them (FMA is VFMADD231PD.BCST or VFMADD231PS.BCST). Strides
// are in elements; SHIFT is log2 of the element size. Sixteen ZMM
// accumulators. LOOP and STORE name the labels of one expansion.
#define KERN8(MOVU, FMA, SHIFT, LOOP, STORE) \
	MOVQ n+0(FP), CX \
	MOVQ c+8(FP), SI \
	MOVQ cRow+16(FP), R8 \
	MOVQ cStep+24(FP), R9 \
	MOVQ w+32(FP), DI \
	MOVQ wStride+40(FP), R10 \
	MOVQ d+48(FP), DX \
	MOVQ dStride+56(FP), R11 \
	SHLQ $SHIFT, R8 \
	SHLQ $SHIFT, R9 \
	SHLQ $SHIFT, R10 \
	SHLQ $SHIFT, R11 \
	LEAQ (SI)(R8*2), R12 \
	ADDQ R8, R12 \
	LEAQ (R12)(R8*2), R13 \
	ADDQ R8, R13 \
	LEAQ (DX)(R11*2), AX \
	ADDQ R11, AX \
	LEAQ (AX)(R11*2), BX \
	ADDQ R11, BX \
	MOVU (DX), Z0 \
	MOVU 64(DX), Z1 \
	MOVU (DX)(R11*1), Z2 \
	MOVU 64(DX)(R11*1), Z3 \
	MOVU (DX)(R11*2), Z4 \
	MOVU 64(DX)(R11*2), Z5 \
	MOVU (AX), Z6 \
	MOVU 64(AX), Z7 \
	MOVU (AX)(R11*1), Z8 \
	MOVU 64(AX)(R11*1), Z9 \
	MOVU (AX)(R11*2), Z10 \
	MOVU 64(AX)(R11*2), Z11 \
	MOVU (BX), Z12 \
	MOVU 64(BX), Z13 \
	MOVU (BX)(R11*1), Z14 \
	MOVU 64(BX)(R11*1), Z15 \
	TESTQ CX, CX \
	JZ    STORE \
LOOP: \
	MOVU (DI), Z16 \
	MOVU 64(DI), Z17 \
	FMA (SI), Z16, Z0 \
	FMA (SI), Z17, Z1 \
	FMA (SI)(R8*1), Z16, Z2 \
	FMA (SI)(R8*1), Z17, Z3 \
	FMA (SI)(R8*2), Z16, Z4 \
	FMA (SI)(R8*2), Z17, Z5 \
	FMA (R12), Z16, Z6 \
	FMA (R12), Z17, Z7 \
	FMA (R12)(R8*1), Z16, Z8 \
	FMA (R12)(R8*1), Z17, Z9 \
	FMA (R12)(R8*2), Z16, Z10 \
	FMA (R12)(R8*2), Z17, Z11 \
	FMA (R13), Z16, Z12 \
	FMA (R13), Z17, Z13 \
	FMA (R13)(R8*1), Z16, Z14 \
	FMA (R13)(R8*1), Z17, Z15 \
	ADDQ R9, SI \
	ADDQ R9, R12 \
	ADDQ R9, R13 \
	ADDQ R10, DI \
	DECQ CX \
	JNZ  LOOP \
STORE: \
	MOVU Z0, (DX) \
	MOVU Z1, 64(DX) \
	MOVU Z2, (DX)(R11*1) \
	MOVU Z3, 64(DX)(R11*1) \
	MOVU Z4, (DX)(R11*2) \
	MOVU Z5, 64(DX)(R11*2) \
	MOVU Z6, (AX) \
	MOVU Z7, 64(AX) \
	MOVU Z8, (AX)(R11*1) \
	MOVU Z9, 64(AX)(R11*1) \
	MOVU Z10, (AX)(R11*2) \
	MOVU Z11, 64(AX)(R11*2) \
	MOVU Z12, (BX) \
	MOVU Z13, 64(BX) \
	MOVU Z14, (BX)(R11*1) \
	MOVU Z15, 64(BX)(R11*1) \
	VZEROUPPER \
	RET
