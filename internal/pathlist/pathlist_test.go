package pathlist

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	dir := t.TempDir()
	comma := filepath.Join(dir, "a,b.log")
	if err := os.WriteFile(comma, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"x.log", []string{"x.log"}},
		{"x.log,y.log", []string{"x.log", "y.log"}},
		{"x.log, y.log,", []string{"x.log", "y.log"}},
		{",,", nil},
		{comma, []string{comma}},
		{comma + ",y.log", []string{filepath.Join(dir, "a"), "b.log", "y.log"}},
	} {
		if got := Split(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
