package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// snapshot returns every file under dir (relative path -> bytes); a
// directory is recorded as "dir/".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameFiles reports the differences between two snapshots.
func sameFiles(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		} else if g != want[k] {
			t.Errorf("%s: %s changed", what, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is new", what, k)
		}
	}
}

// obstruct replaces the output name in dir by a non-empty directory, which
// no run may remove, and returns its path.
func obstruct(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunFailureKeepsPreviousOutputs: a rerun that fails once it has
// started writing (an output's place taken by a directory) leaves every
// output of the previous run as it was, the experiment log included, and
// no staging directory; with the obstacle gone the same rerun replaces
// them all and logs its row (issue 13 item 9; the reviewer's repro).
func TestRunFailureKeepsPreviousOutputs(t *testing.T) {
	dir := t.TempDir()
	o := small(dir)
	if err := run(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	density := obstruct(t, dir, "density.png")
	before := snapshot(t, dir)
	again := o
	again.band = "0.1,0.9"
	err := run(context.Background(), again, io.Discard)
	if err == nil {
		t.Fatal("no error with a directory in density.png's place")
	}
	sameFiles(t, "after the failed run", before, snapshot(t, dir))
	if !strings.Contains(err.Error(), "density.png is a directory") {
		t.Errorf("err %v, want the directory named", err)
	}

	if err := os.RemoveAll(density); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), again, io.Discard); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	for _, name := range []string{"report.md", "report.json", "balance.png", "bandwidth.png", "propensity_anvil.png", "experiments.md"} {
		if after[name] == before[name] {
			t.Errorf("%s was not rewritten by the run with another band", name)
		}
	}
	if !strings.Contains(after["report.md"], "[0.1,0.9]") {
		t.Errorf("report.md does not have the new band:\n%s", after["report.md"])
	}
	if n := strings.Count(after["experiments.jsonl"], "\n"); n != 2 {
		t.Errorf("experiments.jsonl has %d rows, want 2", n)
	}
	for name := range after {
		if strings.HasPrefix(name, ".") {
			t.Errorf("%s left in the output directory", name)
		}
	}
}

// TestStagedCommitRollsBack: a move that fails half-way, or a log append
// that fails after every move, puts back every file replaced and removes
// the files added (issue 13 item 9).
func TestStagedCommitRollsBack(t *testing.T) {
	outputs := []string{"a.txt", "b.txt", "c.txt", "d.txt"}
	for _, c := range []struct {
		name     string
		failMove int // 1-based rename call that fails (0: none)
		failLast bool
	}{
		{"second output's old file moved aside", 3, false},
		{"third output moved in", 6, false},
		{"new output moved in", 7, false},
		{"log append", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			// a, b and c were written before; d is new.
			for _, name := range outputs[:3] {
				if err := os.WriteFile(filepath.Join(out, name), []byte("old "+name), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, out)
			st, err := newStaged(out)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			st.rename = func(a, b string) error {
				calls++
				if calls == c.failMove {
					return errors.New("injected rename failure")
				}
				return os.Rename(a, b)
			}
			for _, name := range outputs {
				if err := st.write(name, func(w io.Writer) error { _, err := io.WriteString(w, "new "+name); return err }); err != nil {
					t.Fatal(err)
				}
			}
			lastCalled := false
			err = st.commit(func() error {
				lastCalled = true
				if c.failLast {
					return errors.New("injected append failure")
				}
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), "as they were") {
				t.Fatalf("commit: %v", err)
			}
			if lastCalled != c.failLast {
				t.Errorf("last called %v after a failed move", lastCalled)
			}
			st.remove()
			sameFiles(t, "after the failed commit", before, snapshot(t, out))
		})
	}
	t.Run("success", func(t *testing.T) {
		out := t.TempDir()
		if err := os.WriteFile(filepath.Join(out, "a.txt"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := newStaged(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a.txt", "b.txt"} {
			if err := st.write(name, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.commit(nil); err != nil {
			t.Fatal(err)
		}
		st.remove()
		sameFiles(t, "after the commit", map[string]string{"a.txt": "new", "b.txt": "new"}, snapshot(t, out))
	})
}

// TestAppendFile: the log row is appended whole to what was there.
func TestAppendFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	for _, row := range []string{"{\"a\":1}\n", "{\"b\":2}\n"} {
		if err := appendFile(p, []byte(row)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, []byte("{\"a\":1}\n{\"b\":2}\n")) {
		t.Errorf("log %q", b)
	}
}
