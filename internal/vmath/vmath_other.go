//go:build !amd64 || purego

package vmath

// useFMA is false where no assembly kernels exist; the Go loops run.
const useFMA = false

func vsigmoid([]float64) { panic("vmath: no assembly kernel on this platform") }

func vtanh([]float64) { panic("vmath: no assembly kernel on this platform") }

func axpyFMA(float64, []float64, []float64) { panic("vmath: no assembly kernel on this platform") }

func dotFMA([]float64, []float64) float64 { panic("vmath: no assembly kernel on this platform") }

func mulAVX([]float64, []float64, []float64) { panic("vmath: no assembly kernel on this platform") }
