package lstm

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
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
	// A two-layer state_dict whose second weight_ih is missing must not
	// import as a one-layer model.
	sd2 := New(Architecture{Inputs: 4, Hidden: 3, Layers: 2}, rnd).stateDict()
	var noIH1 []tensorEntry
	for _, e := range sd2 {
		if e.key != "lstm.weight_ih_l1" {
			noIH1 = append(noIH1, e)
		}
	}
	extra := func(key string, shape []int) []tensorEntry {
		return append(slices.Clone(sd), tensorEntry{key, shape, make([]float64, prod(shape))})
	}
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
		{"missing-ih-l1", writeStateDict(t, noIH1), ErrStateDict, "lstm.weight_hh_l1"},
		{"bidirectional", writeStateDict(t, extra("lstm.weight_ih_l0_reverse", []int{12, 4})), ErrStateDict, "lstm.weight_ih_l0_reverse"},
		{"projection", writeStateDict(t, extra("lstm.weight_hr_l0", []int{2, 3})), ErrStateDict, "lstm.weight_hr_l0"},
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

// TestImportTorchErrFormat: an unreadable archive wraps ErrFormat (issue
// 17: the npy reader's error came back unwrapped).
func TestImportTorchErrFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := New(Architecture{Inputs: 2, Hidden: 2, Layers: 1}, rand.New(rand.NewPCG(1, 1))).ExportTorch(&buf, false); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"truncated": buf.Bytes()[:buf.Len()/2], "not a zip": []byte("hello")} {
		if _, err := ImportTorch(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
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
			if !errors.Is(err, ErrStateDict) && !errors.Is(err, ErrNaN) && !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v wraps none of ErrStateDict, ErrNaN, ErrFormat", err)
			}
			return
		}
		m.Predict([][]float64{make([]float64, m.inputs)})
	})
}

// TestNewInit checks PyTorch's initialisation: every LSTM weight and bias
// and the head (fan-in H) uniform on ±1/√H, drawn only from the generator
// given, so the same seed gives the same model.
func TestNewInit(t *testing.T) {
	a := Architecture{Inputs: 5, Hidden: 9, Layers: 2}
	m := New(a, rand.New(rand.NewPCG(30, 30)))
	bound := 1 / math.Sqrt(float64(a.Hidden))
	lo, hi := math.Inf(1), math.Inf(-1)
	var sum float64
	for _, w := range m.params {
		lo, hi = min(lo, w), max(hi, w)
		sum += w
	}
	n := float64(len(m.params))
	// With over a thousand draws the extremes come within 1% of the bounds
	// and the mean within five standard errors (bound/√(3n)) of zero.
	if lo < -bound || hi > bound || lo > -0.99*bound || hi < 0.99*bound || math.Abs(sum/n) > 5*bound/math.Sqrt(3*n) {
		t.Errorf("weights span [%v, %v] with mean %v, want U(±%v)", lo, hi, sum/n, bound)
	}
	for _, e := range m.stateDict()[len(m.stateDict())-2:] {
		for _, w := range e.data {
			if math.Abs(w) > bound {
				t.Errorf("%s has %v outside ±1/√H", e.key, w)
			}
		}
	}
	same := New(a, rand.New(rand.NewPCG(30, 30)))
	other := New(a, rand.New(rand.NewPCG(31, 30)))
	if !slices.Equal(m.params, same.params) || slices.Equal(m.params, other.params) {
		t.Error("initial weights are not a function of the generator's seed")
	}
}
