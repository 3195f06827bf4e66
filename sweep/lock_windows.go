//go:build windows

package sweep

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// lockLedger takes the controller lock, an exclusive LockFileEx lock on
// path+".lock" that Windows releases when the holder's handle closes or
// the process dies, and records "pid N on HOST" in it.
func lockLedger(path string) (unlock func(), err error) {
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(lf.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		holder, _ := os.ReadFile(path + ".lock")
		lf.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, fmt.Errorf("sweep: %w: %s (held by %s)", ErrLocked, path, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	_ = lf.Truncate(0)
	_, _ = lf.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+" on "+host+" since "+time.Now().UTC().Format(time.RFC3339)+"\n"), 0)
	return func() { lf.Close() }, nil
}

// links is 1: hard links of a ledger are not detected on Windows.
func links(os.FileInfo) uint64 { return 1 }
