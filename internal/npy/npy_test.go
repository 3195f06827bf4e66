package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var writeDir = flag.String("npy.writedir", "", "also write the Go-written files here for testdata/gen.py --check")

// The fixtures and their expectation files (.f64, .f32, .i64: NumPy's own
// astype conversions as raw little-endian bytes) come from testdata/gen.py,
// run with NumPy 1.24.2 (Debian python3-numpy): /usr/bin/python3 testdata/gen.py

func readRaw(t *testing.T, path string, size int) ([]byte, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%size != 0 {
		t.Fatalf("%s: %d bytes is not a multiple of %d", path, len(b), size)
	}
	return b, true
}

// checkArray compares every conversion with NumPy's, bit for bit.
func checkArray(t *testing.T, a *Array, prefix string) {
	t.Helper()
	f64, err := a.Float64()
	if err != nil {
		t.Fatalf("Float64: %v", err)
	}
	want, _ := readRaw(t, prefix+".f64", 8)
	if len(want)/8 != len(f64) {
		t.Fatalf("Float64: %d elements, NumPy has %d", len(f64), len(want)/8)
	}
	for i, v := range f64 {
		if w := binary.LittleEndian.Uint64(want[8*i:]); math.Float64bits(v) != w {
			t.Fatalf("Float64()[%d] = %v (%#x), NumPy %v (%#x)", i, v, math.Float64bits(v), math.Float64frombits(w), w)
		}
	}
	f32, err := a.Float32()
	if err != nil {
		t.Fatalf("Float32: %v", err)
	}
	want32, _ := readRaw(t, prefix+".f32", 4)
	for i, v := range f32 {
		if w := binary.LittleEndian.Uint32(want32[4*i:]); math.Float32bits(v) != w {
			t.Fatalf("Float32()[%d] = %v, NumPy %v", i, v, math.Float32frombits(w))
		}
	}
	i64, err := a.Int64()
	wantI, ok := readRaw(t, prefix+".i64", 8)
	if !ok {
		if !errors.Is(err, ErrDType) {
			t.Fatalf("Int64 of %s: err %v, want ErrDType", a.DType, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Int64: %v", err)
	}
	for i, v := range i64 {
		if w := int64(binary.LittleEndian.Uint64(wantI[8*i:])); v != w {
			t.Fatalf("Int64()[%d] = %d, NumPy %d", i, v, w)
		}
	}
}

func TestFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.npy")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	shapes := map[string][]int{
		"f8_3d": {2, 3, 4}, "fortran_f8_2d": {3, 5}, "fortran_i4_be_3d": {2, 3, 4},
		"scalar_f8": {}, "scalar_i2": {}, "empty_f8": {0}, "empty_2d": {0, 3},
		"v2_f8": {4, 2}, "v3_f4": {5}, "keys_reordered": {2, 3}, "py2_long": {2, 3}, "f8_be": {3, 4},
	}
	n := 0
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".npy")
		if strings.HasPrefix(name, "bad_") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			a, err := Read(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := shapes[name]; ok {
				if diff := cmp.Diff(want, a.Shape); diff != "" {
					t.Errorf("shape (-want +got):\n%s", diff)
				}
			}
			if strings.HasPrefix(name, "fortran") != a.Fortran {
				t.Errorf("Fortran = %v", a.Fortran)
			}
			checkArray(t, a, strings.TrimSuffix(p, ".npy"))
			// The streaming reader gives the same values in storage order.
			if !a.Fortran {
				r, err := NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				got := readAllStream(t, r, 5)
				want, _ := a.Float64()
				if diff := cmp.Diff(bitsOf(want), bitsOf(got)); diff != "" {
					t.Errorf("Reader (-want +got):\n%s", diff)
				}
				// ReadInt64 streams exactly what Int64 decodes, and
				// refuses what it refuses.
				r, err = NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if r.Integer() != a.Integer() || r.Integer() == (a.DType[1] == 'f') {
					t.Errorf("Integer: reader %v, array %v, dtype %s", r.Integer(), a.Integer(), a.DType)
				}
				wantI, errI := a.Int64()
				var gotI []int64
				buf := make([]int64, 5)
				for {
					n, err := r.ReadInt64(buf)
					gotI = append(gotI, buf[:n]...)
					if err == io.EOF {
						break
					}
					if err != nil {
						if errI == nil || !errors.Is(err, ErrDType) {
							t.Fatalf("ReadInt64: %v (Int64: %v)", err, errI)
						}
						break
					}
				}
				if errI == nil && !cmp.Equal(wantI, gotI, cmpopts.EquateEmpty()) {
					t.Errorf("ReadInt64 %v, Int64 %v", gotI, wantI)
				}
			}
		})
	}
	// 3 bool/int8/uint8 + 2x(int16..64, uint16..64, float16..64) + 11 shape/version/header cases.
	const wantFixtures = 3 + 2*9 + 11
	if n != wantFixtures {
		t.Errorf("read %d fixtures, want %d", n, wantFixtures)
	}
}

func bitsOf(x []float64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(v)
	}
	return out
}

func readAllStream(t *testing.T, r *Reader, chunk int) []float64 {
	t.Helper()
	var out []float64
	buf := make([]float64, chunk)
	for {
		n, err := r.ReadFloat64(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("ReadFloat64: %v", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func openArchive(t *testing.T, path string) *Archive {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := OpenArchive(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestArchives(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"stored", []string{"a", "b", "c", "d"}},
		{"compressed", []string{"a", "b", "c", "d"}},
		{"zip64", []string{"a", "b", "c", "d"}},
		{"mixed", []string{"a", "notes.txt", "junk"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := openArchive(t, "testdata/"+tc.name+".npz")
			if diff := cmp.Diff(tc.keys, a.Keys()); diff != "" {
				t.Fatalf("keys (-want +got):\n%s", diff)
			}
			for _, k := range tc.keys {
				prefix := "testdata/" + tc.name + "__" + k
				if _, err := os.Stat(prefix + ".f64"); err != nil {
					continue
				}
				arr, err := a.Array(k)
				if err != nil {
					t.Fatalf("Array(%q): %v", k, err)
				}
				checkArray(t, arr, prefix)
				r, err := a.Reader(k)
				if err != nil {
					t.Fatal(err)
				}
				got := readAllStream(t, r, 3)
				if r.Fortran {
					got = corder(got, r.Shape, true)
				}
				want, _ := arr.Float64()
				if diff := cmp.Diff(bitsOf(want), bitsOf(got)); diff != "" {
					t.Errorf("Reader(%q) (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

func TestBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{
		{"bad_truncated_data", ErrTruncated},
		{"bad_truncated_header", ErrTruncated},
		{"bad_magic", ErrMagic},
		{"bad_version", ErrVersion},
		{"bad_structured", ErrDType},
		{"bad_object", ErrDType},
		{"bad_complex", ErrDType},
		{"bad_unicode", ErrDType},
		{"bad_shape_lies", ErrTruncated},
		{"bad_extra_key", ErrHeader},
		{"bad_missing_key", ErrHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tc.name + ".npy")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read(bytes.NewReader(b))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Read: err = %v, want %v", err, tc.want)
			}
			r, err := NewReader(bytes.NewReader(b))
			if err == nil {
				_, err = io.Copy(io.Discard, readerFunc(func() error {
					_, err := r.ReadFloat64(make([]float64, 4))
					return err
				}))
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Reader: err = %v, want %v", err, tc.want)
			}
		})
	}
}

// readerFunc drains a Reader through io.Copy's error handling.
type readerFunc func() error

func (f readerFunc) Read(p []byte) (int, error) {
	if err := f(); err != nil {
		return 0, err
	}
	return 1, nil
}

func TestBadArchives(t *testing.T) {
	for _, name := range []string{"bad_truncated", "bad_not_zip"} {
		b, err := os.ReadFile("testdata/" + name + ".npz")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := OpenArchive(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrArchive) {
			t.Errorf("%s: err = %v, want ErrArchive", name, err)
		}
	}
	for _, tc := range []struct {
		file, key string
		want      error
	}{
		{"bad_members", "lies", ErrTruncated},
		{"bad_members", "extra", ErrSize},
		{"bad_members", "absent", ErrNoKey},
		{"bad_corrupt", "x", ErrArchive},
		{"mixed", "junk", ErrMagic},
		{"mixed", "notes.txt", ErrMagic},
	} {
		t.Run(tc.file+"/"+tc.key, func(t *testing.T) {
			a := openArchive(t, "testdata/"+tc.file+".npz")
			_, err := a.Array(tc.key)
			var ke *KeyError
			if !errors.Is(err, tc.want) || !errors.As(err, &ke) || ke.Key != tc.key {
				t.Fatalf("Array: err = %v, want %v in a KeyError for %q", err, tc.want, tc.key)
			}
			r, err := a.Reader(tc.key)
			if err == nil {
				buf := make([]float64, 7)
				for err == nil {
					_, err = r.ReadFloat64(buf)
				}
				r.Close()
			}
			if !errors.Is(err, tc.want) || !errors.As(err, &ke) {
				t.Fatalf("Reader: err = %v, want %v in a KeyError", err, tc.want)
			}
		})
	}
	a := openArchive(t, "testdata/bad_members.npz")
	if arr, err := a.Array("ok"); err != nil || arr.Len() != 2 {
		t.Errorf("a good member beside bad ones: %v", err)
	}
}

// TestBoundedAllocation checks that a header claiming 8 GB of data does not
// make Read allocate it.
func TestBoundedAllocation(t *testing.T) {
	b, err := os.ReadFile("testdata/bad_shape_lies.npy")
	if err != nil {
		t.Fatal(err)
	}
	// limit: Read's first data buffer is at most 1 MiB; allow slack for
	// the header and error values.
	const limit = 4 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Read(bytes.NewReader(b))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Errorf("allocated %d bytes for a %d-byte file", got, len(b))
	}
}

// goWritten mirrors go_written() in testdata/gen.py.
func goWritten() []struct {
	key   string
	shape []int
	data  any
} {
	return []struct {
		key   string
		shape []int
		data  any
	}{
		{"f8", []int{2, 4}, []float64{0, math.Copysign(0, -1), 1.5, math.Float64frombits(0x7ff8000000000000), math.Inf(1), math.Inf(-1), 1e308, 5e-324}}, // 0x7ff8000000000000: NumPy's nan bits
		{"f4", []int{3}, []float32{1.5, -2.25, math.MaxFloat32}},
		{"i1", []int{3}, []int8{-128, 127, 0}},
		{"i2", []int{2}, []int16{-32768, 32767}},
		{"i4", []int{2}, []int32{math.MinInt32, math.MaxInt32}},
		{"i8", []int{3, 2}, []int64{math.MinInt64, math.MaxInt64, 0, -1, 7, 8}},
		{"u1", []int{2}, []uint8{0, 255}},
		{"u2", []int{2}, []uint16{0, 65535}},
		{"u4", []int{2}, []uint32{0, math.MaxUint32}},
		{"u8", []int{2}, []uint64{0, math.MaxUint64}},
		{"b1", []int{3}, []bool{true, false, true}},
		{"scalar", []int{}, []float64{3.25}},
		{"cube", []int{2, 3, 4}, func() []float64 {
			x := make([]float64, 24)
			for i := range x {
				x[i] = float64(i)
			}
			return x
		}()},
	}
}

// TestWriteForNumPy writes every supported type as .npy and in stored and
// deflated archives and reads them back. With -npy.writedir DIR the files
// stay in DIR for "python3 testdata/gen.py --check DIR".
func TestWriteForNumPy(t *testing.T) {
	dir := *writeDir
	if dir == "" {
		dir = t.TempDir()
	}
	for _, compress := range []bool{false, true} {
		name := map[bool]string{false: "go_stored.npz", true: "go_compressed.npz"}[compress]
		var buf bytes.Buffer
		z := NewZipWriter(&buf, compress)
		for _, c := range goWritten() {
			if err := z.Add(c.key, c.shape, c.data); err != nil {
				t.Fatal(err)
			}
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := OpenArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range goWritten() {
			arr, err := a.Array(c.key)
			if err != nil {
				t.Fatal(err)
			}
			checkRoundTrip(t, arr, c.shape, c.data)
		}
	}
	for _, c := range goWritten() {
		var buf bytes.Buffer
		if err := Write(&buf, c.shape, c.data); err != nil {
			t.Fatal(err)
		}
		if (buf.Len()-dataBytes(c.data))%64 != 0 {
			t.Errorf("%s: header not 64-byte aligned", c.key)
		}
		if err := os.WriteFile(filepath.Join(dir, c.key+".npy"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		arr, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, arr, c.shape, c.data)
	}
}

func dataBytes(data any) int {
	d, n := describe(data)
	p, _ := parseDescr(d)
	return n * p.size
}

func checkRoundTrip(t *testing.T, arr *Array, shape []int, data any) {
	t.Helper()
	if diff := cmp.Diff(shape, arr.Shape); diff != "" {
		t.Errorf("shape (-want +got):\n%s", diff)
	}
	if got := append([]byte(nil), arr.data...); true {
		var buf bytes.Buffer
		if err := encode(&buf, data); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), got) {
			t.Errorf("%s: data bytes differ", arr.DType)
		}
	}
	if f, ok := data.([]float64); ok {
		got, err := arr.Float64()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(bitsOf(f), bitsOf(got)); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
	}
	if i, ok := data.([]int64); ok {
		got, err := arr.Int64()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(i, got); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
	}
}

func TestReadConsecutive(t *testing.T) {
	var buf bytes.Buffer
	for i := range 3 {
		if err := Write(&buf, []int{2}, []int32{int32(i), int32(-i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		a, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := a.Int64()
		if diff := cmp.Diff([]int64{int64(i), int64(-i)}, got); diff != "" {
			t.Errorf("array %d (-want +got):\n%s", i, diff)
		}
	}
	if _, err := Read(&buf); !errors.Is(err, ErrMagic) {
		t.Errorf("after the last array: %v", err)
	}
}

func TestLongHeaderUsesVersion2(t *testing.T) {
	shape := make([]int, 30000) // "1, " each: over version 1.0's 65535-byte limit
	for i := range shape {
		shape[i] = 1
	}
	var buf bytes.Buffer
	if err := Write(&buf, shape, []float64{4}); err != nil {
		t.Fatal(err)
	}
	if v := buf.Bytes()[6]; v != 2 {
		t.Fatalf("version %d, want 2", v)
	}
	a, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Shape) != len(shape) {
		t.Errorf("%d dimensions", len(a.Shape))
	}
}

func TestPanics(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		f          func()
	}{
		{"shape", "npy: shape does not match data length", func() { Write(io.Discard, []int{3}, []float64{1}) }},
		{"negative", "npy: negative dimension", func() { Write(io.Discard, []int{-1}, []float64{}) }},
		{"type", "npy: unsupported data type", func() { Write(io.Discard, []int{1}, []string{"a"}) }},
		{"duplicate", "npy: duplicate key", func() {
			z := NewZipWriter(io.Discard, false)
			z.Add("a", []int{1}, []bool{true})
			z.Add("a", []int{1}, []bool{true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestHalf(t *testing.T) {
	// IEEE 754 binary16 reference points.
	for _, tc := range []struct {
		bits uint16
		want float64
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, math.Ldexp(1, -24)},
		{0x0400, math.Ldexp(1, -14)}, {0x7c00, math.Inf(1)}, {0xfc00, math.Inf(-1)}, {0x8000, math.Copysign(0, -1)},
	} {
		if got := halfToFloat64(tc.bits); math.Float64bits(got) != math.Float64bits(tc.want) {
			t.Errorf("half %#04x = %v, want %v", tc.bits, got, tc.want)
		}
	}
	if !math.IsNaN(halfToFloat64(0x7e00)) {
		t.Error("0x7e00 is not NaN")
	}
}

// TestDuplicateMembers: of two members with one name, numpy.load reads the
// last (checked with NumPy 1.24.2: np.load of a zip holding x.npy = [1.]
// then x.npy = [2.] gives [2.]); the key is listed once.
func TestDuplicateMembers(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, v := range []float64{1, 2} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "x.npy", Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(w, []int{1}, []float64{v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := OpenArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x"}, a.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	arr, err := a.Array("x")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := arr.Float64(); len(got) != 1 || got[0] != 2 {
		t.Errorf("x = %v, want [2] as NumPy reads it", got)
	}
}

// TestStreamErrorsNameKey: a member whose zip entry claims more bytes than
// it holds passes the header check and then ends early while streaming;
// that error, like every archive error, must be a *KeyError.
func TestStreamErrorsNameKey(t *testing.T) {
	var member bytes.Buffer
	if err := Write(&member, []int{100}, make([]float64, 100)); err != nil {
		t.Fatal(err)
	}
	full := member.Len()
	data := member.Bytes()[:full-400] // 50 of the 100 values
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "z_b.npy", Method: zip.Store, CRC32: crc32.ChecksumIEEE(data),
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(full),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := OpenArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Reader("z_b")
	if err != nil {
		t.Fatalf("Reader: %v (the header check should pass)", err)
	}
	defer r.Close()
	dst := make([]float64, 30)
	for err == nil {
		_, err = r.ReadFloat64(dst)
	}
	var ke *KeyError
	if !errors.Is(err, ErrTruncated) || !errors.As(err, &ke) || ke.Key != "z_b" {
		t.Errorf("err = %v, want ErrTruncated in a *KeyError for z_b", err)
	}
	if _, err := a.Array("z_b"); !errors.Is(err, ErrTruncated) || !errors.As(err, &ke) {
		t.Errorf("Array: err = %v, want ErrTruncated in a *KeyError", err)
	}
}

// TestReadInt64Exact: integers beyond 2^53, which float64 cannot hold, come
// back exactly; a uint64 above MaxInt64 is an ErrDType naming the key.
func TestReadInt64Exact(t *testing.T) {
	big := []int64{1<<53 + 1, 1 << 53, math.MaxInt64, math.MinInt64, -(1<<53 + 1)}
	var buf bytes.Buffer
	z := NewZipWriter(&buf, true)
	if err := z.Add("i", []int{len(big)}, big); err != nil {
		t.Fatal(err)
	}
	if err := z.Add("u", []int{2}, []uint64{1, math.MaxInt64 + 1}); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := OpenArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Reader("i")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int64, 8)
	n, err := r.ReadInt64(got)
	if err != nil || !cmp.Equal(big, got[:n]) {
		t.Errorf("ReadInt64 = %v, %v; want %v", got[:n], err, big)
	}
	if n, err := r.ReadInt64(got); n != 0 || err != io.EOF {
		t.Errorf("after the end: %d, %v", n, err)
	}
	r, _ = a.Reader("u")
	_, err = r.ReadInt64(got)
	var ke *KeyError
	if !errors.Is(err, ErrDType) || !errors.As(err, &ke) || ke.Key != "u" {
		t.Errorf("uint64 above MaxInt64: %v", err)
	}
}

// TestReadUint64Exact: uint64 values above MaxInt64 come back exactly
// through ReadUint64 and Array.Uint64 (C order from Fortran order too);
// other integer dtypes convert when non-negative, a negative value or a
// float array is an ErrDType naming the key.
func TestReadUint64Exact(t *testing.T) {
	u := []uint64{math.MaxUint64, math.MaxInt64 + 1, 1<<53 + 1, 0, math.MaxUint64 - 2048, 7}
	var buf bytes.Buffer
	z := NewZipWriter(&buf, true)
	for _, m := range []struct {
		key   string
		shape []int
		data  any
	}{
		{"u", []int{len(u)}, u}, {"i", []int{3}, []int64{0, math.MaxInt64, 5}}, {"neg", []int{2}, []int32{1, -1}},
		{"f", []int{1}, []float64{1}}, {"b", []int{2}, []bool{true, false}}, {"u1", []int{2}, []uint8{255, 0}},
	} {
		if err := z.Add(m.key, m.shape, m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := OpenArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]uint64{"u": u, "i": {0, math.MaxInt64, 5}, "b": {1, 0}, "u1": {255, 0}} {
		r, err := a.Reader(key)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]uint64, 8)
		n, err := r.ReadUint64(got)
		if err != nil || !cmp.Equal(want, got[:n]) || r.Unsigned() != (key[0] == 'u') {
			t.Errorf("%s: ReadUint64 = %v, %v (unsigned %v); want %v", key, got[:n], err, r.Unsigned(), want)
		}
		if n, err := r.ReadUint64(got); n != 0 || err != io.EOF {
			t.Errorf("%s: after the end: %d, %v", key, n, err)
		}
		arr, err := a.Array(key)
		if err != nil {
			t.Fatal(err)
		}
		if w, err := arr.Uint64(); err != nil || !cmp.Equal(want, w) || arr.Unsigned() != (key[0] == 'u') {
			t.Errorf("%s: Uint64 = %v, %v", key, w, err)
		}
	}
	for _, key := range []string{"neg", "f"} {
		r, _ := a.Reader(key)
		_, err := r.ReadUint64(make([]uint64, 4))
		var ke *KeyError
		if !errors.Is(err, ErrDType) || !errors.As(err, &ke) || ke.Key != key {
			t.Errorf("%s: %v, want ErrDType for the key", key, err)
		}
		arr, _ := a.Array(key)
		if _, err := arr.Uint64(); !errors.Is(err, ErrDType) {
			t.Errorf("%s: Uint64: %v, want ErrDType", key, err)
		}
	}
	// Fortran order comes back in C order.
	var nb bytes.Buffer
	hdr := "{'descr': '<u8', 'fortran_order': True, 'shape': (2, 3), }"
	hdr += strings.Repeat(" ", 64-(10+len(hdr)+1)%64) + "\n"
	nb.WriteString("\x93NUMPY\x01\x00")
	nb.Write([]byte{byte(len(hdr)), byte(len(hdr) >> 8)})
	nb.WriteString(hdr)
	for _, v := range []uint64{0, 3, 1, math.MaxUint64, 2, 5} { // column-major [[0 1 2] [3 MaxUint64 5]]
		binary.Write(&nb, binary.LittleEndian, v)
	}
	arr, err := Read(&nb)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := arr.Uint64(); err != nil || !cmp.Equal([]uint64{0, 1, 2, 3, math.MaxUint64, 5}, w) {
		t.Errorf("Fortran Uint64 = %v, %v", w, err)
	}
}
