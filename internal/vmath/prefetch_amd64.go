//go:build !purego

package vmath

//go:noescape
func prefetchL2(p *float64, n int)
