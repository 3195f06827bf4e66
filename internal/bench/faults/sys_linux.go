package main

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

type use struct {
	sys    time.Duration
	minflt int64
}

func usage() (use, bool) {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return use{}, false
	}
	return use{time.Duration(r.Stime.Nano()), r.Minflt}, true
}

// hugeMap maps n bytes (rounded up to whole 2 MiB pages, 2 MiB-aligned)
// and advises transparent huge pages on them.
func hugeMap(n int) ([]byte, error) {
	const page = 2 << 20
	size := (n + page - 1) / page * page
	m, err := unix.Mmap(-1, 0, size+page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	off := (page - int(uintptr(unsafe.Pointer(&m[0])))%page) % page
	b := m[off : off+size]
	if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
		return nil, err
	}
	return b[:n], nil
}
