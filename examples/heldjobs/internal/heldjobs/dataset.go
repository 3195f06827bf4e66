package heldjobs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/lstm"
)

// The dataset directory a parse step writes: one .npz of labelled samples
// per tensor shape (eventlog.WriteDataset) and index.json describing them.
const (
	IndexFile     = "index.json"
	datasetFormat = "crosscluster-heldjobs-dataset"
	// Version 2: context jobs drawn by the causal rule of eventlog.Builder
	// (issue 19 item 1); version 1 tensors were built otherwise.
	datasetVersion = 2
)

// ErrDataset is wrapped by the errors about a dataset directory that is
// missing, damaged or of another version, and about data that yields no
// dataset (too few labelled held jobs).
var ErrDataset = errors.New("held-job dataset")

// LogFile is one event log a dataset was built from.
type LogFile struct {
	Name   string `json:"name"` // as given (a path)
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// ShapeData is the tensor file of one shape.
type ShapeData struct {
	Shape    string `json:"shape"`
	File     string `json:"file"` // relative to the dataset directory
	SHA256   string `json:"sha256"`
	Held     int    `json:"held"`     // held jobs (with a sample)
	Labelled int    `json:"labelled"` // of which released or removed
	Release  int    `json:"release"`
	Train    int    `json:"train"`
	Valid    int    `json:"valid"`
	Test     int    `json:"test"`
}

// Dataset is index.json: where the data came from and the file of each
// shape.
type Dataset struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ID identifies the data: a SHA-256 over the event-log bytes and the
	// framing and split parameters. Runs are only comparable on one ID.
	ID        string      `json:"id"`
	Logs      []LogFile   `json:"logs,omitempty"`
	Synthetic *Synthetic  `json:"synthetic,omitempty"`
	E         int         `json:"e"`
	Forward   bool        `json:"forward"`
	Seed      uint64      `json:"seed"`
	Train     float64     `json:"split_train"`
	Valid     float64     `json:"split_valid"`
	Events    int         `json:"events"`
	Jobs      int         `json:"jobs"`
	OnHold    int         `json:"on_hold"` // jobs whose last state is a hold
	Shapes    []ShapeData `json:"shapes"`
}

// shape returns the entry of a shape, or nil.
func (d *Dataset) shape(s Shape) *ShapeData {
	lit := s.String()
	for i := range d.Shapes {
		if d.Shapes[i].Shape == lit {
			return &d.Shapes[i]
		}
	}
	return nil
}

// ReadDataset reads dir/index.json.
func ReadDataset(dir string) (*Dataset, error) {
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w: %w", ErrDataset, err)
	}
	var d Dataset
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("heldjobs: %w: %s: %v", ErrDataset, filepath.Join(dir, IndexFile), err)
	}
	if d.Format != datasetFormat || d.Version != datasetVersion {
		return nil, fmt.Errorf("heldjobs: %w: %s is format %q version %d; this program reads %q version %d",
			ErrDataset, filepath.Join(dir, IndexFile), d.Format, d.Version, datasetFormat, datasetVersion)
	}
	return &d, nil
}

// events is what a parse reads: the events, grouped into jobs.
type events struct {
	n       int
	jobs    []*eventlog.Job
	logs    []LogFile
	digest  string // SHA-256 of the log bytes, in order
	damaged int
}

// ReadLogs reads HTCondor event logs (rotations of a log are ordered oldest
// first, events repeated at file boundaries dropped, damaged events
// skipped and counted) and groups their events into jobs, each log its own
// source so that the job ids of two schedds stay apart.
func ReadLogs(paths []string) ([]*eventlog.Job, error) {
	ev, err := readLogs(paths)
	if err != nil {
		return nil, err
	}
	return ev.jobs, nil
}

func readLogs(paths []string) (*events, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("heldjobs: %w: no event log given", ErrDataset)
	}
	sorted := eventlog.SortRotated(slices.Clone(paths))
	h := sha256.New()
	ev := &events{}
	for _, p := range sorted {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
		fh := sha256.New()
		n, err := io.Copy(io.MultiWriter(h, fh), f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("heldjobs: %s: %w", p, err)
		}
		ev.logs = append(ev.logs, LogFile{Name: p, Bytes: n, SHA256: hex.EncodeToString(fh.Sum(nil))})
	}
	ev.digest = hex.EncodeToString(h.Sum(nil))
	fs := eventlog.NewFiles(sorted, eventlog.Options{Lenient: true, Location: time.UTC})
	defer fs.Close()
	var all []eventlog.Event
	for e, err := range fs.All() {
		if err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
		all = append(all, e)
	}
	ev.n, ev.damaged = len(all), fs.Damaged()
	ev.jobs, _ = eventlog.GroupBySource(func(yield func(eventlog.Event, error) bool) {
		for _, e := range all {
			if !yield(e, nil) {
				return
			}
		}
	})
	return ev, nil
}

// syntheticEvents generates the synthetic global log of cfg and cuts it at
// the time of its Snapshot quantile event, a snapshot of the schedd in
// which some held jobs have not yet been released or removed.
func syntheticEvents(cfg Synthetic) (*events, []byte, error) {
	var buf bytes.Buffer
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: cfg.Seed, Jobs: cfg.Jobs, HoldRate: 0.3, Header: true}); err != nil {
		return nil, nil, fmt.Errorf("heldjobs: synthetic log: %w", err)
	}
	raw := slices.Clone(buf.Bytes())
	r := eventlog.NewReader(&buf)
	r.Location = time.UTC
	all, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("heldjobs: synthetic log: %w", err)
	}
	all = Snapshot(all, cfg.Snapshot)
	sum := sha256.Sum256(raw)
	return &events{n: len(all), jobs: eventlog.Group("synthetic", all), digest: hex.EncodeToString(sum[:])}, raw, nil
}

// Snapshot returns the events written at or before the time of the event
// at quantile q of events (in log order, q in (0, 1)): the log of a schedd
// as it stood then, when some held jobs had not yet been released or
// removed. q ≥ 1 or no event returns events; the result is a new slice.
func Snapshot(events []eventlog.Event, q float64) []eventlog.Event {
	if len(events) == 0 || q >= 1 {
		return events
	}
	cut := events[int(max(q, 0)*float64(len(events)-1))].Time
	var out []eventlog.Event
	for _, e := range events {
		if !e.Time.After(cut) {
			out = append(out, e)
		}
	}
	return out
}

// dataID is the identity of the data: log bytes, framing and split.
func dataID(digest string, s *Spec) string {
	d := s.Data
	b, _ := json.Marshal(struct {
		Logs      string
		Synthetic Synthetic
		E         int
		Forward   bool
		Seed      uint64
		Train     float64
		Valid     float64
	}{digest, d.Synthetic, d.E, d.Forward, d.Seed, d.Train, d.Valid})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// builder is the eventlog.Builder of a shape: by default the window that
// ends at the first hold, newest frame first (the published pipeline's
// framing, eventlog's SeedCompat), so that a sample holds only what was
// known when the hold decision had to be made.
func builder(d Data, s Shape) eventlog.Builder {
	return eventlog.Builder{E: d.E, M: s.M, Frame: s.Frame, J: s.J, Seed: d.Seed, Pad: true,
		SeedCompat: !d.Forward, Forward: d.Forward}
}

// minLabelled is the fewest labelled held jobs a dataset needs so that
// each of the three sets gets some.
const minLabelled = 10

// Parse builds the dataset of spec into dir: it reads the spec's event
// logs (or generates its synthetic log), groups the events into jobs and
// writes, for every shape of the space, the labelled held jobs' tensors as
// <shape>.npz, then index.json. A dataset already in dir with the same ID
// is kept and only its missing shapes are built; one with another ID is an
// error (use another directory). Files are written whole or not at all,
// index.json last, so an interrupted Parse leaves no dataset that looks
// complete. Each shape's tensors are built in memory before anything is
// written, so logs with no labelled held job create nothing; when a later
// shape fails, the files this call wrote and the directories it created
// are removed. Progress, if not nil, gets one line per step.
func Parse(spec *Spec, dir string, progress io.Writer) (*Dataset, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	say := func(format string, a ...any) {
		if progress != nil {
			fmt.Fprintf(progress, format+"\n", a...)
		}
	}
	var (
		ev  *events
		err error
	)
	if len(spec.Data.Logs) > 0 {
		ev, err = readLogs(spec.Data.Logs)
	} else {
		ev, _, err = syntheticEvents(spec.Data.Synthetic)
	}
	if err != nil {
		return nil, err
	}
	id := dataID(ev.digest, spec)
	d := &Dataset{Format: datasetFormat, Version: datasetVersion, ID: id, Logs: ev.logs, E: spec.Data.E,
		Forward: spec.Data.Forward, Seed: spec.Data.Seed, Train: spec.Data.Train, Valid: spec.Data.Valid,
		Events: ev.n, Jobs: len(ev.jobs)}
	if len(spec.Data.Logs) == 0 {
		syn := spec.Data.Synthetic
		d.Synthetic = &syn
	}
	for _, j := range ev.jobs {
		if last, ok := j.LastState(); ok && last.Code == eventlog.Held {
			d.OnHold++
		}
	}
	if old, err := ReadDataset(dir); err == nil {
		if old.ID != id {
			return nil, fmt.Errorf("heldjobs: %w: %s holds a dataset of other data (id %.12s, this spec's is %.12s); use another directory",
				ErrDataset, dir, old.ID, id)
		}
		d.Shapes = old.Shapes
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	say("%d events, %d jobs (%d on hold at the end) from %s", ev.n, len(ev.jobs), d.OnHold, sourceName(spec))
	w := &undoWriter{dir: dir}
	for _, sh := range spec.Space.shapes() {
		if sd := d.shape(sh); sd != nil {
			if _, err := os.Stat(filepath.Join(dir, sd.File)); err == nil {
				continue
			}
			d.Shapes = slices.DeleteFunc(d.Shapes, func(x ShapeData) bool { return x.Shape == sh.String() })
		}
		sd, npz, err := buildShape(spec.Data, sh, ev.jobs)
		if err == nil {
			err = w.write(sd.File, npz)
		}
		if err != nil {
			w.undo()
			return nil, err
		}
		say("shape %s: %d held jobs, %d labelled (%d release), split %d/%d/%d -> %s",
			sh, sd.Held, sd.Labelled, sd.Release, sd.Train, sd.Valid, sd.Test, sd.File)
		d.Shapes = append(d.Shapes, sd)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err == nil {
		err = w.write(IndexFile, append(b, '\n'))
	}
	if err != nil {
		w.undo()
		return nil, err
	}
	return d, nil
}

// undoWriter writes files into dir, creating dir (and its missing parents)
// on the first write, and can take back what it did: the files it wrote
// and the directories it created, so that a failed Parse leaves the file
// system as it found it.
type undoWriter struct {
	dir     string
	created []string // directories made, deepest first
	files   []string
}

func (w *undoWriter) write(name string, b []byte) error {
	if w.files == nil {
		for p := filepath.Clean(w.dir); ; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
				break
			}
			w.created = append(w.created, p)
		}
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		w.files = []string{}
	}
	path := filepath.Join(w.dir, name)
	if err := writeAtomic(path, b); err != nil {
		return err
	}
	w.files = append(w.files, path)
	return nil
}

// undo removes the files written and the directories created, deepest
// first; a directory something else has written into meanwhile is left.
func (w *undoWriter) undo() {
	for _, f := range w.files {
		os.Remove(f)
	}
	for _, d := range w.created {
		os.Remove(d)
	}
}

func sourceName(s *Spec) string {
	if len(s.Data.Logs) > 0 {
		return fmt.Sprintf("%d log file(s)", len(s.Data.Logs))
	}
	return fmt.Sprintf("a synthetic log of %d jobs (seed %d)", s.Data.Synthetic.Jobs, s.Data.Synthetic.Seed)
}

// buildShape builds the labelled held jobs' tensors of shape sh as the
// bytes of an .npz file, and their entry in the index.
func buildShape(d Data, sh Shape, jobs []*eventlog.Job) (ShapeData, []byte, error) {
	b := builder(d, sh)
	b.Unlabeled = true
	samples, err := b.Build(jobs)
	if err != nil {
		return ShapeData{}, nil, fmt.Errorf("heldjobs: shape %s: %w", sh, err)
	}
	sd := ShapeData{Shape: sh.String(), File: sh.String() + ".npz", Held: len(samples)}
	var lab []eventlog.Sample
	for _, s := range samples {
		if s.Label != eventlog.Unlabeled {
			lab = append(lab, s)
			if s.Label == eventlog.Release {
				sd.Release++
			}
		}
	}
	sd.Labelled = len(lab)
	if len(lab) < minLabelled {
		return ShapeData{}, nil, fmt.Errorf("heldjobs: %w: shape %s: only %d labelled held jobs (released or removed); at least %d are needed",
			ErrDataset, sh, len(lab), minLabelled)
	}
	tr, va, te := eventlog.Split(len(lab), d.Seed, d.Train, d.Valid)
	sd.Train, sd.Valid, sd.Test = len(tr), len(va), len(te)
	var buf bytes.Buffer
	b.Unlabeled = false
	if err := eventlog.WriteDataset(&buf, b, lab); err != nil {
		return ShapeData{}, nil, fmt.Errorf("heldjobs: shape %s: %w", sh, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	sd.SHA256 = hex.EncodeToString(sum[:])
	return sd, buf.Bytes(), nil
}

// Splits are the training, validation and test sets of one shape.
type Splits struct {
	Train, Valid, Test lstm.Data
}

// LoadShape reads the tensors of shape s from a dataset directory, checks
// them against the index and splits them as the index says.
func LoadShape(dir string, d *Dataset, s Shape) (*Splits, error) {
	sd := d.shape(s)
	if sd == nil {
		return nil, fmt.Errorf("heldjobs: %w: %s has no shape %s", ErrDataset, dir, s)
	}
	path := filepath.Join(dir, sd.File)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w: %w", ErrDataset, err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != sd.SHA256 {
		return nil, fmt.Errorf("heldjobs: %w: %s does not match the SHA-256 in %s", ErrDataset, path, IndexFile)
	}
	ds, err := eventlog.ReadDataset(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w: %s: %w", ErrDataset, path, err)
	}
	if ds.Builder.J != s.J || ds.Builder.M != s.M || ds.Builder.E != d.E || ds.Builder.Frame != s.Frame || len(ds.Labels) != sd.Labelled {
		return nil, fmt.Errorf("heldjobs: %w: %s holds %d samples of %dx%dx%s with e=%d, the index says %d of %s with e=%d",
			ErrDataset, path, len(ds.Labels), ds.Builder.J, ds.Builder.M, ds.Builder.Frame, ds.Builder.E, sd.Labelled, s, d.E)
	}
	tr, va, te := eventlog.Split(len(ds.Labels), d.Seed, d.Train, d.Valid)
	data := func(idx []int) lstm.Data {
		out := lstm.Data{X: make([][][]float64, len(idx)), Y: make([]int, len(idx))}
		for i, k := range idx {
			smp := ds.Sample(k)
			out.X[i] = smp.Seq()
			out.Y[i] = int(smp.Label)
		}
		return out
	}
	return &Splits{Train: data(tr), Valid: data(va), Test: data(te)}, nil
}

// writeAtomic writes b to path through a temporary file in the same
// directory, so that path holds the old content or the new, never part.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	_, err = f.Write(b)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("heldjobs: %w", err)
	}
	return nil
}
