package eventlog_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"

	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// FuzzRead feeds arbitrary bytes to the reader in every mode and checks
// that nothing panics, every error is a *ParseError (the input is in
// memory, so there are no I/O errors), each error is followed by progress,
// and the typed accessors never panic on what the reader returns.
func FuzzRead(f *testing.F) {
	var seeds []string
	if dir, err := pubdata.Dir("htcondor"); err == nil {
		seeds, _ = filepath.Glob(filepath.Join(dir, "*.log"))
	}
	fixtures, _ := filepath.Glob("testdata/*.log")
	seeds = append(seeds, fixtures...)
	seeds = append(seeds, "testdata/events.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f.Add(b)
		// A cut inside an event: a log still being written.
		f.Add(b[:len(b)*2/3])
	}
	f.Add([]byte("000 (001.000.000) 12/31 23:59:59 x\n...\n001 (001.000.000) 01/01 00:00:00 y\n...\n"))
	f.Add([]byte("012 (-1.-1.-1) 2024-02-30 00:00:00.5Z Job was held.\n\tCode x Subcode\n"))
	f.Add([]byte("<xml/>"))
	f.Add([]byte("{\"EventTypeNumber\": 5, \"EventTime\": \"bad\"}"))
	if b, err := os.ReadFile("testdata/hold_release.log"); err == nil {
		var z bytes.Buffer // a gzip-compressed rotation
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		f.Add(z.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The reader takes a whole event at once when it can and goes
		// line by line otherwise, and carries a partial event over from
		// one input chunk to the next. Line by line, fed one byte at a
		// time, and in small chunks, it must give the same events and
		// errors.
		limit := len(data) + 2 // more than that means no progress, caught below
		if d := traceDiff(data, limit); d != "" {
			t.Fatal(d)
		}
		for _, fold := range []bool{false, true} {
			for _, lenient := range []bool{false, true} {
				r := eventlog.NewReader(strings.NewReader(string(data)))
				r.Year, r.FoldJobAds, r.Lenient, r.Strict = 2024, fold, lenient, !lenient
				for i := 0; ; i++ {
					if i > len(data)+2 {
						t.Fatalf("more events or errors than input bytes: the reader does not progress")
					}
					ev, err := r.Read()
					if err == io.EOF {
						break
					}
					if err != nil {
						var pe *eventlog.ParseError
						if !errors.As(err, &pe) {
							t.Fatalf("error %v (%T) is not a *ParseError", err, err)
						}
						// Lenient skips damaged events; a log refused as a
						// whole (XML, compressed unreadably) is still an error.
						if lenient && !errors.Is(err, eventlog.ErrXML) && !errors.Is(err, eventlog.ErrCompressed) {
							t.Fatalf("lenient reader returned %v", err)
						}
						continue
					}
					touch(t, &ev)
				}
			}
		}
	})
}

// traceConfigs are ways to read a log that must give the same events and
// errors as reading it whole with the defaults.
var traceConfigs = []struct {
	name  string
	input func(io.Reader) io.Reader
	set   func(*eventlog.Reader)
}{
	{"line by line", same, (*eventlog.Reader).LineByLine},
	{"one byte at a time", iotest.OneByteReader, nil},
	{"half reads, chunks 64-512", iotest.HalfReader, func(r *eventlog.Reader) { r.SetChunks(64, 512, 1) }},
	{"chunks 256-4096", same, func(r *eventlog.Reader) { r.SetChunks(256, 4096, 16) }},
	{"half reads, chunks 1000-16000", iotest.HalfReader, func(r *eventlog.Reader) { r.SetChunks(1000, 16000, 100) }},
}

func same(r io.Reader) io.Reader { return r }

// traceDiff reads data whole with the defaults and in each of traceConfigs,
// strict and lenient with 028 events folded, and describes the first
// difference ("" when there is none).
func traceDiff(data []byte, limit int) string {
	for _, lenient := range []bool{false, true} {
		mode := func(r *eventlog.Reader) { r.Lenient, r.FoldJobAds = lenient, lenient }
		whole := readTrace(bytes.NewReader(data), limit, mode)
		for _, c := range traceConfigs {
			got := readTrace(c.input(bytes.NewReader(data)), limit, func(r *eventlog.Reader) {
				mode(r)
				if c.set != nil {
					c.set(r)
				}
			})
			if d := diff(whole, got); d != "" {
				return fmt.Sprintf("lenient %v: whole vs %s differ (-whole +%[2]s):\n%s", lenient, c.name, d)
			}
		}
	}
	return ""
}

// readTrace reads r to the end, or for at most limit events and errors,
// and describes every event and error once all are read (so a body written
// over by a later read shows); set, if not nil, configures the reader
// first.
func readTrace(r io.Reader, limit int, set func(*eventlog.Reader)) []string {
	rd := eventlog.NewReader(r)
	rd.Year, rd.Location = 2024, time.UTC
	if set != nil {
		set(rd)
	}
	var evs []eventlog.Event
	var errs []error
	for len(evs) <= limit {
		ev, err := rd.Read()
		if err == io.EOF {
			break
		}
		evs, errs = append(evs, ev), append(errs, err)
		if err != nil && !errors.As(err, new(*eventlog.ParseError)) {
			break
		}
	}
	out := make([]string, 0, len(evs)+1)
	for i, ev := range evs {
		if errs[i] != nil {
			out = append(out, "error: "+errs[i].Error())
			continue
		}
		out = append(out, fmt.Sprintf("%v %v %v line %d %q %q", ev.Code, ev.Job, ev.Time, ev.Line, ev.Body, ev.Ad))
	}
	return append(out, fmt.Sprintf("damaged %d", rd.Damaged()))
}

// touch calls every accessor that applies to ev; errors must be typed.
func touch(t *testing.T, ev *eventlog.Event) {
	var err error
	switch ev.Code {
	case eventlog.Submit:
		_, err = ev.SubmitInfo()
	case eventlog.Execute:
		_, err = ev.ExecuteInfo()
	case eventlog.Evicted:
		_, err = ev.EvictInfo()
	case eventlog.Terminated, eventlog.NodeTerminated:
		_, err = ev.TerminateInfo()
	case eventlog.ImageSize:
		_, err = ev.ImageSizeInfo()
	case eventlog.ShadowException:
		_, err = ev.ShadowExceptionInfo()
	case eventlog.Aborted:
		_, err = ev.AbortInfo()
	case eventlog.Held:
		_, err = ev.HoldInfo()
	case eventlog.Released:
		_, err = ev.ReleaseInfo()
	case eventlog.Disconnected, eventlog.ReconnectFailed:
		_, err = ev.DisconnectInfo()
	case eventlog.Reconnected:
		_, err = ev.ReconnectInfo()
	case eventlog.AttributeUpdate:
		_, err = ev.AttributeUpdateInfo()
	case eventlog.JobAdInformation:
		_, err = ev.JobAdInfo()
	case eventlog.FileTransfer:
		_, err = ev.TransferInfo()
	case eventlog.Generic:
		eventlog.ParseGlobalHeader(*ev)
	}
	if ev.Ad != "" && ev.Code != eventlog.JobAdInformation {
		if _, aerr := ev.JobAdInfo(); aerr != nil && !errors.Is(aerr, eventlog.ErrBody) {
			t.Fatalf("folded ad error %v is not ErrBody", aerr)
		}
	}
	if err != nil && !errors.Is(err, eventlog.ErrBody) {
		t.Fatalf("%v accessor error %v does not wrap ErrBody", ev.Code, err)
	}
}
