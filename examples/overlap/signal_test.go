//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupted runs the command in a child process (this test binary,
// asked by $OVERLAP_TEST_MAIN to be the command), interrupts it with
// SIGINT while it works and checks that it exits with status 130 and one
// line, leaving the previous run's outputs byte for byte and no staging
// directory behind.
func TestInterrupted(t *testing.T) {
	if os.Getenv("OVERLAP_TEST_MAIN") == "1" {
		os.Exit(mainCode(strings.Fields(os.Getenv("OVERLAP_TEST_ARGS")), os.Stdout, os.Stderr))
	}
	if testing.Short() {
		t.Skip("starts a child process; skipped in -short mode")
	}
	out := t.TempDir()
	previous := []byte("the previous run's report\n")
	if err := os.WriteFile(filepath.Join(out, "report.md"), previous, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestInterrupted$")
	cmd.Env = append(os.Environ(), "OVERLAP_TEST_MAIN=1", "OVERLAP_TEST_ARGS=-out "+out+" -n 200000")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the child is generating its synthetic clusters
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "interrupted") {
		t.Errorf("stderr should be one line saying interrupted:\n%s", stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !bytes.Equal(got, previous) {
		t.Errorf("report.md changed: %q, %v", got, err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("output directory holds %v, want only the previous report.md", names)
	}
}
