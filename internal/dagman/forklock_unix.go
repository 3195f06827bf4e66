//go:build unix

package dagman

import "syscall"

// holdForks keeps this process from forking until the returned function
// is called. A file written while another goroutine forks stays open for
// writing in the child until the child's exec closes it; exec'ing the
// file in that window fails with ETXTBSY ("text file busy"), golang/go
// issue 22315. os/exec forks under syscall.ForkLock held for writing, so
// holding it for reading from a file's open to its close means no child
// can inherit the descriptor.
func holdForks() (release func()) {
	syscall.ForkLock.RLock()
	return syscall.ForkLock.RUnlock
}
