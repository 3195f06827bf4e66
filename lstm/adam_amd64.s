//go:build !purego

#include "textflag.h"

// func adamAVX(w []float64, g []float64, mom []float64, vel []float64, k *[7]float64)
//
// The Adam update of adamUpdate (train.go) for i < len(w) &^ 3, four at a
// time, with k = {β1, 1−β1, β2, 1−β2, step size, √(bias correction 2), ε}
// and the same operations in the same order as the Go loop, none fused:
//
//	mom = β1·mom + (1−β1)·g
//	vel = β2·vel + ((1−β2)·g)·g
//	w   = w − (step·mom) / (√vel / √bc2 + ε)
//
// g, mom and vel must be at least as long as w (the caller's job).
TEXT ·adamAVX(SB), NOSPLIT, $0-104
	MOVQ         w_base+0(FP), DI
	MOVQ         w_len+8(FP), CX
	MOVQ         g_base+24(FP), SI
	MOVQ         mom_base+48(FP), R8
	MOVQ         vel_base+72(FP), R9
	MOVQ         k+96(FP), AX
	SHRQ         $2, CX
	JZ           adamdone
	VBROADCASTSD 0(AX), Y9
	VBROADCASTSD 8(AX), Y10
	VBROADCASTSD 16(AX), Y11
	VBROADCASTSD 24(AX), Y12
	VBROADCASTSD 32(AX), Y13
	VBROADCASTSD 40(AX), Y14
	VBROADCASTSD 48(AX), Y15

adamloop:
	VMOVUPD (SI), Y0
	VMULPD  (R8), Y9, Y1
	VMULPD  Y0, Y10, Y2
	VADDPD  Y2, Y1, Y1
	VMOVUPD Y1, (R8)
	VMULPD  (R9), Y11, Y3
	VMULPD  Y0, Y12, Y4
	VMULPD  Y0, Y4, Y4
	VADDPD  Y4, Y3, Y3
	VMOVUPD Y3, (R9)
	VSQRTPD Y3, Y5
	VDIVPD  Y14, Y5, Y5
	VADDPD  Y15, Y5, Y5
	VMULPD  Y1, Y13, Y6
	VDIVPD  Y5, Y6, Y6
	VMOVUPD (DI), Y7
	VSUBPD  Y6, Y7, Y7
	VMOVUPD Y7, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, R9
	DECQ    CX
	JNZ     adamloop

adamdone:
	VZEROUPPER
	RET
