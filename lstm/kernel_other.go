//go:build !amd64 || purego

package lstm

// useFMA is false where no assembly kernels exist; the pure-Go loops run.
const useFMA = false

// useAVX512 is false for the same reason.
const useAVX512 = false

func kern4x8(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int) {
	panic("lstm: no assembly kernel on this platform")
}

func kern4x16s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int) {
	panic("lstm: no assembly kernel on this platform")
}

func axpy32FMA(a float32, x []float32, y []float32) {
	panic("lstm: no assembly kernel on this platform")
}

func vsigmoid32(x []float32) { panic("lstm: no assembly kernel on this platform") }

func vtanh32(x []float32) { panic("lstm: no assembly kernel on this platform") }

func nonZero16(x []float64, idx []int32) int { panic("lstm: no assembly kernel on this platform") }

func cell64(hid int, rows int, gate *float64, cp *float64, c *float64, tc *float64, h *float64) {
	panic("lstm: no assembly kernel on this platform")
}

func cell32(hid int, rows int, gate *float32, cp *float32, c *float32, tc *float32, h *float32) {
	panic("lstm: no assembly kernel on this platform")
}

func kern8x16(n int, c *float64, cRow int, cStep int, w *float64, wStride int, d *float64, dStride int) {
	panic("lstm: no assembly kernel on this platform")
}

func kern8x32s(n int, c *float32, cRow int, cStep int, w *float32, wStride int, d *float32, dStride int) {
	panic("lstm: no assembly kernel on this platform")
}

func bwd64(hid int, rows int, gate *float64, tc *float64, u *float64, dh *float64, dc *float64, cp *float64, cpStride int) {
	panic("lstm: no assembly kernel on this platform")
}

func bwd32(hid int, rows int, gate *float32, tc *float32, u *float32, dh *float32, dc *float32, cp *float32, cpStride int) {
	panic("lstm: no assembly kernel on this platform")
}

func adamAVX(w []float64, g []float64, mom []float64, vel []float64, k *[7]float64) {
	panic("lstm: no assembly kernel on this platform")
}
