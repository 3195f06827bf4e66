package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestDryRun: -dry-run lists every point of the spec (index, id, slug) in
// expansion order and the total.
func TestDryRun(t *testing.T) {
	var b strings.Builder
	code, err := run(context.Background(), config{dry: true, out: t.TempDir(), backend: "local", workers: 1, prune: "none", spec: writeSpec(t, smallSpec)}, &b)
	if err != nil || code != 0 {
		t.Fatalf("dry run: code %d, %v", code, err)
	}
	// smallSpec: two variants, one lr each, two seeds.
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || lines[4] != "4 runs" || !strings.HasSuffix(lines[0], "base-lr0.1-s0") || !strings.HasSuffix(lines[3], "adamw-lr0.01-s1") {
		t.Fatalf("dry run:\n%s", b.String())
	}
	for i, l := range lines[:4] {
		if f := strings.Fields(l); len(f) != 3 || f[0] != strconv.Itoa(i) || len(f[1]) != 16 {
			t.Errorf("line %d: %q, want index %d, a 16-digit id and a slug", i, l, i)
		}
	}
}

// TestDryRunChecksRuns: a dry run refuses what a real one refuses: runs the
// trainer cannot take are not listed as if they could run.
func TestDryRunChecksRuns(t *testing.T) {
	var b strings.Builder
	_, err := run(context.Background(), config{dry: true, epochs: 100000, out: t.TempDir(), backend: "local", workers: 1, prune: "none", spec: writeSpec(t, smallSpec)}, &b)
	if err == nil || !strings.Contains(err.Error(), "epochs") {
		t.Fatalf("dry run with -epochs 100000: %v, want the epochs refused; printed:\n%s", err, b.String())
	}
}
