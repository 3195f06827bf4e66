package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFlags checks that bad flag values and stray arguments are refused by
// parseFlags, before any work, with an error naming the flag, and that the
// built binary then exits 2 with one line and writes nothing.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" means accepted
	}{
		{nil, ""},
		{[]string{"-cell", "gru", "-published"}, ""},
		{[]string{"-patience", "-1"}, ""},
		{[]string{"-lr", "-1"}, "-lr"},
		{[]string{"-lr", "0"}, "-lr"},
		{[]string{"-lr", "NaN"}, "-lr"},
		{[]string{"-lr", "+Inf"}, "-lr"},
		{[]string{"-hidden", "0"}, "-hidden"},
		{[]string{"-layers", "-2"}, "-layers"},
		{[]string{"-batch", "0"}, "-batch"},
		{[]string{"-epochs", "0"}, "-epochs"},
		{[]string{"-patience", "0"}, "-patience"},
		{[]string{"-threshold", "1"}, "-threshold"},
		{[]string{"-threshold", "0"}, "-threshold"},
		{[]string{"-snapshot", "1.5"}, "-snapshot"},
		{[]string{"-jobs", "3"}, "-jobs"},
		{[]string{"-j", "0"}, "-j"},
		{[]string{"-m", "1001"}, "-m"},
		{[]string{"-e", "0"}, "-e"},
		{[]string{"-frame", "10ms"}, "-frame"},
		{[]string{"-workers", "0"}, "-workers"},
		{[]string{"-search-random", "-1"}, "-search-random"},
		{[]string{"-engine", "cuda"}, "-engine"},
		{[]string{"-cell", "rnn"}, "-cell"},
		{[]string{"-backend", "k8s"}, "-backend"},
		{[]string{"-model", "dir"}, "-logs"},
		{[]string{"-dashboard", ":8080"}, "-dashboard"},
		{[]string{"-spec", "s.yaml", "-backend", "condor", "-dashboard", ":8080"}, "-dashboard"},
		{[]string{"-spec", "s.yaml", "-backend", "slurm", "-dashboard", ":8080"}, ""},
		{[]string{"-spec", "s.yaml", "-dashboard", "nonsense:abc:99"}, "-dashboard"},
		{[]string{"-spec", "s.yaml", "-dashboard", ":99999"}, "-dashboard"},
		{[]string{"-spec", "s.yaml", "-dashboard", "localhost"}, "-dashboard"},
		{[]string{"-out", ""}, "-out"},
		{[]string{"-epochs", "3", "extra"}, `"extra"`},
		{[]string{"-hidden", "x"}, "-hidden"},
		{[]string{"-nosuchflag"}, "nosuchflag"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want an error naming %s", err, tc.want)
			}
		})
	}

	// The binary: exit status 2, one line on stderr, nothing written.
	for _, args := range [][]string{{"-lr", "-1"}, {"-hidden", "0"}, {"-epochs", "3", "stray"}} {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(staticBinary(t), append([]string{"-out", out}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: err %v, want exit status 2", args, err)
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "heldjobs: ") {
			t.Errorf("%v: stderr %q, want one line", args, stderr.String())
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: a refused run created %s", args, out)
		}
	}
}

// TestInterrupt sends SIGINT to a training run and checks the exit status
// 130 and the one line that says so.
func TestInterrupt(t *testing.T) {
	cmd := exec.Command(staticBinary(t), "-out", t.TempDir(), "-jobs", "3000", "-epochs", "100000", "-patience", "-1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	signalled := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !signalled && strings.HasPrefix(sc.Text(), "epoch ") {
			cmd.Process.Signal(syscall.SIGINT)
			signalled = true
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("no exit a minute after SIGINT")
	}
	var ee *exec.ExitError
	if !signalled || !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("signalled %v, err %v, want exit status 130", signalled, err)
	}
	n := 0
	for _, l := range lines {
		if strings.Contains(l, "interrupted") {
			n++
		}
	}
	if last := lines[len(lines)-1]; n != 1 || !strings.HasPrefix(last, "heldjobs: interrupted") {
		t.Errorf("stderr ends %q with %d interruption lines, want one, last", last, n)
	}
}
