//go:build !purego

package lstm

//go:generate go run ../internal/asmgen cell_amd64.s
//go:generate go run ../internal/asmgen kernel_amd64.s
//go:generate go run ../internal/asmgen kernel32_amd64.s
//go:generate go run ../internal/asmgen kern512_amd64.s
//go:generate go run ../internal/asmgen bwd_amd64.s
//go:generate go run ../internal/asmgen adam_amd64.s
//go:generate go run ../internal/asmgen scan_amd64.s

import "golang.org/x/sys/cpu"

// useFMA reports whether the AVX2/FMA kernels may run. It is fixed at
// start-up from the CPU's features and never changes.
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX512 reports whether the AVX-512 kernels may run as well. They
// compute the same bits as the AVX2 ones. Fixed at start-up like useFMA;
// GODEBUG=cpu.avx512f=off turns them off.
var useAVX512 = useFMA && cpu.X86.HasAVX512F

//go:noescape
func kern4x8(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int)

//go:noescape
func kern4x16s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int)

//go:noescape
func axpy32FMA(a float32, x []float32, y []float32)

//go:noescape
func vsigmoid32(x []float32)

//go:noescape
func vtanh32(x []float32)

//go:noescape
func nonZero16(x []float64, idx []int32) int

//go:noescape
func cell64(hid int, rows int, gate *float64, cp *float64, c *float64, tc *float64, h *float64)

//go:noescape
func cell32(hid int, rows int, gate *float32, cp *float32, c *float32, tc *float32, h *float32)

//go:noescape
func kern8x16(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int)

//go:noescape
func kern8x32s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int)

//go:noescape
func bwd64(hid int, rows int, gate *float64, tc *float64, u *float64, dh *float64, dc *float64, cp *float64, cpStride int)

//go:noescape
func bwd32(hid int, rows int, gate *float32, tc *float32, u *float32, dh *float32, dc *float32, cp *float32, cpStride int)

//go:noescape
func adamAVX(w []float64, g []float64, mom []float64, vel []float64, k *[7]float64)
