package eventlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"time"
)

// FollowOptions configure Follow. The zero value polls every 250 ms and
// follows until the context ends.
type FollowOptions struct {
	// Options apply to the Reader (Year, Location, Lenient, ...).
	Options
	// poll is the pause between looks for new data; 0 means 250 ms
	// (tests set it shorter).
	poll time.Duration
	// StopAfter ends the stream after this long without new data, like
	// the stop_after of HTCondor's JobEventLog.events; 0 means never.
	StopAfter time.Duration
}

// Follow yields the events of the log at path as a writer appends them, in
// the manner of HTCondor's JobEventLog: it reads what is there, then waits
// for more, holding a partial last event until the writer completes it.
// When the log is rotated (path renamed and a new file created at path),
// it finishes the old file and goes on with the new one from its start.
// It ends when ctx is done (no error) or after StopAfter without new data;
// an event cut short at that point is a *ParseError (ErrTruncated). A
// path that does not exist yet is waited for.
func Follow(ctx context.Context, path string, opt FollowOptions) iter.Seq2[Event, error] {
	if opt.poll <= 0 {
		opt.poll = 250 * time.Millisecond
	}
	return func(yield func(Event, error) bool) {
		fr := &followReader{ctx: ctx, path: path, opt: opt}
		defer fr.close()
		r := NewReader(fr)
		r.Options = opt.Options
		r.File = path
		for {
			ev, err := r.Read()
			if err == io.EOF || (err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))) {
				return
			}
			if err == nil {
				ev.File = path
			} else if !isParseError(err) { // a read error of the file Follow opened
				err = fmt.Errorf("eventlog: %w", err)
			}
			if !yield(ev, err) {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					return
				}
			}
		}
	}
}

// followReader is an io.Reader over a growing, rotating file: at the end of
// the data it waits for more instead of returning io.EOF.
type followReader struct {
	ctx  context.Context
	path string
	opt  FollowOptions
	f    *os.File
	idle time.Time // when new data last arrived
}

func (fr *followReader) close() {
	if fr.f != nil {
		fr.f.Close()
	}
}

func (fr *followReader) Read(p []byte) (int, error) {
	if fr.idle.IsZero() {
		fr.idle = time.Now()
	}
	for {
		if err := fr.ctx.Err(); err != nil {
			return 0, err
		}
		if fr.f == nil {
			f, err := os.Open(fr.path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return 0, err
			}
			fr.f = f
		}
		if fr.f != nil {
			n, err := fr.f.Read(p)
			if n > 0 {
				fr.idle = time.Now()
				return n, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
			// At the end of the open file: a rotation left it behind when
			// path now names another file.
			if cur, err := os.Stat(fr.path); err == nil {
				if old, err := fr.f.Stat(); err == nil && !os.SameFile(cur, old) {
					fr.f.Close()
					fr.f = nil
					continue
				}
			}
		}
		if fr.opt.StopAfter > 0 && time.Since(fr.idle) >= fr.opt.StopAfter {
			return 0, io.EOF
		}
		t := time.NewTimer(fr.opt.poll)
		select {
		case <-fr.ctx.Done():
			t.Stop()
			return 0, fr.ctx.Err()
		case <-t.C:
		}
	}
}
