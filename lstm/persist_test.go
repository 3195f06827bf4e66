package lstm

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/google/go-cmp/cmp"
)

func TestSaveLoad(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	m := New(Architecture{Inputs: 6, Hidden: 3, Layers: 2, NewestFirst: true}, rnd)
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m.Architecture(), got.Architecture()); diff != "" {
		t.Errorf("architecture (-want +got):\n%s", diff)
	}
	// JSON with the shortest round-trip representation is exact.
	if diff := cmp.Diff(m.params, got.params); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}

	saved := buf.String()
	for _, tc := range []struct {
		name, file string
	}{
		{"truncated", saved[:len(saved)/2]},
		{"empty", ""},
		{"foreign", `{"format":"keras","version":1}`},
		{"version", strings.Replace(saved, `"version":1`, `"version":9`, 1)},
		{"missing-key", strings.Replace(saved, `"fc.bias"`, `"fc.bogus"`, 1)},
		{"short-weights", strings.Replace(saved, `"fc.bias":[`, `"fc.bias":[1,`, 1)},
		{"bad-dims", strings.Replace(saved, `"hidden":3`, `"hidden":-3`, 1)},
		{"binary", "\x89PNG\r\n\x1a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Load(strings.NewReader(tc.file)); !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want ErrFormat", err)
			}
		})
	}
}

func TestTorchRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(6, 6))
	m := New(Architecture{Inputs: 4, Hidden: 3, Layers: 2}, rnd)
	for _, double := range []bool{true, false} {
		var buf bytes.Buffer
		if err := m.ExportTorch(&buf, double); err != nil {
			t.Fatal(err)
		}
		got, err := ImportTorch(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(m.Architecture(), got.Architecture()); diff != "" {
			t.Errorf("architecture (-want +got):\n%s", diff)
		}
		for i, w := range m.params {
			want := w
			if !double {
				want = float64(float32(w))
			}
			if got.params[i] != want {
				t.Fatalf("double=%v: param %d = %v, want %v", double, i, got.params[i], want)
			}
		}
	}
}

// writeStateDict writes an .npz of the given float64 tensors.
func writeStateDict(t *testing.T, tensors []tensorEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := npy.NewZipWriter(&buf, false)
	for _, e := range tensors {
		if err := z.Add(e.key, e.shape, e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImportTorchBad(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	sd := New(Architecture{Inputs: 4, Hidden: 3, Layers: 1}, rnd).stateDict()
	drop := func(key string) []tensorEntry {
		var out []tensorEntry
		for _, e := range sd {
			if e.key != key {
				out = append(out, e)
			}
		}
		return out
	}
	reshape := func(key string, shape []int) []tensorEntry {
		var out []tensorEntry
		for _, e := range sd {
			if e.key == key {
				e.shape = shape
				e.data = make([]float64, prod(shape))
			}
			out = append(out, e)
		}
		return out
	}
	good := writeStateDict(t, sd)
	for _, tc := range []struct {
		name  string
		file  []byte
		want  error
		where string
	}{
		{"missing-fc", writeStateDict(t, drop("fc.weight")), ErrStateDict, "fc.weight"},
		{"missing-bias", writeStateDict(t, drop("lstm.bias_hh_l0")), ErrStateDict, "lstm.bias_hh_l0"},
		{"missing-l0", writeStateDict(t, drop("lstm.weight_ih_l0")), ErrStateDict, "lstm.weight_ih_l0"},
		{"misshaped-hh", writeStateDict(t, reshape("lstm.weight_hh_l0", []int{11, 3})), ErrStateDict, "lstm.weight_hh_l0"},
		{"misshaped-bias", writeStateDict(t, reshape("lstm.bias_ih_l0", []int{12, 1})), ErrStateDict, "lstm.bias_ih_l0"},
		{"vector-ih", writeStateDict(t, reshape("lstm.weight_ih_l0", []int{12})), ErrStateDict, "lstm.weight_ih_l0"},
		{"truncated", good[:len(good)-40], npy.ErrArchive, ""},
		{"foreign", []byte("PK\x03\x04 not really a zip"), npy.ErrArchive, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImportTorch(bytes.NewReader(tc.file), int64(len(tc.file)))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.where) {
				t.Errorf("err = %v, want %v naming %q", err, tc.want, tc.where)
			}
		})
	}
}

func FuzzLoad(f *testing.F) {
	rnd := rand.New(rand.NewPCG(8, 8))
	var buf bytes.Buffer
	if err := New(Architecture{Inputs: 2, Hidden: 2, Layers: 1}, rnd).Save(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"crosscluster-lstm","version":1,"inputs":1,"hidden":1,"layers":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Load(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrNaN) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// A model that loads must predict without panicking.
		seq := [][]float64{make([]float64, m.inputs)}
		m.Predict(seq)
	})
}

func FuzzImportTorch(f *testing.F) {
	rnd := rand.New(rand.NewPCG(9, 9))
	var buf bytes.Buffer
	if err := New(Architecture{Inputs: 2, Hidden: 2, Layers: 2}, rnd).ExportTorch(&buf, false); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	for _, name := range []string{"testdata/parity_l1.npz", "testdata/f32_l2.npz"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ImportTorch(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var ke *npy.KeyError
			if !errors.Is(err, ErrStateDict) && !errors.Is(err, ErrNaN) && !errors.As(err, &ke) &&
				!errors.Is(err, npy.ErrArchive) && !isNpyError(err) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		m.Predict([][]float64{make([]float64, m.inputs)})
	})
}

// isNpyError reports whether err wraps one of the npy package's sentinels.
func isNpyError(err error) bool {
	for _, s := range []error{npy.ErrMagic, npy.ErrVersion, npy.ErrHeader, npy.ErrDType, npy.ErrTruncated, npy.ErrSize, npy.ErrArchive, npy.ErrNoKey} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
