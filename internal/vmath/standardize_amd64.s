//go:build !purego

#include "textflag.h"

// func standardizeAVX(dst []float64, x []float64, center, scale float64)
//
// dst[i] = (x[i] − center) / scale for i < len(dst) &^ 15 (x at least as
// long is the caller's job). Four independent divisions are in flight per
// iteration: the divider, not the loads, bounds the loop.
TEXT ·standardizeAVX(SB), NOSPLIT, $0-64
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         x_base+24(FP), SI
	VBROADCASTSD center+48(FP), Y4
	VBROADCASTSD scale+56(FP), Y5
	SHRQ         $4, CX
	JZ           stddone

stdloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VSUBPD  Y4, Y0, Y0
	VSUBPD  Y4, Y1, Y1
	VSUBPD  Y4, Y2, Y2
	VSUBPD  Y4, Y3, Y3
	VDIVPD  Y5, Y0, Y0
	VDIVPD  Y5, Y1, Y1
	VDIVPD  Y5, Y2, Y2
	VDIVPD  Y5, Y3, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     stdloop

stddone:
	VZEROUPPER
	RET
