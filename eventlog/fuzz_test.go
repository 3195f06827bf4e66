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
		// The reader takes a fast path when a whole event is buffered and
		// goes line by line otherwise; fed one byte at a time it always
		// goes line by line. Both must give the same events and errors.
		limit := len(data) + 2 // more than that means no progress, caught below
		whole := readTrace(strings.NewReader(string(data)), limit)
		if d := diff(whole, readTrace(iotest.OneByteReader(strings.NewReader(string(data))), limit)); d != "" {
			t.Fatalf("buffered vs one-byte reads differ (-buffered +one-byte):\n%s", d)
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
						if lenient && !errors.Is(err, eventlog.ErrXML) {
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

// readTrace reads r to the end, or for at most limit events and errors,
// and describes every event and error.
func readTrace(r io.Reader, limit int) []string {
	rd := eventlog.NewReader(r)
	rd.Year, rd.Location = 2024, time.UTC
	var out []string
	for len(out) <= limit {
		ev, err := rd.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			out = append(out, "error: "+err.Error())
			if !errors.As(err, new(*eventlog.ParseError)) {
				return out
			}
			continue
		}
		out = append(out, fmt.Sprintf("%v %v %v line %d %q %q", ev.Code, ev.Job, ev.Time, ev.Line, ev.Body, ev.Ad))
	}
	return out
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
