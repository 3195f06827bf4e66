//go:build !purego

package vmath

//go:generate go run ../asmgen prefetch_amd64.s

//go:noescape
func prefetchL2(p *float64, n int)
