package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestGenerated: the committed ../../cell_amd64.s is what this program
// writes, so the kernels can be rebuilt from Go alone. After a change to
// the generator run go generate ./lstm/ and commit both.
func TestGenerated(t *testing.T) {
	const committed = "../../cell_amd64.s"
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	got := generate()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			t.Fatalf("%s line %d is %q; the generator writes %q (run go generate ./lstm/)", committed, i+1, w[i], g[i])
		}
	}
	t.Fatalf("%s has %d lines; the generator writes %d (run go generate ./lstm/)", committed, len(w), len(g))
}
