//go:build !linux

package hugemem

func advise([]float64) {}
