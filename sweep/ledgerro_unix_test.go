//go:build unix

package sweep

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyLedgerInReadOnlyDir: a finished ledger is readable by a user
// who cannot write its directory (SQLite's read-only mode alone needs to
// create the -shm file of a WAL database there). As root, the reading is
// done by a child process running as nobody.
func TestReadOnlyLedgerInReadOnlyDir(t *testing.T) {
	if p := os.Getenv("SWEEP_TEST_READ_LEDGER"); p != "" {
		t.Skip("child")
	}
	dir, err := os.MkdirTemp("", "sweep-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "ledger.db")
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, l, gridSpec("ro", 3, nil))
	l.Close()
	os.Remove(path + ".lock")
	if os.Geteuid() != 0 {
		os.Chmod(dir, 0o555)
		if n, err := countRuns(path); err != nil || n != 3 {
			t.Fatalf("read-only directory: %d runs, %v; want 3", n, err)
		}
		return
	}
	// As root: a copy of this test binary that nobody may run, run as nobody.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "test.bin")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, b, 0o755)
	os.Chmod(dir, 0o755)
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyLedgerChild$")
	cmd.Env = append(os.Environ(), "SWEEP_TEST_READ_LEDGER="+path, "HOME=/", "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "runs: 3") {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// TestReadOnlyLedgerChild is the reading half of
// TestReadOnlyLedgerInReadOnlyDir.
func TestReadOnlyLedgerChild(t *testing.T) {
	p := os.Getenv("SWEEP_TEST_READ_LEDGER")
	if p == "" {
		t.Skip("run by TestReadOnlyLedgerInReadOnlyDir")
	}
	n, err := countRuns(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("runs: %d", n)
	println("runs:", n)
}

func countRuns(path string) (int, error) {
	l, err := OpenLedgerReadOnly(path)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	rs, err := l.Runs(context.Background())
	return len(rs), err
}
