//go:build !purego

package logit

//go:generate go run ../asmgen rows_amd64.s

import "golang.org/x/sys/cpu"

// useAVX2 reports whether rowTermsAVX2 may run.
var useAVX2 = cpu.X86.HasAVX2

// rowTermsAVX2 is rowTerms for len(g) a multiple of four (the other slices
// at least as long; w may be nil).
//
//go:noescape
func rowTermsAVX2(g, h, eta, mu []float64, lab []uint8, w []float64, w0, w1 float64) bool
