package eventlog_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/google/go-cmp/cmp"
)

func event(id int) string {
	return fmt.Sprintf("000 (%d.000.000) 2025-01-02 10:%02d:00 Job submitted from host: <10.0.0.1:9618>\n...\n", id, id%60)
}

// TestFollow: a writer appends events (one of them in two pieces, with a
// pause between), rotates the log (rename, then a new file) and appends
// more; Follow yields every event once, in order, and stops when the
// context ends (issue 14 item 7).
func TestFollow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "EventLog")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	step := make(chan int, 1) // the reader tells the writer how far it got
	writerDone := make(chan error, 1)
	go func() {
		writerDone <- func() error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			e2 := event(2)
			if _, err := f.WriteString(event(1) + e2[:30]); err != nil {
				return err
			}
			// Wait until the reader has event 1: it now holds half of 2.
			if n := <-step; n != 1 {
				return fmt.Errorf("reader at %d", n)
			}
			time.Sleep(50 * time.Millisecond) // a writer that pauses mid-event
			if _, err := f.WriteString(e2[30:]); err != nil {
				return err
			}
			f.Close()
			if n := <-step; n != 2 {
				return fmt.Errorf("reader at %d", n)
			}
			// Rotation: the old file is renamed and a new one created.
			if err := os.Rename(path, path+".1"); err != nil {
				return err
			}
			return os.WriteFile(path, []byte(event(3)+event(4)), 0o644)
		}()
	}()
	var got []int
	for ev, err := range eventlog.Follow(ctx, path, eventlog.WithPoll(eventlog.FollowOptions{Options: eventlog.Options{Location: time.UTC}}, 5*time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Job.Cluster)
		if len(got) <= 2 {
			step <- len(got)
		}
		if len(got) == 4 {
			break
		}
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("followed %v, want [1 2 3 4]", got)
	}

	// Cancelling ends the stream without an error.
	cctx, ccancel := context.WithCancel(context.Background())
	defer ccancel()
	n := 0
	for _, err := range eventlog.Follow(cctx, path, eventlog.WithPoll(eventlog.FollowOptions{}, 5*time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			ccancel()
		}
	}
	if n != 2 {
		t.Errorf("%d events before cancel, want 2", n)
	}
}

// TestFollowStopAfter: with StopAfter the stream ends after that long
// without new data; an event left unfinished is a ParseError.
func TestFollowStopAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "user.log")
	e8 := event(8)
	if err := os.WriteFile(path, []byte(event(7)+e8[:strings.IndexByte(e8, '\n')+1]), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []int
	var errs []string
	start := time.Now()
	for ev, err := range eventlog.Follow(context.Background(), path, eventlog.WithPoll(eventlog.FollowOptions{StopAfter: 100 * time.Millisecond}, 5*time.Millisecond)) {
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		ids = append(ids, ev.Job.Cluster)
	}
	if fmt.Sprint(ids) != "[7]" || len(errs) != 1 || !strings.Contains(errs[0], "truncated") {
		t.Errorf("events %v, errors %q; want [7] and one truncated event", ids, errs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("StopAfter 100 ms took %v", d)
	}
}

// TestFollowRotateTruncate: a writer appends, rotates (several times
// between two looks, some rotated files ending in half an event) and
// truncates in place at random, 600 rotations in all; Follow delivers
// every complete event exactly once, in the order written, and one
// *ParseError per half-written rotated file (issue 26 item 10:
// 515 of 3,000 events came through).
func TestFollowRotateTruncate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "EventLog")
	if err := os.WriteFile(path+".99999", []byte(event(0)), 0o644); err != nil { // older than the stream
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(26, 10))
	const rotations = 600
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var delivered atomic.Int64
	type result struct {
		written  []int // complete events, in order
		partials int   // rotated files ending in half an event
		err      error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		res.err = func() error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer func() { f.Close() }()
			id := 1000
			write := func(n int) error {
				var b strings.Builder
				for range n {
					b.WriteString(event(id))
					res.written = append(res.written, id)
					id++
				}
				_, err := f.WriteString(b.String())
				return err
			}
			// Rotations before Follow first looks would be older than the
			// stream: start once it has the first event.
			if err := write(1); err != nil {
				return err
			}
			for delivered.Load() == 0 {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				time.Sleep(time.Millisecond)
			}
			for rot := 0; rot < rotations; {
				if err := write(1 + rng.IntN(8)); err != nil {
					return err
				}
				switch op := rng.IntN(10); {
				case op < 7: // rotate: HTCondor renames, then creates anew
					if rng.IntN(4) == 0 {
						e := event(id)
						if _, err := f.WriteString(e[:10+rng.IntN(len(e)-14)]); err != nil {
							return err
						}
						id++
						res.partials++
					}
					f.Close()
					if err := os.Rename(path, fmt.Sprintf("%s.%d", path, 99998-rot)); err != nil {
						return err
					}
					if f, err = os.Create(path); err != nil {
						return err
					}
					rot++
				case op < 8: // truncate in place once the reader has it all
					for delivered.Load() < int64(len(res.written)) {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						time.Sleep(time.Millisecond)
					}
					if err := f.Truncate(0); err != nil {
						return err
					}
					if _, err := f.Seek(0, io.SeekStart); err != nil {
						return err
					}
					// Often write more than was there, so the file is longer
					// than what was read when the reader next looks.
					if err := write(1 + rng.IntN(20)); err != nil {
						return err
					}
				default: // a pause, so the reader sometimes catches up
					time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				}
			}
			return write(3)
		}()
		done <- res
	}()
	var got []int
	var errs []error
	var res *result
	for ev, err := range eventlog.Follow(ctx, path, eventlog.WithPoll(eventlog.FollowOptions{Options: eventlog.Options{Location: time.UTC}}, 2*time.Millisecond)) {
		if err != nil {
			errs = append(errs, err)
		} else {
			got = append(got, ev.Job.Cluster)
			delivered.Add(1)
		}
		if res == nil {
			select {
			case r := <-done:
				res = &r
			default:
			}
		}
		if res != nil && len(got) >= len(res.written) {
			break
		}
	}
	if res == nil {
		r := <-done
		res = &r
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	if d := cmp.Diff(res.written, got); d != "" {
		t.Errorf("%d of %d events delivered; order or set differs (-written +delivered):\n%s", len(got), len(res.written), d)
	}
	// A half-written event is cut in its body (ErrTruncated) or in its
	// header line (ErrHeader).
	truncated := 0
	for _, err := range errs {
		if errors.Is(err, eventlog.ErrTruncated) || errors.Is(err, eventlog.ErrHeader) {
			truncated++
		} else {
			t.Errorf("unexpected error: %v", err)
		}
	}
	if truncated != res.partials {
		t.Errorf("%d errors for half-written events, want one per half-written rotated file (%d)", truncated, res.partials)
	}
}
