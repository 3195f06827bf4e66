//go:build !purego

#include "textflag.h"
#include "kern4_amd64.h"

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
	KERN8(VMOVUPD, VFMADD231PD.BCST, 3, k8x16loop, k8x16store)

// func kern8x32s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int)
//
// Rows 0..7, columns 0..31 of the product: for r < 8 and j < 32,
//
//	d[r*dStride+j] += Σ_{p<n} c[r*cRow+p*cStep] · w[p*wStride+j]
TEXT ·kern8x32s(SB), NOSPLIT, $0-64
	KERN8(VMOVUPS, VFMADD231PS.BCST, 2, k8x32sloop, k8x32sstore)

