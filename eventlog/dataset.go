package eventlog

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// ErrDataset reports a .npz file that is not a dataset WriteDataset wrote.
var ErrDataset = errors.New("not an eventlog dataset")

// Dataset keys and the layout of the config array.
const (
	keyX      = "x"
	keyLabels = "labels"
	keyJobs   = "jobs"
	keyConfig = "config"
)

// configFields names the int64 values of the "config" array, in order.
var configFields = [...]string{"E", "M", "frame_ns", "J", "seed", "seedcompat", "pad", "unlabeled", "forward"}

// Dataset is a set of samples as stored in a .npz file.
type Dataset struct {
	Labels []Label // one per sample
	// Builder is the configuration the samples were built with, defaults
	// applied.
	Builder Builder

	x    []float32 // the samples' J*M*E values, each laid out (j, m, e)
	jobs []JobID   // the primary job of each sample (sources are not stored)
}

// Sample returns sample i (its X shares the dataset's memory; its Job has
// the primary job's JobID, not its source).
func (d *Dataset) Sample(i int) Sample {
	if i < 0 || i >= len(d.Labels) {
		panic("eventlog: Dataset.Sample index out of range")
	}
	b := &d.Builder
	size := b.J * b.M * b.E
	return Sample{X: d.x[i*size : (i+1)*size : (i+1)*size], J: b.J, M: b.M, E: b.E, Label: d.Labels[i], Job: Key{JobID: d.jobs[i]}}
}

// WriteDataset writes samples as a NumPy .npz archive that numpy.load reads
// unchanged:
//
//	x       float32 (n, J, M, E)   the tensors, layout (j, m, e) per sample
//	labels  int8    (n,)           1 release, 0 remove, -1 unlabeled
//	jobs    int64   (n, 3)         cluster, proc, subproc of each primary job
//	config  int64   (8,)           E, M, frame (ns), J, seed (uint64 bits),
//	                               seedcompat, pad, unlabeled (0 or 1)
//
// Every sample must have b's J, M and E (after defaults); anything else is a
// caller mistake and panics.
func WriteDataset(w io.Writer, b Builder, samples []Sample) error {
	b = b.withDefaults()
	size := b.J * b.M * b.E
	x := make([]float32, 0, len(samples)*size)
	labels := make([]int8, len(samples))
	jobs := make([]int64, 0, 3*len(samples))
	for i := range samples {
		s := &samples[i]
		if s.J != b.J || s.M != b.M || s.E != b.E || len(s.X) != size {
			panic("eventlog: WriteDataset sample shape differs from the Builder's")
		}
		x = append(x, s.X...)
		labels[i] = int8(s.Label)
		jobs = append(jobs, int64(s.Job.Cluster), int64(s.Job.Proc), int64(s.Job.Subproc))
	}
	cfg := []int64{int64(b.E), int64(b.M), int64(b.Frame), int64(b.J), int64(b.Seed), b2i(b.SeedCompat), b2i(b.Pad), b2i(b.Unlabeled), b2i(b.Forward)}
	z := npy.NewZipWriter(w, true)
	n := len(samples)
	if err := z.Add(keyX, []int{n, b.J, b.M, b.E}, x); err != nil {
		return err
	}
	if err := z.Add(keyLabels, []int{n}, labels); err != nil {
		return err
	}
	if err := z.Add(keyJobs, []int{n, 3}, jobs); err != nil {
		return err
	}
	if err := z.Add(keyConfig, []int{len(cfg)}, cfg); err != nil {
		return err
	}
	return z.Close()
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// ReadDataset reads a dataset WriteDataset wrote (or NumPy saved with the
// same keys, shapes and any numeric dtypes). Anything else (bytes that are
// no archive, a truncated one, a key missing or of the wrong shape, a
// configuration a Builder refuses, a label other than -1, 0 or 1) is an
// error wrapping ErrDataset, naming the key at fault where there is one.
func ReadDataset(r io.ReaderAt, size int64) (*Dataset, error) {
	a, err := npy.OpenArchive(r, size)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w: %w", ErrDataset, err)
	}
	get := func(key string) (*npy.Array, error) {
		arr, err := a.Array(key)
		if err != nil {
			return nil, fmt.Errorf("eventlog: dataset key %q: %w: %w", key, ErrDataset, err)
		}
		return arr, nil
	}
	cfgA, err := get(keyConfig)
	if err != nil {
		return nil, err
	}
	cfg, err := cfgA.Int64()
	// Datasets written before the forward field existed have 8 values;
	// their default framing was the forward one.
	if err != nil || (len(cfg) != len(configFields) && len(cfg) != len(configFields)-1) {
		return nil, fmt.Errorf("eventlog: dataset key %q: %w: want %d int values %v", keyConfig, ErrDataset, len(configFields), configFields)
	}
	d := &Dataset{Builder: Builder{
		E: int(cfg[0]), M: int(cfg[1]), Frame: time.Duration(cfg[2]), J: int(cfg[3]), Seed: uint64(cfg[4]),
		SeedCompat: cfg[5] != 0, Pad: cfg[6] != 0, Unlabeled: cfg[7] != 0,
	}}
	if len(cfg) == len(configFields) {
		d.Builder.Forward = cfg[8] != 0
	} else {
		d.Builder.Forward = !d.Builder.SeedCompat
	}
	J, M, E := d.Builder.J, d.Builder.M, d.Builder.E
	// The configuration must be one a Builder accepts: a negative frame
	// would make d.Builder panic when the caller builds with it.
	if J <= 0 || M <= 0 || E <= 0 || int64(J)*int64(M)*int64(E) > math.MaxInt32 || d.Builder.Frame <= 0 {
		return nil, fmt.Errorf("eventlog: dataset key %q: %w: J=%d M=%d E=%d frame_ns=%d", keyConfig, ErrDataset, J, M, E, cfg[2])
	}
	xa, err := get(keyX)
	if err != nil {
		return nil, err
	}
	if len(xa.Shape) != 4 || xa.Shape[1] != J || xa.Shape[2] != M || xa.Shape[3] != E {
		return nil, fmt.Errorf("eventlog: dataset key %q: %w: shape %v, config says (n, %d, %d, %d)", keyX, ErrDataset, xa.Shape, J, M, E)
	}
	n := xa.Shape[0]
	if d.x, err = xa.Float32(); err != nil {
		return nil, fmt.Errorf("eventlog: dataset key %q: %w: %w", keyX, ErrDataset, err)
	}
	la, err := get(keyLabels)
	if err != nil {
		return nil, err
	}
	labels, err := la.Int64()
	if err != nil || len(labels) != n {
		return nil, fmt.Errorf("eventlog: dataset key %q: %w: want %d labels", keyLabels, ErrDataset, n)
	}
	d.Labels = make([]Label, n)
	for i, l := range labels {
		if l < -1 || l > 1 {
			return nil, fmt.Errorf("eventlog: dataset key %q: %w: label %d of sample %d", keyLabels, ErrDataset, l, i)
		}
		d.Labels[i] = Label(l)
	}
	ja, err := get(keyJobs)
	if err != nil {
		return nil, err
	}
	jobs, err := ja.Int64()
	if err != nil || len(jobs) != 3*n {
		return nil, fmt.Errorf("eventlog: dataset key %q: %w: want (%d, 3) ids", keyJobs, ErrDataset, n)
	}
	d.jobs = make([]JobID, n)
	for i := range d.jobs {
		d.jobs[i] = JobID{int(jobs[3*i]), int(jobs[3*i+1]), int(jobs[3*i+2])}
	}
	return d, nil
}

// Split returns a seeded random split of the indices 0..n-1 into train,
// validate and test sets of floor(n·train), floor(n·validate) and the rest,
// each in increasing order. Fractions outside [0, 1] or summing above 1 are
// a caller mistake and panic.
func Split(n int, seed uint64, train, validate float64) (tr, va, te []int) {
	if n < 0 || !(train >= 0 && validate >= 0 && train+validate <= 1) {
		panic("eventlog: Split fractions must be in [0, 1] and sum to at most 1")
	}
	perm := rand.New(rand.NewPCG(seed, 0x73706c6974)).Perm(n)
	nt := int(math.Floor(float64(n) * train))
	nv := int(math.Floor(float64(n) * validate))
	tr, va, te = sortedInts(perm[:nt]), sortedInts(perm[nt:nt+nv]), sortedInts(perm[nt+nv:])
	return tr, va, te
}

func sortedInts(s []int) []int {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
