//go:build !purego

#include "textflag.h"

// func prefetchL2(p *float64, n int)
//
// PREFETCHT1 (into the second-level cache and above) for every 64-byte
// line that [p, p+8n) touches. Prefetches neither fault nor change
// memory.
TEXT ·prefetchL2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ (SI)(CX*8), CX
	ANDQ $-64, SI

pfloop:
	PREFETCHT1 (SI)
	ADDQ       $64, SI
	CMPQ       SI, CX
	JB         pfloop
	RET
