package eventlog_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/errtest"
	"github.com/crosscluster/crosscluster/internal/npy"
)

// errLog is a log whose events the cases below damage one at a time.
const errLog = "000 (7.0.0) 2024-03-05 10:00:00 Job submitted from host: <10.0.0.5:9618>\n...\n" +
	"012 (7.0.0) 2024-03-05 10:03:00 Job was held.\n\tvia condor_hold\n\tCode x Subcode 0\n...\n"

// readErr reads log (named file) with opt and returns the first error.
func readErr(file, log string, opt eventlog.Options) error {
	r := eventlog.NewReader(strings.NewReader(log))
	r.File, r.Options = file, opt
	if opt.Location == nil {
		r.Location = time.UTC
	}
	_, err := r.ReadAll()
	return err
}

// TestErrors provokes each error the documentation of eventlog promises,
// with bad input through the exported API, and checks that errors.Is names
// its sentinel, that a *ParseError carries the line, and that the message
// says "eventlog: " once, at its start, with the place (the file a Reader
// or Files was given; an accessor's error has only the line, since an
// Event read by a Reader does not record its file).
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.log")
	okDataset := func() []byte {
		return writeRawDataset(t, []int64{2, 3, 60e9, 1, 0, 0, 0, 0, 0}, 1, 1, 3, 2)
	}
	readDataset := func(b []byte) error {
		_, err := eventlog.ReadDataset(bytes.NewReader(b), int64(len(b)))
		return err
	}
	// jobs: one held job alone in its log, and one never held.
	events, err := eventlog.NewReader(strings.NewReader(strings.Replace(errLog, "Code x", "Code 1", 1))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	held := eventlog.Group("s", events)
	never := eventlog.Group("s", events[:1])

	tests := []struct {
		name  string
		err   func(t *testing.T) error
		is    error
		line  int // the *ParseError's Line; 0 when no *ParseError is promised
		place []string
	}{
		{"header", func(*testing.T) error { return readErr("a.log", "not an event\n", eventlog.Options{}) }, eventlog.ErrHeader, 1, []string{"a.log:line 1, column 1"}},
		{"date", func(*testing.T) error {
			return readErr("a.log", strings.Replace(errLog, "2024-03-05 10:03", "2024-02-30 10:03", 1), eventlog.Options{})
		}, eventlog.ErrDate, 3, []string{"a.log:line 3"}},
		{"unknown code when strict", func(*testing.T) error {
			return readErr("a.log", strings.Replace(errLog, "012 (7", "099 (7", 1), eventlog.Options{Strict: true})
		}, eventlog.ErrUnknownCode, 3, []string{"a.log:line 3"}},
		{"missing terminator", func(*testing.T) error {
			return readErr("a.log", strings.Replace(errLog, "9618>\n...\n", "9618>\n", 1), eventlog.Options{})
		}, eventlog.ErrMissingTerminator, 2, []string{"a.log:line 2"}},
		{"truncated", func(*testing.T) error {
			return readErr("a.log", strings.TrimSuffix(errLog, "...\n"), eventlog.Options{})
		}, eventlog.ErrTruncated, 5, []string{"a.log:line 5"}},
		{"line too long", func(*testing.T) error {
			return readErr("a.log", strings.Replace(errLog, "via condor_hold", strings.Repeat("x", 16<<20+1), 1), eventlog.Options{})
		}, eventlog.ErrLineTooLong, 4, []string{"a.log:line 4"}},
		{"event too large", func(*testing.T) error {
			return readErr("a.log", errLog, eventlog.WithMaxEventSize(eventlog.Options{}, 40))
		}, eventlog.ErrEventTooLarge, 3, []string{"a.log:line 3", "40 bytes"}},
		{"XML", func(*testing.T) error { return readErr("a.xml", "<event>\n", eventlog.Options{}) }, eventlog.ErrXML, 1, []string{"a.xml:line 1"}},
		{"JSON", func(*testing.T) error {
			return readErr("a.json", "{\"EventTypeNumber\": 0,\n\"Cluster\": }\n", eventlog.Options{})
		}, eventlog.ErrJSON, 1, []string{"a.json:line 1"}},
		{"body", func(t *testing.T) error {
			r := eventlog.NewReader(strings.NewReader(errLog))
			r.File = "a.log"
			evs, err := r.ReadAll()
			if err != nil || len(evs) != 2 {
				t.Fatalf("%d events, %v", len(evs), err)
			}
			_, err = evs[1].HoldInfo()
			return err
		}, eventlog.ErrBody, 5, []string{"line 5", "ULOG_JOB_HELD", "Code N Subcode M"}},
		{"GroupSeq passes the stream's error", func(*testing.T) error {
			r := eventlog.NewReader(strings.NewReader(errLog + "junk\n"))
			r.File = "a.log"
			_, err := eventlog.GroupSeq("s", r.All())
			return err
		}, eventlog.ErrHeader, 7, []string{"a.log:line 7"}},
		{"Follow stops inside an event", func(*testing.T) error {
			p := filepath.Join(dir, "follow.log")
			if err := os.WriteFile(p, []byte(strings.TrimSuffix(errLog, "...\n")), 0o644); err != nil {
				return err
			}
			opt := eventlog.WithPoll(eventlog.FollowOptions{StopAfter: 50 * time.Millisecond}, 5*time.Millisecond)
			opt.Location = time.UTC
			for _, err := range eventlog.Follow(context.Background(), p, opt) {
				if err != nil {
					return err
				}
			}
			return nil
		}, eventlog.ErrTruncated, 5, []string{"follow.log:line 5"}},
		{"Files on a missing file", func(*testing.T) error {
			_, err := eventlog.NewFiles([]string{missing}, eventlog.Options{}).ReadAll()
			return err
		}, fs.ErrNotExist, 0, []string{missing}},
		{"Files on a directory", func(*testing.T) error {
			_, err := eventlog.NewFiles([]string{dir}, eventlog.Options{}).ReadAll()
			return err
		}, nil, 0, []string{dir}},
		{"Follow on a directory", func(*testing.T) error {
			for _, err := range eventlog.Follow(context.Background(), dir, eventlog.FollowOptions{StopAfter: time.Second}) {
				if err != nil {
					return err
				}
			}
			return nil
		}, nil, 0, []string{dir}},

		{"dataset: not a zip", func(*testing.T) error { return readDataset([]byte("hello")) }, eventlog.ErrDataset, 0, nil},
		{"dataset: truncated", func(*testing.T) error { b := okDataset(); return readDataset(b[:len(b)-30]) }, eventlog.ErrDataset, 0, nil},
		{"dataset: foreign archive", func(t *testing.T) error {
			var buf bytes.Buffer
			z := npy.NewZipWriter(&buf, false)
			if err := z.Add("weights", []int{2}, []float64{1, 2}); err != nil {
				t.Fatal(err)
			}
			if err := z.Close(); err != nil {
				t.Fatal(err)
			}
			return readDataset(buf.Bytes())
		}, eventlog.ErrDataset, 0, []string{`key "config"`}},
		{"dataset: bad config", func(*testing.T) error {
			return readDataset(writeRawDataset(t, []int64{2, 3, -1, 1, 0, 0, 0, 0, 0}, 1, 1, 3, 2))
		}, eventlog.ErrDataset, 0, []string{`key "config"`, "frame_ns=-1"}},
		{"dataset: x of another shape", func(*testing.T) error {
			return readDataset(writeRawDataset(t, []int64{2, 3, 60e9, 1, 0, 0, 0, 0, 0}, 1, 1, 4, 2))
		}, eventlog.ErrDataset, 0, []string{`key "x"`, "shape [1 1 4 2]"}},
		{"dataset: label out of range", func(t *testing.T) error {
			var buf bytes.Buffer
			z := npy.NewZipWriter(&buf, false)
			z.Add("x", []int{1, 1, 3, 2}, make([]float32, 6))
			z.Add("labels", []int{1}, []int8{7})
			z.Add("jobs", []int{1, 3}, make([]int64, 3))
			z.Add("config", []int{9}, []int64{2, 3, 60e9, 1, 0, 0, 0, 0, 0})
			if err := z.Close(); err != nil {
				t.Fatal(err)
			}
			return readDataset(buf.Bytes())
		}, eventlog.ErrDataset, 0, []string{`key "labels"`, "label 7 of sample 0"}},

		{"Build with too few jobs", func(*testing.T) error {
			_, err := eventlog.Builder{J: 2, M: 3, Unlabeled: true}.Build(held)
			return err
		}, eventlog.ErrTooFewJobs, 0, []string{"job s/007.000.000", "0 of 1"}},
		{"Sample of a job never held", func(*testing.T) error {
			_, err := eventlog.Builder{SeedCompat: true}.Sample(never[0], nil)
			return err
		}, eventlog.ErrNoHold, 0, []string{"job s/007.000.000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
			var pe *eventlog.ParseError
			switch {
			case tc.line == 0 && errors.As(err, &pe):
				t.Errorf("%v is a *ParseError; none is documented", err)
			case tc.line != 0 && !errors.As(err, &pe):
				t.Errorf("%v is not a *ParseError", err)
			case tc.line != 0 && pe.Line != tc.line:
				t.Errorf("ParseError{File: %q, Line: %d}, want line %d", pe.File, pe.Line, tc.line)
			}
			errtest.Check(t, err, "eventlog: ", tc.place...)
		})
	}
	if err := readDataset(okDataset()); err != nil {
		t.Errorf("the well-formed dataset the cases damage does not read: %v", err)
	}
}
