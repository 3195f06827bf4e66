package divergence

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriterRoundTrip: a run rewritten with Writer compares equal to the
// NumPy-written original on every key it holds, float and integer (issue
// 26 item 15: a Go program could not write the archives it compares).
func TestWriterRoundTrip(t *testing.T) {
	orig, err := Open("testdata/run_a.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	keys := []string{"z_b", "omega_b", "scalar"}
	path := filepath.Join(t.TempDir(), "go.npz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f)
	for _, k := range keys {
		a, err := orig.array(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Add(k, a.Shape, a.Data); err != nil {
			t.Fatal(err)
		}
	}
	ints := []int64{1 << 60, -3, 7}
	if err := w.Add("ints", []int{3}, ints); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, r := range Pairwise([]NamedRun{{Name: "numpy", Path: "testdata/run_a.npz"}, {Name: "go", Path: path}}, keys) {
		if r.Max != 0 || r.Warning != "" {
			t.Errorf("%s: %v", r.Key, r)
		}
	}
	back, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if got := strings.Join(back.Keys(), ","); got != "z_b,omega_b,scalar,ints" {
		t.Errorf("keys %s", got)
	}
}

// TestWriterRefuses: caller errors are errors naming the key, and nothing
// is written for them.
func TestWriterRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		key   string
		shape []int
		data  any
		want  string
	}{
		{"empty key", "", []int{1}, []float64{1}, `key ""`},
		{"slash", "a/b", []int{1}, []float64{1}, `key "a/b"`},
		{"duplicate", "x", []int{1}, []float64{1}, "added twice"},
		{"type", "s", []int{1}, []string{"a"}, "unsupported data type []string"},
		{"shape", "m", []int{2, 2}, []float64{1, 2, 3}, "shape [2 2] holds 4 values, data 3"},
		{"negative", "n", []int{-1}, []float64{}, "negative dimension"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			if err := w.Add("x", []int{1}, []float64{1}); err != nil {
				t.Fatal(err)
			}
			n := b.Len()
			err := w.Add(tt.key, tt.shape, tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "divergence: Writer.Add") {
				t.Errorf("Add = %v; want an error saying %q", err, tt.want)
			}
			if b.Len() != n {
				t.Errorf("%d bytes written for a refused array", b.Len()-n)
			}
		})
	}
}
