//go:build !amd64 || purego

package vmath

func standardizeAVX([]float64, []float64, float64, float64) {
	panic("vmath: no assembly kernel on this platform")
}
