package heldjobs

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzLoadSpec: LoadSpec never panics, and every error is a *SpecError
// wrapping ErrSpec; an accepted spec expands to its grid.
func FuzzLoadSpec(f *testing.F) {
	for _, s := range []string{smallSpec, smallSpec + "random: 2\n", "space: {shape: [1x1x1s], hidden: [1], layers: [1], lr: [1], batch: [1]}\n",
		"data: {logs: [a]}\nspace: {}\n", condSpec, condSpec + "random: 5\n", condSpec + "prune: {rule: asha, eta: 2}\n",
		strings.Replace(smallSpec, "lr: [3e-3]", "lr: {log_uniform: [1e-4, 1e-2]}", 1) + "random: 7\n",
		strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: {int_uniform: [4, 9], when: {shape: 3x6x60s}}", 1) + "random: 3\n", "", "[", "space: {shape: [10x10x60s, 4x5x2m]}\n", "space: {shape: [2x1000x2000000h], hidden: [1], layers: [1], lr: [1], batch: [1]}\n"} {
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
		drawn := len(s.Space.Dists) > 0
		if s.Space.Size() > 4096 || drawn && s.Random > 4096 {
			return // valid, but too large to expand in a fuzz iteration
		}
		_, pts, err := s.Sweep("x")
		if err != nil {
			t.Fatalf("accepted spec does not expand: %v", err)
		}
		switch want := s.Space.Size(); {
		case drawn && (len(pts) < 1 || len(pts) > s.Random),
			!drawn && s.Random > 0 && len(pts) != s.Random,
			!drawn && s.Random == 0 && len(pts) != want:
			t.Fatalf("%d points, random %d, grid %d", len(pts), s.Random, want)
		}
		for _, p := range pts {
			if _, err := PointOf(p.Params); err != nil {
				t.Fatalf("point %s: %v", p.Slug, err)
			}
		}
	})
}
