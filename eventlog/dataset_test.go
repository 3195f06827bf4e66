package eventlog_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/crosscluster/crosscluster/internal/synth"
)

func TestDatasetRoundTrip(t *testing.T) {
	jobs, _ := synthJobs(t, synth.CondorLogConfig{Seed: 3, Jobs: 200})
	b := eventlog.Builder{M: 6, J: 3, Seed: 9, Frame: 2 * time.Minute}
	samples, err := b.Build(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) == 0 {
		t.Fatal("no samples")
	}
	var buf bytes.Buffer
	if err := eventlog.WriteDataset(&buf, b, samples); err != nil {
		t.Fatal(err)
	}
	d, err := eventlog.ReadDataset(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	wantB := b
	wantB.E = eventlog.DefaultE
	if len(d.Labels) != len(samples) || d.Builder != wantB {
		t.Fatalf("N = %d, Builder = %+v; want %d, %+v", len(d.Labels), d.Builder, len(samples), wantB)
	}
	for i := range samples {
		s := d.Sample(i)
		if !slices.Equal(s.X, samples[i].X) || s.Label != samples[i].Label || s.Job.JobID != samples[i].Job.JobID {
			t.Errorf("sample %d differs after the round trip", i)
		}
	}
}

func TestReadNumPyDataset(t *testing.T) {
	// testdata/numpy_dataset.npz was written by testdata/gen_dataset.py
	// (Python 3.11.2, NumPy 1.24.2, np.savez_compressed).
	raw, err := os.ReadFile("testdata/numpy_dataset.npz")
	if err != nil {
		t.Fatal(err)
	}
	d, err := eventlog.ReadDataset(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	wantB := eventlog.Builder{E: 5, M: 4, Frame: time.Minute, J: 2, Seed: 7, SeedCompat: true, Unlabeled: true}
	if d.Builder != wantB || len(d.Labels) != 3 {
		t.Fatalf("Builder %+v N %d", d.Builder, len(d.Labels))
	}
	if d := diff([]eventlog.Label{eventlog.Release, eventlog.Remove, eventlog.Unlabeled}, d.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	var jobs []eventlog.JobID
	for i := range d.Labels {
		jobs = append(jobs, d.Sample(i).Job.JobID)
	}
	if d := diff([]eventlog.JobID{{Cluster: 10}, {Cluster: 11, Proc: 2}, {Cluster: 12, Subproc: 1}}, jobs); d != "" {
		t.Errorf("jobs (-want +got):\n%s", d)
	}
	for i := range 3 {
		s := d.Sample(i)
		for j := range 2 {
			for m := range 4 {
				for e := range 5 {
					want := float32(0)
					if e == (i+j+m)%5 {
						want = 1
					}
					if got := s.At(j, m, e); got != want {
						t.Errorf("x[%d,%d,%d,%d] = %v, want %v", i, j, m, e, got, want)
					}
				}
			}
		}
	}
}

func TestReadDatasetErrors(t *testing.T) {
	raw, err := os.ReadFile("testdata/numpy_dataset.npz")
	if err != nil {
		t.Fatal(err)
	}
	// A truncated archive, or bytes that are no archive, are ErrDataset
	// (issue 17: the npy error came back unwrapped).
	for name, b := range map[string][]byte{"truncated": raw[:len(raw)/2], "not a zip": []byte("hello")} {
		if _, err := eventlog.ReadDataset(bytes.NewReader(b), int64(len(b))); !errors.Is(err, eventlog.ErrDataset) {
			t.Errorf("%s archive: err %v, want ErrDataset", name, err)
		}
	}
	var buf bytes.Buffer
	if err := eventlog.WriteDataset(&buf, eventlog.Builder{}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := eventlog.ReadDataset(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(d.Labels) != 0 {
		t.Errorf("empty dataset: %v, %v", d, err)
	}
	if errors.Is(err, eventlog.ErrDataset) {
		t.Error("unexpected ErrDataset")
	}
}

func TestSplit(t *testing.T) {
	tr, va, te := eventlog.Split(100, 5, 0.7, 0.15)
	if len(tr) != 70 || len(va) != 15 || len(te) != 15 {
		t.Fatalf("sizes %d/%d/%d", len(tr), len(va), len(te))
	}
	all := slices.Concat(tr, va, te)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("indices are not a partition of 0..99")
		}
	}
	tr2, _, _ := eventlog.Split(100, 5, 0.7, 0.15)
	tr3, _, _ := eventlog.Split(100, 6, 0.7, 0.15)
	if !slices.Equal(tr, tr2) || slices.Equal(tr, tr3) {
		t.Error("Split is not determined by its seed")
	}
}

// writeRawDataset writes a dataset's four keys as given, bypassing
// WriteDataset's checks, to make bad files.
func writeRawDataset(t testing.TB, cfg []int64, n, j, m, e int) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := npy.NewZipWriter(&buf, false)
	z.Add("x", []int{n, j, m, e}, make([]float32, n*j*m*e))
	z.Add("labels", []int{n}, make([]int8, n))
	z.Add("jobs", []int{n, 3}, make([]int64, 3*n))
	z.Add("config", []int{len(cfg)}, cfg)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadDatasetBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  []int64
	}{
		{"negative frame", []int64{2, 3, -60e9, 1, 0, 0, 0, 0}},
		{"zero frame", []int64{2, 3, 0, 1, 0, 0, 0, 0}},
		{"zero E", []int64{0, 3, 60e9, 1, 0, 0, 0, 0}},
		{"short config", []int64{2, 3, 60e9, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := writeRawDataset(t, tc.cfg, 1, 1, 3, 2)
			_, err := eventlog.ReadDataset(bytes.NewReader(raw), int64(len(raw)))
			if !errors.Is(err, eventlog.ErrDataset) {
				t.Errorf("err = %v, want ErrDataset", err)
			}
		})
	}
}

// FuzzReadDataset: no panic on any bytes, and a dataset that reads has a
// Builder that builds (its configuration passes the Builder's own checks)
// and samples that can all be taken.
func FuzzReadDataset(f *testing.F) {
	if raw, err := os.ReadFile("testdata/numpy_dataset.npz"); err == nil {
		f.Add(raw)
	}
	f.Add(writeRawDataset(f, []int64{2, 3, -60e9, 1, 0, 0, 0, 0}, 1, 1, 3, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := eventlog.ReadDataset(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for i := range len(d.Labels) {
			d.Sample(i)
		}
		if _, err := d.Builder.Build(nil); err != nil {
			t.Fatalf("Build with the stored configuration: %v", err)
		}
	})
}
