package sweep

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestLedgerFileRefused: a path that is not a ledger gets our words, not
// SQLite's, for the controller and for the read-only view.
func TestLedgerFileRefused(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello, this is not SQLite\n"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{empty, "is an empty file, not a ledger"},
		{dir, "is a directory, not a ledger file"},
		{text, "is not a sweep ledger (not an SQLite database)"},
	} {
		for name, open := range map[string]func(string) (*Ledger, error){"OpenLedger": OpenLedger, "OpenLedgerReadOnly": OpenLedgerReadOnly} {
			l, err := open(tc.path)
			if err == nil {
				l.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SQL") && !strings.Contains(err.Error(), "SQLite database") {
				t.Errorf("%s(%s): %v, want %q", name, filepath.Base(tc.path), err, tc.want)
			}
		}
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("the empty file was written to (%d bytes)", len(b))
	}
}

// TestReadOnlyLedgerInReadOnlyDir: a finished ledger is readable by a user
// who cannot write its directory (SQLite's read-only mode alone needs to
// create the -shm file of a WAL database there). As root, the reading is
// done by a child process running as nobody.
func TestReadOnlyLedgerInReadOnlyDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("directory permissions differ on Windows")
	}
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

// TestSlugsDistinct: values that differ only in characters a slug cannot
// hold still get distinct slugs.
func TestSlugsDistinct(t *testing.T) {
	s := &Spec{Name: "sl", Axes: []Axis{{Key: "opt", Values: []Value{Str("a b"), Str("a/b"), Str("a_b"), Str("a~b"), Str("a~20b"), Str("é")}}}}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, p := range pts {
		if prev, ok := seen[p.Slug]; ok {
			t.Errorf("slug %q for %q and %q", p.Slug, prev, p.Params["opt"].Lit)
		}
		seen[p.Slug] = p.Params["opt"].Lit
		if strings.ContainsAny(p.Slug, " /\\") {
			t.Errorf("slug %q holds a space or a slash", p.Slug)
		}
	}
	if got := slugText("a b") + " " + slugText("a_b"); got != "a~20b a_b" {
		t.Errorf("slugs %q", got)
	}
}

// TestSpecMessages: an empty choice and a negative seed say what is wrong.
func TestSpecMessages(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: x\nsamples:\n  count: 2\n  seed: 1\n  params:\n    - {key: opt, choice: []}\n", "samples.params[0].choice: malformed spec: an empty list: a choice needs at least one value"},
		{"name: x\nsamples:\n  count: 2\n  seed: -1\n  params:\n    - {key: lr, uniform: [0, 1]}\n", `samples.seed: malformed spec: "-1" is not a seed: a whole number from 0 to 18446744073709551615`},
		{"name: x\nsamples:\n  count: -2\n  params:\n    - {key: lr, uniform: [0, 1]}\n", `samples.count: malformed spec: "-2" is not a sample count`},
	} {
		_, err := LoadSpec(strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.yaml, err, tc.want)
		}
	}
}
