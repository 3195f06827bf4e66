//go:build unix

package sweep

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLedgerAliasRefused: a controller reaching a ledger through a
// symbolic link or a second hard link is refused with ErrAlias, and a
// ledger with two hard links is refused under either name; a directory
// reached through a symbolic link leads to the same lock.
func TestLedgerAliasRefused(t *testing.T) {
	l, path := openTemp(t)
	dir := filepath.Dir(path)
	sym := filepath.Join(dir, "sym.db")
	if err := os.Symlink(path, sym); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLedger(sym); !errors.Is(err, ErrAlias) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("through a symbolic link: %v, want ErrAlias", err)
	}
	hard := filepath.Join(t.TempDir(), "hard.db")
	if err := os.Link(path, hard); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if _, err := OpenLedger(hard); !errors.Is(err, ErrAlias) || !strings.Contains(err.Error(), "2 hard links") {
		t.Errorf("through a hard link: %v, want ErrAlias", err)
	}
	l.Close()
	if _, err := OpenLedger(path); !errors.Is(err, ErrAlias) {
		t.Errorf("original name while a hard link exists: %v, want ErrAlias", err)
	}
	// The read-only view is not a controller: links do not matter to it.
	ro, err := OpenLedgerReadOnly(sym)
	if err != nil {
		t.Fatalf("read-only through a symbolic link: %v", err)
	}
	ro.Close()
	os.Remove(hard)
	l2, err := OpenLedger(path)
	if err != nil {
		t.Fatalf("after removing the hard link: %v", err)
	}
	defer l2.Close()
	dirLink := filepath.Join(t.TempDir(), "d")
	if err := os.Symlink(dir, dirLink); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLedger(filepath.Join(dirLink, "ledger.db")); !errors.Is(err, ErrLocked) {
		t.Errorf("through a linked directory while held: %v, want ErrLocked", err)
	}
}

// TestLockHolderNamed: the error names the holding controller's pid, host
// and since when, for a holder in another process.
func TestLockHolderNamed(t *testing.T) {
	_, path := openTemp(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderNamed$")
	cmd.Env = append(os.Environ(), "SWEEP_TEST_OPEN="+path)
	out, _ := cmd.CombinedOutput()
	host, _ := os.Hostname()
	want := regexp.MustCompile(fmt.Sprintf(`held by pid %d on %s since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`, os.Getpid(), regexp.QuoteMeta(host)))
	if !want.Match(out) || !strings.Contains(string(out), ErrLocked.Error()) {
		t.Errorf("second controller in another process said:\n%s\nwant %v", out, want)
	}
}

func init() {
	// The other process of TestLockHolderNamed.
	if p := os.Getenv("SWEEP_TEST_OPEN"); p != "" {
		_, err := OpenLedger(p)
		fmt.Println(err)
		os.Exit(0)
	}
}

// TestLockFreeAfterCloseWhileForking: a closed ledger can be opened again
// at once while other goroutines start processes. (An flock would stay held
// by a child forked while the lock file was open, until the child's exec.)
func TestLockFreeAfterCloseWhileForking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				_ = exec.Command("true").Run()
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 60 {
		l, err := OpenLedger(path)
		if err != nil {
			t.Fatalf("open %d right after a close: %v", i, err)
		}
		l.Close()
	}
}
