//go:build !purego

package vmath

//go:noescape
func standardizeAVX(dst []float64, x []float64, center, scale float64)
