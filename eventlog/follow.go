package eventlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FollowOptions configure Follow. The zero value polls every 250 ms and
// follows until the context ends.
type FollowOptions struct {
	// Options apply to each file's Reader (Year, Location, Lenient, ...).
	Options
	// StopAfter ends the stream after this long without new data, like
	// the stop_after of HTCondor's JobEventLog.events; 0 means never.
	StopAfter time.Duration

	// poll is the pause between looks for new data; 0 means 250 ms
	// (tests set it shorter).
	poll time.Duration
}

// Follow yields the events of the log at path as a writer appends them, in
// the manner of HTCondor's JobEventLog: it reads what is there, then waits
// for more, holding a partial last event until the writer completes it.
//
// Files are tracked by identity (device and inode), not by name. When the
// log is rotated (path renamed, as HTCondor renames EventLog to
// EventLog.1 or EventLog.old, and a new file created at path), Follow
// reads the old file to its end, then every rotated file that appeared
// since it started and that it has not read (path.N ... path.1, path.old,
// oldest first), so several rotations between two looks lose nothing,
// then the new file from its start. A rotated file that ends in a
// half-written event yields a *ParseError (ErrTruncated) naming that file,
// and the next file starts clean. A log truncated in place (shorter than
// what was read, or rewritten under the bytes last read) is read again
// from its start. Each event's File names the file it was read from.
//
// It ends when ctx is done (no error) or after StopAfter without new data;
// an event cut short at that point is a *ParseError (ErrTruncated). A path
// that does not exist yet is waited for. Rotated files that existed when
// Follow started are not read; a rotated file removed before Follow got to
// it cannot be read.
func Follow(ctx context.Context, path string, opt FollowOptions) iter.Seq2[Event, error] {
	if opt.poll <= 0 {
		opt.poll = 250 * time.Millisecond
	}
	return func(yield func(Event, error) bool) {
		fl := &follower{ctx: ctx, path: path, opt: opt, idle: time.Now()}
		defer fl.close()
		fl.seen = fl.rotated() // older rotations are not this stream's
		for {
			seg, err := fl.next()
			if err != nil {
				if !isStop(err) {
					yield(Event{}, fmt.Errorf("eventlog: %w", err))
				}
				return
			}
			if seg == nil {
				return
			}
			if !fl.read(seg, yield) {
				return
			}
		}
	}
}

func isStop(err error) bool {
	return err == io.EOF || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// follower is Follow's state: the file being read and the files done.
type follower struct {
	ctx  context.Context
	path string
	opt  FollowOptions
	cur  *segment      // the live file, open
	seen []os.FileInfo // files read to their end, and rotations older than the stream
	idle time.Time     // when new data last arrived
	stop bool          // StopAfter ran out
	todo []*segment    // rotated files to read before the live one
}

// segment is one pass over one file: from off to the file's end (final)
// or, for the live file, until it is rotated away, truncated or the stream
// stops.
type segment struct {
	fl   *follower
	f    *os.File
	name string
	info os.FileInfo
	off  int64
	// head and tail are the first and last bytes read, to notice the file
	// was truncated and written again past the offset between two looks.
	head, tail []byte
	check      [tailLen]byte
	final      bool // rotated away: read to the end, then io.EOF
	// live: opened as the file at path, so it may have been truncated
	// and written again (even after it was rotated away).
	live bool
	// again is set when the file was truncated in place: the next segment
	// reads it from the start.
	again bool
}

func (fl *follower) close() {
	if fl.cur != nil {
		fl.cur.f.Close()
	}
	for _, s := range fl.todo {
		s.f.Close()
	}
}

// read yields the events of one segment; false when the consumer stopped.
func (fl *follower) read(seg *segment, yield func(Event, error) bool) bool {
	r := NewReader(seg)
	r.Options = fl.opt.Options
	r.File = seg.name
	for {
		ev, err := r.Read()
		if err == io.EOF {
			return true
		}
		if err != nil && isStop(err) {
			return false
		}
		if err == nil {
			ev.File = seg.name
		} else if !isParseError(err) { // a read error of the file Follow opened
			err = fmt.Errorf("eventlog: %w", err)
		}
		if !yield(ev, err) {
			return false
		}
		if err != nil && !isParseError(err) {
			return false
		}
	}
}

// next returns the segment to read next: a rotated file not read yet, the
// live file again after a truncation, or the live file once the rotated
// ones are done; nil when the stream ends.
func (fl *follower) next() (*segment, error) {
	if fl.stop {
		return nil, nil
	}
	if err := fl.ctx.Err(); err != nil {
		return nil, err
	}
	if cur := fl.cur; cur != nil {
		switch {
		case cur.again:
			if _, err := cur.f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			cur.off, cur.head, cur.tail, cur.again = 0, nil, nil, false
			return cur, nil
		case cur.final:
			fl.seen = append(fl.seen, cur.info)
			cur.f.Close()
			fl.cur = nil
		default:
			return nil, nil // stopped while live
		}
	}
	if len(fl.todo) > 0 {
		s := fl.todo[0]
		fl.todo = fl.todo[1:]
		fl.seen = append(fl.seen, s.info)
		return s, nil
	}
	// Open the live file; rotated files that appeared meanwhile, and are
	// not the live one, come first, oldest first.
	for {
		f, err := os.Open(fl.path)
		if errors.Is(err, os.ErrNotExist) {
			if err := fl.wait(); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if fl.isSeen(info) {
			// Rotated away and read after we listed: look again.
			f.Close()
			if err := fl.wait(); err != nil {
				return nil, err
			}
			continue
		}
		for _, r := range fl.rotated() {
			if os.SameFile(r, info) {
				// The file just opened was rotated away meanwhile: the
				// rotated files after it are newer, read after it.
				break
			}
			if fl.isSeen(r) {
				continue
			}
			p := filepath.Join(filepath.Dir(fl.path), r.Name())
			rf, err := os.Open(p)
			if err != nil {
				continue // removed since: nothing left to read
			}
			if st, err := rf.Stat(); err != nil || !os.SameFile(st, r) {
				rf.Close() // renamed again since the listing: the next look finds it
				continue
			}
			fl.todo = append(fl.todo, &segment{fl: fl, f: rf, name: p, info: r, final: true})
		}
		if len(fl.todo) > 0 {
			f.Close()
			return fl.next()
		}
		fl.cur = &segment{fl: fl, f: f, name: fl.path, info: info, live: true}
		return fl.cur, nil
	}
}

func (fl *follower) isSeen(info os.FileInfo) bool {
	for _, s := range fl.seen {
		if os.SameFile(s, info) {
			return true
		}
	}
	return false
}

// rotated lists the rotated files of path that exist now, oldest first:
// path.N, ..., path.1, path.old (HTCondor's rotation names).
//
// A directory listing taken while files are renamed into the directory
// may miss some of them, an older one while showing a newer one. So the
// directory is listed twice: every rename that completed before the
// first listing ended is in the second, in particular every rotation
// older than the newest file the first listing shows; files newer than
// that are left to a later look.
func (fl *follower) rotated() []os.FileInfo {
	first := fl.scan()
	if len(first) == 0 {
		return nil
	}
	newest := first[len(first)-1]
	names := SortRotated(append(first, fl.scan()...))
	var out []os.FileInfo
	for i, p := range names {
		if i > 0 && p == names[i-1] {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, st)
		}
		if p == newest {
			break
		}
	}
	return out
}

// scan lists the rotated names of path, oldest first.
func (fl *follower) scan() []string {
	dir, base := filepath.Split(fl.path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); (err == nil && n >= 0 && rest[0] != '+') || rest == "old" {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	return SortRotated(names)
}

// wait pauses for one poll; io.EOF when StopAfter ran out.
func (fl *follower) wait() error {
	if fl.opt.StopAfter > 0 && time.Since(fl.idle) >= fl.opt.StopAfter {
		fl.stop = true
		return io.EOF
	}
	t := time.NewTimer(fl.opt.poll)
	defer t.Stop()
	select {
	case <-fl.ctx.Done():
		return fl.ctx.Err()
	case <-t.C:
		return nil
	}
}

// tailLen is how many of the last bytes read are checked against the file
// to notice it was truncated and written again past them.
const tailLen = 64

// Read reads the segment's file; at its end a live file waits for more,
// and the segment ends (io.EOF) when the file was rotated away and read to
// its end, truncated in place, or the stream stopped.
func (s *segment) Read(p []byte) (int, error) {
	fl := s.fl
	for {
		if err := fl.ctx.Err(); err != nil {
			return 0, err
		}
		if s.live && s.rewritten() {
			s.again = true
			return 0, io.EOF
		}
		n, err := s.f.Read(p)
		if n > 0 && s.live && s.moved() {
			// Truncated and written again between the check above and
			// the read: what was read may be the new content's middle.
			s.again = true
			return 0, io.EOF
		}
		if n > 0 {
			s.off += int64(n)
			if len(s.head) < tailLen {
				s.head = append(s.head, p[:min(n, tailLen-len(s.head))]...)
			}
			s.tail = append(s.tail, p[:n]...)
			if len(s.tail) > tailLen {
				s.tail = append(s.tail[:0], s.tail[len(s.tail)-tailLen:]...)
			}
			fl.idle = time.Now()
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if s.final {
			return 0, io.EOF
		}
		// At the end of the live file: a rotation left it behind when
		// path now names another file; read what was appended before the
		// writer moved on, then end the segment.
		if st, err := os.Stat(fl.path); err == nil && !os.SameFile(st, s.info) {
			s.final = true
			continue
		}
		if err := fl.wait(); err != nil {
			return 0, err
		}
	}
}

// rewritten reports whether the file no longer holds what was read: it is
// shorter than the offset, or its first bytes or its bytes just before the
// offset changed (it was truncated and written past the offset between two
// looks; the first bytes hold the first event's job id and time, which a
// new writer's first event rarely repeats).
func (s *segment) rewritten() bool {
	st, err := s.f.Stat()
	if err != nil {
		return false
	}
	if st.Size() < s.off {
		return true
	}
	return s.moved()
}

// moved reports whether the file's first bytes or its bytes just before
// the offset differ from those read.
func (s *segment) moved() bool {
	return s.changed(0, s.head) || s.changed(s.off-int64(len(s.tail)), s.tail)
}

// changed reports whether the file's bytes at off differ from want.
func (s *segment) changed(off int64, want []byte) bool {
	if len(want) == 0 {
		return false
	}
	buf := s.check[:len(want)]
	n, _ := s.f.ReadAt(buf, off)
	return !bytes.Equal(buf[:n], want)
}
