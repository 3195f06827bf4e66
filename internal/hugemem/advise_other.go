//go:build !linux

package hugemem

const supported = false

func align(buf []float64) []float64 { return buf }

func advise([]float64) {}
