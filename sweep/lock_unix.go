//go:build unix

package sweep

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockedFiles are the lock files this process holds, by device and inode.
// A POSIX record lock belongs to the process, not to a descriptor: a second
// lock from this process on the same file would succeed, and closing any
// descriptor of the file would drop the lock, so a second OpenLedger of the
// same ledger in this process is refused here, before the file is opened.
var lockedFiles = struct {
	sync.Mutex
	m map[fileID]string
}{m: map[fileID]string{}}

// lockLedger takes the controller lock: a POSIX write lock (fcntl F_SETLK)
// on path+".lock", which the kernel releases when the holder dies and which,
// unlike flock, a child forked by the holder does not share, so a lock is
// free as soon as its controller closed it. The lock file records who holds
// it: "pid N on HOST since TIME".
func lockLedger(path string) (unlock func(), err error) {
	lockedFiles.Lock()
	defer lockedFiles.Unlock()
	if fi, err := os.Lstat(path + ".lock"); err == nil {
		if holder, ok := lockedFiles.m[idOf(fi)]; ok {
			return nil, fmt.Errorf("sweep: %w: %s (held by %s, this process)", ErrLocked, path, holder)
		}
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	fi, err := lf.Stat()
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	id := idOf(fi)
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(lf.Fd(), unix.F_SETLK, &lk); err != nil {
		holder, _ := os.ReadFile(path + ".lock")
		lf.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("sweep: %w: %s (held by %s)", ErrLocked, path, holderText(holder))
		}
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	text := fmt.Sprintf("pid %d on %s since %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	_ = lf.Truncate(0)
	_, _ = lf.WriteAt([]byte(text+"\n"), 0)
	lockedFiles.m[id] = text
	return func() {
		lockedFiles.Lock()
		delete(lockedFiles.m, id)
		lockedFiles.Unlock()
		lf.Close()
	}, nil
}

// holderText is the lock file's record of its holder, or a placeholder for
// a record not written yet.
func holderText(b []byte) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "a controller starting up"
}

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}
}

// links is the number of hard links of the file fi describes.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
