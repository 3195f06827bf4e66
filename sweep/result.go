package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/crosscluster/crosscluster/sweep/internal/atomicfile"
)

// Series is one metric logged over a run: Value[i] at Step[i] (an epoch, an
// iteration, a fraction of an epoch). Series of one run need not share
// steps: a validation loss logged every quarter epoch and an accuracy
// logged every epoch are two series.
type Series struct {
	Step, Value []float64
}

// Result is what one run produced: scalar metrics and series. NaN and ±Inf
// are allowed. Curves is an older form of Series: named columns of one
// table (e.g. "epoch", "val_loss"), read by CurveConfig.X and Y when a run
// has no Series of that name; its columns may have different lengths.
type Result struct {
	RunID   string
	Attempt int
	Metrics map[string]float64
	Series  map[string]Series
	Curves  map[string][]float64
}

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
			return fmt.Errorf("not a number: %.40s", b)
		}
		*f = num(x)
	}
	return nil
}

type seriesJSON struct {
	Step  []num `json:"step"`
	Value []num `json:"value"`
}

type resultJSON struct {
	RunID   string                `json:"run_id"`
	Attempt int                   `json:"attempt"`
	Metrics map[string]num        `json:"metrics"`
	Series  map[string]seriesJSON `json:"series,omitempty"`
	Curves  map[string][]num      `json:"curves,omitempty"`
	Done    bool                  `json:"done"`
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

func floats(v []num) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func marshalResult(r *Result) ([]byte, error) {
	j := resultJSON{RunID: r.RunID, Attempt: r.Attempt, Metrics: map[string]num{}, Done: true}
	for k, v := range r.Metrics {
		j.Metrics[k] = num(v)
	}
	if len(r.Series) > 0 {
		j.Series = map[string]seriesJSON{}
		for k, s := range r.Series {
			if len(s.Step) != len(s.Value) {
				return nil, fmt.Errorf("series %s has %d steps and %d values", k, len(s.Step), len(s.Value))
			}
			j.Series[k] = seriesJSON{nums(s.Step), nums(s.Value)}
		}
	}
	if len(r.Curves) > 0 {
		j.Curves = map[string][]num{}
		for k, v := range r.Curves {
			j.Curves[k] = nums(v)
		}
	}
	return json.Marshal(j)
}

func unmarshalResult(b []byte) (*Result, error) {
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
	r := &Result{RunID: j.RunID, Attempt: j.Attempt, Metrics: map[string]float64{}}
	for k, v := range j.Metrics {
		r.Metrics[k] = float64(v)
	}
	if len(j.Series) > 0 {
		r.Series = map[string]Series{}
		for k, s := range j.Series {
			if len(s.Step) != len(s.Value) {
				return nil, fmt.Errorf("%w: series %s has %d steps and %d values", ErrCorrupt, k, len(s.Step), len(s.Value))
			}
			r.Series[k] = Series{floats(s.Step), floats(s.Value)}
		}
	}
	if len(j.Curves) > 0 {
		r.Curves = map[string][]float64{}
		for k, v := range j.Curves {
			r.Curves[k] = floats(v)
		}
	}
	return r, nil
}

// WriteResult writes r to dir/result.json atomically: a temporary file in
// dir, fsync, rename, fsync of dir. A reader never sees a half-written file.
func WriteResult(dir string, r *Result) error {
	b, err := marshalResult(r)
	if err != nil {
		return fmt.Errorf("sweep: result for %s: %w", r.RunID, err)
	}
	return writeAtomic(filepath.Join(dir, ResultFile), b)
}

func writeAtomic(path string, b []byte) error { return writeFile(path, b, true) }

// writeFile writes path atomically (see atomicfile.Write).
func writeFile(path string, b []byte, durable bool) error {
	if err := atomicfile.Write(path, b, durable); err != nil {
		return fmt.Errorf("sweep: %w", err)
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
	r, err := unmarshalResult(b)
	if err != nil {
		return nil, fmt.Errorf("sweep: %s: %w", path, err)
	}
	return r, nil
}
