package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/exampletest"
)

// build compiles the tour into a temporary directory.
func build(t *testing.T) string { return exampletest.Build(t, "tour") }

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestRefusals: bad flags and stray arguments exit 2 with the reason, before
// any work (no output directory is created).
func TestRefusals(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"stray argument", []string{"-out", "OUT", "overlap"}, "", `unexpected argument "overlap"`},
		{"unknown step", []string{"-out", "OUT", "-only", "nope"}, "", `-only "nope": no such step`},
		{"empty out", []string{"-out", ""}, "", "-out is empty"},
		{"out is a file", []string{"-out", file}, "", "is a file, not a directory"},
		{"missing testdata", []string{"-out", "OUT"}, filepath.Join(dir, "absent"), "CROSSCLUSTER_TESTDATA=" + filepath.Join(dir, "absent") + " is not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "OUT", out)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "CROSSCLUSTER_TESTDATA="+c.env)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused tour created %s", out)
			}
		})
	}
}

// TestInterrupt: SIGINT while the tour compiles exits 130 with one line on
// stderr and leaves no build directory behind.
func TestInterrupt(t *testing.T) {
	bin := build(t)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "-only", "overlap", "-out", filepath.Join(t.TempDir(), "out"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	buildDirs := filepath.Join(tmp, "crosscluster-tour-*")
	stderr := exampletest.InterruptAtFile(t, cmd, buildDirs)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "tour: interrupted") || strings.Count(stderr, "tour:") != 1 {
		t.Errorf("stderr after SIGINT, want one line \"tour: interrupted ...\":\n%s", stderr)
	}
	if left, _ := filepath.Glob(buildDirs); len(left) > 0 {
		t.Errorf("build directory left behind: %v", left)
	}
}
