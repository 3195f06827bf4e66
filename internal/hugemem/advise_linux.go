package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const supported = true

// align returns buf from its first 2 MiB-aligned element on.
func align(buf []float64) []float64 {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	skip := ((p+hugePage-1)&^(hugePage-1) - p) / 8
	return buf[skip:]
}

// advise asks for transparent huge pages on x's memory, which is
// 2 MiB-aligned and a whole number of huge pages. The advice is only a
// hint: an error (an old kernel, THP disabled) leaves ordinary pages, so
// it is ignored.
func advise(x []float64) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*8)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
