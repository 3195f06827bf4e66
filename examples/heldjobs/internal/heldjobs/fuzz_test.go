package heldjobs

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzLoadSpec: LoadSpec never panics, and every error is a *SpecError
// wrapping ErrSpec; an accepted spec expands to its grid.
func FuzzLoadSpec(f *testing.F) {
	for _, s := range []string{smallSpec, smallSpec + "random: 2\n", "space: {shape: [1x1x1s], hidden: [1], layers: [1], lr: [1], batch: [1]}\n",
		"data: {logs: [a]}\nspace: {}\n", "", "[", "space: {shape: [10x10x60s, 4x5x2m]}\n", "space: {shape: [2x1000x2000000h], hidden: [1], layers: [1], lr: [1], batch: [1]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := LoadSpec(bytes.NewReader(b))
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) || !errors.Is(err, ErrSpec) {
				t.Fatalf("error %v is not a *SpecError wrapping ErrSpec", err)
			}
			return
		}
		if s.Space.Size() > 4096 {
			return // valid, but too large to expand in a fuzz iteration
		}
		_, pts, err := s.Sweep("x")
		if err != nil {
			t.Fatalf("accepted spec does not expand: %v", err)
		}
		if want := s.Space.Size(); s.Random > 0 && len(pts) != s.Random || s.Random == 0 && len(pts) != want {
			t.Fatalf("%d points, random %d, grid %d", len(pts), s.Random, want)
		}
	})
}
