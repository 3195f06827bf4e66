//go:build unix

package dashboard

import "syscall"

// openNoFollow refuses a symbolic link as the file opened and does not
// wait for a FIFO's writer.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
