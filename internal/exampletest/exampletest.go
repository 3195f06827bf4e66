// Package exampletest holds what the examples' tests share: the check of a
// table of command lines against an example's flag parser, building an
// example, and interrupting a running one (Ctrl-C) to check that it exits
// with status 130.
package exampletest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Flag is one command line of a flag table. Want is "" for a command line
// the example accepts, else a text its usage error must hold.
type Flag struct {
	Name string
	Args []string
	Want string
}

// Flags runs parse on each command line of table as a subtest, with "-out"
// set to a directory that does not exist yet unless the line sets -out
// itself. An accepted line must parse; a refused one must give an error
// wrapping usage that holds Want, and must not have created the directory:
// every flag is checked before anything is done.
func Flags(t *testing.T, table []Flag, usage error, parse func(args []string) error) {
	t.Helper()
	for _, tt := range table {
		t.Run(tt.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := tt.Args
			if !slices.Contains(args, "-out") {
				args = append([]string{"-out", out}, args...)
			}
			err := parse(args)
			if tt.Want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, usage) || !strings.Contains(err.Error(), tt.Want) {
				t.Errorf("parseFlags(%q) = %v; want a usage error saying %q", tt.Args, err, tt.Want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused command line left %s behind", out)
			}
		})
	}
}

// Build compiles the example in the current directory into a temporary
// directory and returns the binary's path.
func Build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// readyWait bounds the wait for a command to get far enough to interrupt.
const readyWait = time.Minute

// InterruptAtLine starts cmd, sends it SIGINT after a line of its standard
// output starting with prefix and a further pause, and returns its standard
// error once it has exited with status 130 (else the test fails). It skips
// where SIGINT cannot be sent (Windows).
func InterruptAtLine(t *testing.T, cmd *exec.Cmd, prefix string, pause time.Duration) string {
	t.Helper()
	skipNoSignal(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), prefix) {
				seen <- true
				io.Copy(io.Discard, stdout)
				return
			}
		}
		seen <- false
	}()
	select {
	case ok := <-seen:
		if !ok {
			cmd.Wait()
			t.Fatalf("the command ended without printing %q; stderr:\n%s", prefix, stderr.String())
		}
	case <-time.After(readyWait):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no line %q within %v", prefix, readyWait)
	}
	time.Sleep(pause)
	return interrupt(t, cmd, &stderr)
}

// InterruptAtFile starts cmd, sends it SIGINT once a file matching the
// pattern glob exists, and returns its standard error once it has exited
// with status 130 (else the test fails). It skips where SIGINT cannot be
// sent (Windows).
func InterruptAtFile(t *testing.T, cmd *exec.Cmd, glob string) string {
	t.Helper()
	skipNoSignal(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(readyWait)
	for {
		if m, _ := filepath.Glob(glob); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no file %s within %v; stderr:\n%s", glob, readyWait, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return interrupt(t, cmd, &stderr)
}

func skipNoSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT cannot be sent to a process on Windows")
	}
}

// interrupt sends SIGINT to the started cmd and checks its exit status.
func interrupt(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) string {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	return stderr.String()
}
