// Command tour runs every workflow's example end to end on built-in data,
// writing each one's outputs under one directory (default ./out).
//
// Each example is a separate program under examples/; tour runs them in turn
// with "go run" from the module root, so it needs the Go toolchain that
// README.md's set-up already requires.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// steps lists the workflows in the order README.md presents them. Each entry
// is the example's directory under examples/ and the flags it gets besides -out.
var steps = []struct {
	name  string
	flags []string
}{
	{"overlap", nil},
	{"rainbow", nil},
	{"eventlog", nil},
	{"heldjobs", nil},
	{"tolerance", nil},
	{"losssweep", nil},
}

func main() {
	out := flag.String("out", "out", "directory that receives one sub-directory per workflow")
	only := flag.String("only", "", "run just this workflow (overlap, rainbow, eventlog, heldjobs, tolerance, losssweep)")
	flag.Parse()
	if err := run(*out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
}

func run(out, only string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	var failed []string
	ran := 0
	for _, s := range steps {
		if only != "" && s.name != only {
			continue
		}
		ran++
		dir := filepath.Join(absOut, s.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		args := append([]string{"run", "./examples/" + s.name, "-out", dir}, s.flags...)
		fmt.Printf("\n=== %s: go %v\n", s.name, args)
		start := time.Now()
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Printf("--- %s FAILED after %s: %v\n", s.name, time.Since(start).Round(time.Millisecond), err)
			failed = append(failed, s.name)
			continue
		}
		fmt.Printf("--- %s ok in %s, outputs in %s\n", s.name, time.Since(start).Round(time.Millisecond), dir)
	}
	if ran == 0 {
		return fmt.Errorf("no workflow named %q", only)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d workflows failed: %v", len(failed), ran, failed)
	}
	fmt.Printf("\nall %d workflows ran; outputs under %s\n", ran, absOut)
	return nil
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory; run tour from inside the crosscluster checkout")
		}
		dir = parent
	}
}
