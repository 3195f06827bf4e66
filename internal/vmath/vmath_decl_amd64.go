//go:build !purego

package vmath

//go:generate go run ../asmgen vmath_amd64.s

import "golang.org/x/sys/cpu"

// useFMA reports whether the AVX2/FMA kernels may run. It is fixed at
// start-up from the CPU's features.
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func vsigmoid(x []float64)

//go:noescape
func vtanh(x []float64)

//go:noescape
func axpyFMA(a float64, x []float64, y []float64)

//go:noescape
func dotFMA(x []float64, y []float64) float64

//go:noescape
func mulAVX(dst []float64, x []float64, y []float64)
