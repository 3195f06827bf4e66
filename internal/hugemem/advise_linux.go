package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// advise asks for transparent huge pages on the 2 MiB-aligned part of x's
// memory. The advice is only a hint: an error (an old kernel, THP
// disabled) leaves ordinary pages, so it is ignored.
func advise(x []float64) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(len(x))*8) &^ (hugePage - 1)
	if end <= start {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*8)
	_ = unix.Madvise(b[start-p:end-p], unix.MADV_HUGEPAGE)
}
