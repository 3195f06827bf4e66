//go:build !purego

package vmath

//go:generate go run ../asmgen standardize_amd64.s

//go:noescape
func standardizeAVX(dst []float64, x []float64, center, scale float64)
