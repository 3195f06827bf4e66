package eventlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

func event(id int) string {
	return fmt.Sprintf("000 (%d.000.000) 2025-01-02 10:%02d:00 Job submitted from host: <10.0.0.1:9618>\n...\n", id, id)
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
