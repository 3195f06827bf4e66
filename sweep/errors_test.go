//go:build unix

package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestErrors produces every documented error through the API and checks
// that callers can name it with errors.Is or errors.As, and that the
// message carries the package prefix once.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tests := []struct {
		name string
		err  func(t *testing.T) error
		is   error
		as   any
	}{
		{"spec", func(t *testing.T) error { _, err := LoadSpec(strings.NewReader("name: x\ngird: 1")); return err }, ErrSpec, new(*SpecError)},
		{"too large", func(t *testing.T) error {
			var axes []Axis
			for _, k := range []string{"a", "b", "c"} {
				a := Axis{Key: k}
				for i := range 1000 {
					a.Values = append(a.Values, intValue(int64(i)))
				}
				axes = append(axes, a)
			}
			_, err := (&Spec{Name: "x", Axes: axes}).countPoints()
			return err
		}, ErrTooLarge, new(*SpecError)},
		{"locked", func(t *testing.T) error {
			p := filepath.Join(dir, "locked.db")
			l, err := OpenLedger(p)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = OpenLedger(p)
			return err
		}, ErrLocked, nil},
		{"no run", func(t *testing.T) error {
			l, _ := openTemp(t)
			_, err := l.Get(ctx, "nope")
			return err
		}, ErrNoRun, nil},
		{"read-only", func(t *testing.T) error {
			_, p := openTemp(t)
			ro, err := OpenLedgerReadOnly(p)
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			_, err = ro.Enqueue(ctx, nil, slices.Values(mustPoints(t, gridSpec("r", 1, nil))))
			return err
		}, ErrReadOnly, nil},
		{"transition", func(t *testing.T) error {
			l, _ := openTemp(t)
			pts := mustEnqueue(t, l, gridSpec("t", 1, nil))
			_, err := l.Requeue(ctx, []string{pts[0].ID}, nil, false)
			return err
		}, nil, new(*TransitionError)},
		{"inputs", func(t *testing.T) error {
			l, _ := openTemp(t)
			s := gridSpec("i", 1, nil)
			s.Inputs = map[string]string{"code": "a"}
			l.Enqueue(ctx, s, slices.Values(mustPoints(t, s)))
			s.Inputs["code"] = "b"
			_, err := l.Enqueue(ctx, s, slices.Values(mustPoints(t, s)))
			return err
		}, nil, new(*InputsError)},
		{"corrupt result", func(t *testing.T) error {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, ResultFile), []byte("{"), 0o644)
			_, err := ReadResult(d)
			return err
		}, ErrCorrupt, nil},
		{"corrupt metric log", func(t *testing.T) error {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, MetricFile), []byte("nope\n"), 0o644)
			_, err := readMetricLog(d)
			return err
		}, ErrCorrupt, nil},
		{"checksum", func(t *testing.T) error {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, manifestFile), []byte(`{"runs":[{"file":"x","sha256":"00"}]}`), 0o644)
			os.WriteFile(filepath.Join(d, "x"), []byte("x"), 0o644)
			_, err := VerifyArchive(ctx, d)
			return err
		}, ErrChecksum, nil},
		{"work dir", func(t *testing.T) error {
			work := t.TempDir()
			os.MkdirAll(filepath.Join(work, "runs", "someone-elses"), 0o755)
			l, _ := openTemp(t)
			_, err := (&Controller{Ledger: l, Backend: &Local{Func: testFunc}, WorkDir: work}).Run(ctx)
			return err
		}, ErrWorkDir, nil},
		{"hook", func(t *testing.T) error {
			l, _ := openTemp(t)
			mustEnqueue(t, l, gridSpec("h", 1, nil))
			_, err := (&Controller{Ledger: l, Backend: &Local{Func: testFunc}, WorkDir: t.TempDir(), Hook: []string{"false"}}).Run(ctx)
			return err
		}, ErrHook, nil},
		{"launch", func(t *testing.T) error {
			l := &Local{Command: []string{"true"}, StateDir: t.TempDir()}
			// A malformed exit record, as a damaged state directory holds.
			tk := Task{RunID: "r", Attempt: 1, BackendID: "proc:r-a1"}
			os.WriteFile(filepath.Join(l.StateDir, launchName(tk)+".exit"), []byte("exit=0\nstart=\nend=1\n"), 0o644)
			_, err := l.Poll(ctx, []Task{tk})
			return err
		}, ErrLaunch, nil},
		{"cancelled", func(t *testing.T) error {
			l, _ := openTemp(t)
			mustEnqueue(t, l, gridSpec("c", 2, map[string]Value{"sleep_ms": intValue(60_000)}))
			cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := (&Controller{Ledger: l, Backend: &Local{Func: testFunc}, WorkDir: t.TempDir()}).Run(cctx)
			return err
		}, context.DeadlineExceeded, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
			if tc.as != nil && !errors.As(err, tc.as) {
				t.Errorf("errors.As(%v, %T) is false", err, tc.as)
			}
			if n := strings.Count(err.Error(), "sweep:"); n != 1 {
				t.Errorf("%q has the package prefix %d times, want once", err, n)
			}
		})
	}
}
