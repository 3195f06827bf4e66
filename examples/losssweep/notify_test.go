package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailingNotifyFinishesOutputs: a -notify command that fails does not
// stop the example: it warns, writes the export and exits 0 (issue 26: it
// exited 2 without writing the export).
func TestFailingNotifyFinishesOutputs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var buf bytes.Buffer
	code, err := run(context.Background(), config{out: out, backend: "local", workers: 2, spec: writeSpec(t, smallSpec), prune: "none",
		notify: "echo mail server down >&2; exit 3"}, &buf)
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v, want 0\n%s", code, err, buf.String())
	}
	if !strings.Contains(buf.String(), "losssweep: warning: -notify: ") || !strings.Contains(buf.String(), "mail server down") {
		t.Errorf("no warning naming the hook's failure:\n%s", buf.String())
	}
	if _, err := os.Stat(filepath.Join(out, "export", "losssweep.csv")); err != nil {
		t.Errorf("no export: %v\n%s", err, buf.String())
	}
}
