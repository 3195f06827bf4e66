//go:build unix

package sweep

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// deadHolderWait bounds how long OpenLedger waits for a lock whose recorded
// holder, a controller on this host, has exited. The lock can outlive its
// holder for a moment: a child the controller was forking when it was
// killed holds a copy of the descriptor until its exec closes it.
const deadHolderWait = 10 * time.Second

// lockLedger takes the controller lock, an flock on path+".lock" that the
// kernel releases when the holder dies, and records "pid N on HOST" in it.
func lockLedger(path string) (unlock func(), err error) {
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	waitUntil := time.Now().Add(deadHolderWait)
	for {
		err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		holder, _ := os.ReadFile(path + ".lock")
		if errors.Is(err, syscall.EWOULDBLOCK) && holderGone(string(holder), host) && time.Now().Before(waitUntil) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		lf.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sweep: %w: %s (held by %s)", ErrLocked, path, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	_ = lf.Truncate(0)
	_, _ = lf.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+" on "+host+"\n"), 0)
	return func() { lf.Close() }, nil
}

// holderGone reports whether the lock file's text ("pid N on HOST") names a
// process on this host that no longer exists.
func holderGone(text, host string) bool {
	var pid int
	var on, h string
	if _, err := fmt.Sscanf(strings.TrimSpace(text), "pid %d %s %s", &pid, &on, &h); err != nil || on != "on" || h != host || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
