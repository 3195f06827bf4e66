package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// MetricLog streams a run's metrics to its MetricFile while the run goes
// on, at any frequency per series. Each Log call appends one whole line in
// one write, so the controller (and anything reading the ledger) sees the
// values as they are logged; a line cut short by a crash is ignored by
// readers. A MetricLog is safe for concurrent use.
type MetricLog struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
}

// OpenMetricLog opens (appending) the MetricFile in a run's attempt
// directory; a worker passes its Task.Dir.
func OpenMetricLog(dir string) (*MetricLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, MetricFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("sweep: metric log: %w", err)
	}
	return &MetricLog{f: f}, nil
}

// Log appends value of series at step. Series names are non-empty; a step
// must be a finite number from 0 to 2⁵³ (an epoch, an iteration), and any
// other is an error: readers refuse it (value may be anything, NaN and ±Inf
// included).
func (m *MetricLog) Log(series string, step, value float64) error {
	if series == "" {
		panic("sweep: MetricLog.Log with an empty series name")
	}
	if !stepOK(step) {
		return fmt.Errorf("sweep: metric log: series %q: step %v is not a finite number from 0 to 2^53", series, step)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := append(m.buf[:0], `{"series":`...)
	b = strconv.AppendQuote(b, series)
	b = append(b, `,"step":`...)
	b = appendNum(b, step)
	b = append(b, `,"value":`...)
	b = appendNum(b, value)
	b = append(b, `,"time":`...)
	b = strconv.AppendFloat(b, float64(time.Now().UnixMicro())/1e6, 'f', 3, 64)
	b = append(b, "}\n"...)
	m.buf = b
	if _, err := m.f.Write(b); err != nil {
		return fmt.Errorf("sweep: metric log: %w", err)
	}
	return nil
}

// Close closes the log.
func (m *MetricLog) Close() error { return m.f.Close() }

func appendNum(b []byte, x float64) []byte {
	v, _ := num(x).MarshalJSON()
	return append(b, v...)
}

// metricPoint is one line of a MetricFile.
type metricPoint struct {
	Series string  `json:"series"`
	Step   num     `json:"step"`
	Value  num     `json:"value"`
	Time   float64 `json:"time"`
}

// parseMetrics decodes the whole lines of b (a partial last line is left
// out; done reports how many bytes were consumed). A line that is whole
// but malformed is an error naming its number (first is the number of the
// first line of b).
func parseMetrics(b []byte, first int) (pts []metricPoint, done int, err error) {
	for line := first; ; line++ {
		i := bytes.IndexByte(b[done:], '\n')
		if i < 0 {
			return pts, done, nil
		}
		raw := b[done : done+i]
		done += i + 1
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var p metricPoint
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&p); err != nil {
			return pts, done, fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
		}
		if p.Series == "" {
			return pts, done, fmt.Errorf("%w: line %d: empty series", ErrCorrupt, line)
		}
		if !stepOK(float64(p.Step)) {
			return pts, done, fmt.Errorf("%w: line %d: series %q: step %v is not a finite number from 0 to 2^53", ErrCorrupt, line, p.Series, float64(p.Step))
		}
		pts = append(pts, p)
	}
}

// readMetricLog reads the series logged so far in dir's MetricFile, each in
// the order logged. A missing file gives no series; a line cut short at the
// end (the run is still writing, or crashed) is ignored; a malformed whole
// line is an error wrapping ErrCorrupt that names the file and line.
func readMetricLog(dir string) (map[string]Series, error) {
	path := filepath.Join(dir, MetricFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Series{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	pts, _, err := parseMetrics(b, 1)
	if err != nil {
		return nil, fmt.Errorf("sweep: %s: %w", path, err)
	}
	out := map[string]Series{}
	for _, p := range pts {
		s := out[p.Series]
		s.Step = append(s.Step, float64(p.Step))
		s.Value = append(s.Value, float64(p.Value))
		out[p.Series] = s
	}
	return out, nil
}

// metricTail follows a growing MetricFile, returning the points of the
// whole lines written since the last call.
type metricTail struct {
	off  int64
	line int
}

func (t *metricTail) next(path string) ([]metricPoint, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= t.off {
		return nil, err
	}
	b := make([]byte, fi.Size()-t.off)
	n, err := f.ReadAt(b, t.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if t.line == 0 {
		t.line = 1
	}
	pts, done, err := parseMetrics(b[:n], t.line)
	t.off += int64(done)
	t.line += bytes.Count(b[:done], []byte{'\n'})
	if err != nil {
		return pts, fmt.Errorf("%s: %w", path, err)
	}
	return pts, nil
}

// maxStep bounds a metric's step: integers are exact up to it, and the
// pruners' rungs (MinStep·Eta^k) reach it in a few dozen steps.
const maxStep = 1 << 53

// stepOK reports whether step is a step the ledger accepts: finite, from 0
// to maxStep. An infinite step would never let ASHA's rungs end.
func stepOK(step float64) bool { return step >= 0 && step <= maxStep }
