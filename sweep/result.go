package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// ResultFile is the name of the file a worker writes into its attempt
// directory when it finishes.
const ResultFile = "result.json"

// Result is what one run produced: scalar metrics and trajectories (curves
// keyed by name, e.g. "epoch", "val_loss"). NaN and ±Inf are allowed.
type Result struct {
	RunID   string
	Attempt int
	Metrics map[string]float64
	Curves  map[string][]float64
}

// ErrCorrupt is wrapped by ReadResult's errors for a result file that exists
// but cannot be used.
var ErrCorrupt = errors.New("sweep: corrupt result file")

// num writes NaN and ±Inf as the strings "nan", "inf", "-inf", which JSON
// cannot hold as numbers.
type num float64

func (f num) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"nan"`), nil
	case math.IsInf(x, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

func (f *num) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"nan"`:
		*f = num(math.NaN())
	case `"inf"`:
		*f = num(math.Inf(1))
	case `"-inf"`:
		*f = num(math.Inf(-1))
	default:
		x, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return fmt.Errorf("not a number: %s", b)
		}
		*f = num(x)
	}
	return nil
}

type resultJSON struct {
	RunID   string           `json:"run_id"`
	Attempt int              `json:"attempt"`
	Metrics map[string]num   `json:"metrics"`
	Curves  map[string][]num `json:"curves"`
	Done    bool             `json:"done"`
}

// MarshalResult encodes r as the result-file JSON.
func MarshalResult(r *Result) ([]byte, error) {
	j := resultJSON{RunID: r.RunID, Attempt: r.Attempt, Metrics: map[string]num{}, Curves: map[string][]num{}, Done: true}
	for k, v := range r.Metrics {
		j.Metrics[k] = num(v)
	}
	for k, v := range r.Curves {
		c := make([]num, len(v))
		for i, x := range v {
			c[i] = num(x)
		}
		j.Curves[k] = c
	}
	return json.Marshal(j)
}

// UnmarshalResult decodes a result file; errors wrap ErrCorrupt.
func UnmarshalResult(b []byte) (*Result, error) {
	var j resultJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrCorrupt)
	}
	if !j.Done || j.RunID == "" {
		return nil, fmt.Errorf("%w: missing run_id or done marker", ErrCorrupt)
	}
	r := &Result{RunID: j.RunID, Attempt: j.Attempt, Metrics: map[string]float64{}, Curves: map[string][]float64{}}
	for k, v := range j.Metrics {
		r.Metrics[k] = float64(v)
	}
	n := -1
	for k, v := range j.Curves {
		c := make([]float64, len(v))
		for i, x := range v {
			c[i] = float64(x)
		}
		if n >= 0 && len(c) != n {
			return nil, fmt.Errorf("%w: curve %s has %d points, others %d", ErrCorrupt, k, len(c), n)
		}
		n = len(c)
		r.Curves[k] = c
	}
	return r, nil
}

// WriteResult writes r to dir/result.json atomically: a temporary file in
// dir, fsync, rename, fsync of dir. A reader never sees a half-written file.
func WriteResult(dir string, r *Result) error {
	b, err := MarshalResult(r)
	if err != nil {
		return fmt.Errorf("sweep: result for %s: %w", r.RunID, err)
	}
	return writeAtomic(filepath.Join(dir, ResultFile), b)
}

func writeAtomic(path string, b []byte) error { return writeFile(path, b, true) }

// writeFile writes through a temporary file and a rename, so readers see
// the old or the new content, never a part; durable adds the fsyncs that
// make it survive a power failure (a crashed process needs only the rename).
func writeFile(path string, b []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("sweep: writing %s: %w", path, err)
	}
	tmp := f.Name()
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("sweep: writing %s: %w", path, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(tmp)
			return fmt.Errorf("sweep: writing %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sweep: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sweep: writing %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// ReadResult reads dir/result.json. A missing file is an error wrapping
// os.ErrNotExist; an unreadable one wraps ErrCorrupt and names the file.
func ReadResult(dir string) (*Result, error) {
	path := filepath.Join(dir, ResultFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	r, err := UnmarshalResult(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
