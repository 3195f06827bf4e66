package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCtrlC builds the example, interrupts it while it scores the spack-build
// experiment and checks the exit status (130), the one line it prints, and
// that no output is left half-written under its final name.
func TestCtrlC(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Interrupt cannot be sent to a process on Windows")
	}
	if testing.Short() {
		t.Skip("builds the example")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rainbow")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "-out", out, "-experiment", "spack-build")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until jobs.csv is being written (its temporary file exists).
	deadline := time.Now().Add(60 * time.Second)
	for {
		tmp, _ := filepath.Glob(filepath.Join(out, ".jobs.csv.tmp*"))
		if len(tmp) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("jobs.csv was never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	last := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if got := last[len(last)-1]; !strings.HasPrefix(got, "rainbow: interrupted") {
		t.Errorf("last line %q, want the interruption", got)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "jobs.csv" || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}
