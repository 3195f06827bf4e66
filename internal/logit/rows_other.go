//go:build !amd64 || purego

package logit

const useAVX2 = false

func rowTermsAVX2(g, h, eta, mu []float64, lab []uint8, w []float64, w0, w1 float64) bool {
	panic("logit: no assembly kernel on this platform")
}
