package eventlog

import (
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// globalHeader is the header HTCondor writes at the top of every global
// event-log file: a 008 event of job -1.-1.-1 whose text is
// "Global JobLog: ctime=... id=... sequence=... size=... events=...
// offset=... event_off=... max_rotation=... creator_name=<...>"
// (WriteUserLogHeader::GenerateEvent in write_user_log.cpp).
type globalHeader struct {
	Ctime       time.Time // creation time of the file (ctime, Unix seconds)
	ID          string    // unique id of the file
	Sequence    int       // rotation sequence number
	Size        int64     // size of the previous file
	Events      int64     // events in the previous files
	Offset      int64     // byte offset of this file in the whole log
	EventOffset int64     // event offset of this file in the whole log
	MaxRotation int       // EVENT_LOG_MAX_ROTATIONS
	CreatorName string    // the daemon that wrote it, without the <>
}

// parseGlobalHeader reports whether ev is a global-log header and returns
// its fields. Fields missing from the text keep their zero values.
func parseGlobalHeader(ev Event) (globalHeader, bool) {
	const prefix = "Global JobLog:"
	if ev.Code != codeGeneric || ev.Job.isJob() || !strings.HasPrefix(ev.Body, prefix) {
		return globalHeader{}, false
	}
	line := ev.Body[len(prefix):]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	var h globalHeader
	if i := strings.Index(line, " creator_name=<"); i >= 0 {
		c := line[i+len(" creator_name=<"):]
		if j := strings.LastIndexByte(c, '>'); j >= 0 {
			c = c[:j]
		}
		h.CreatorName = c
		line = line[:i]
	}
	for f := range strings.FieldsSeq(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "ctime":
			h.Ctime = time.Unix(n, 0)
		case "id":
			h.ID = v
		case "sequence":
			h.Sequence = int(n)
		case "size":
			h.Size = n
		case "events":
			h.Events = n
		case "offset":
			h.Offset = n
		case "event_off":
			h.EventOffset = n
		case "max_rotation":
			h.MaxRotation = int(n)
		}
	}
	return h, true
}

// SortRotated returns the files of rotated event logs ordered oldest first,
// as HTCondor's rotation names them (doRotation in write_user_log.cpp): for
// each base name, base.N, ..., base.2, base.1 (or base.old), then base
// itself. Files with different base names are kept apart, sorted by base.
// A compressed rotation (base.N.gz) sorts as base.N. paths is not modified.
func SortRotated(paths []string) []string {
	type key struct {
		base string
		rank int // larger is older
	}
	keyOf := func(p string) key {
		p = strings.TrimSuffix(p, ".gz") // EventLog.1.gz is EventLog.1
		ext := filepath.Ext(p)
		if ext == ".old" {
			return key{strings.TrimSuffix(p, ext), 0}
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(ext, ".")); err == nil && len(ext) > 1 && n >= 0 {
			return key{strings.TrimSuffix(p, ext), n}
		}
		return key{p, -1}
	}
	out := slices.Clone(paths)
	slices.SortStableFunc(out, func(a, b string) int {
		ka, kb := keyOf(a), keyOf(b)
		if c := strings.Compare(ka.base, kb.base); c != 0 {
			return c
		}
		return kb.rank - ka.rank
	})
	return out
}

// Files reads a set of event-log files as one stream (a concatenated global
// event log, CGEL): the files in the order given (see SortRotated), events
// repeated at a file boundary removed. An overlap is the longest run of
// events at the start of a file, global headers aside, equal (code, job,
// time and text) to the last events of the previous file, up to 4096
// events. Each event's File names its file.
type Files struct {
	opt Options // NewFiles's, for each file's Reader
	// overlapWindow bounds the overlap searched at each boundary; zero
	// means 4096 (tests set it smaller).
	overlapWindow int

	paths   []string
	idx     int
	f       *os.File
	r       *Reader
	damaged int
	removed int
	ring    []Event       // the last job events of the file being read, a ring of window()
	ringN   int           // job events put in ring since the file opened
	prev    []fingerprint // the last job events of the previous file, oldest first
	pending []pendingEvent

	last     map[string]time.Time // latest job-event time per source
	warnings []string
	// firstPending: the open file's first job event is still to come from
	// its reader (nothing of it was queued at open).
	firstPending bool
}

// sourceOf names the log a file belongs to: the file's base name without a
// rotation suffix (".1", ".2", ..., ".old", each also with ".gz"), so that
// the rotations of one schedd's log share a source and the logs of two
// schedds do not.
func sourceOf(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".gz")
	ext := filepath.Ext(base)
	if ext == ".old" {
		return strings.TrimSuffix(base, ext)
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(ext, ".")); err == nil && len(ext) > 1 && n >= 0 {
		return strings.TrimSuffix(base, ext)
	}
	return base
}

// Warnings returns what the set found suspicious so far: a file of a source
// whose first event is more than an hour older than the last event read
// from the same source (rotated files given newest first, which changes the
// jobs' histories and labels; SortRotated orders them oldest first).
func (fs *Files) Warnings() []string { return slices.Clone(fs.warnings) }

// backInTime checks the first job event of a newly opened file against the
// source's latest time, and records every job event's time.
func (fs *Files) backInTime(ev *Event, first bool) {
	if !ev.Job.isJob() || ev.Time.IsZero() {
		return
	}
	src := sourceOf(ev.File)
	if fs.last == nil {
		fs.last = map[string]time.Time{}
	}
	prev, ok := fs.last[src]
	if first && ok && ev.Time.Before(prev.Add(-time.Hour)) {
		fs.warnings = append(fs.warnings, fmt.Sprintf("%s starts at %s, %s before the last event read from %s (%s): files out of order? (eventlog.SortRotated orders them oldest first)",
			ev.File, ev.Time.Format(time.RFC3339), prev.Sub(ev.Time).Round(time.Minute), src, prev.Format(time.RFC3339)))
	}
	if !ok || ev.Time.After(prev) {
		fs.last[src] = ev.Time
	}
}

type fingerprint struct {
	code Code
	job  JobID
	t    int64
	body uint64
}

type pendingEvent struct {
	ev  Event
	err error
}

// NewFiles returns a Files reading paths in the given order, each file with
// a Reader set up by opt; when opt.Year is zero, each file's modification
// time dates its yearless events.
func NewFiles(paths []string, opt Options) *Files {
	return &Files{opt: opt, paths: slices.Clone(paths)}
}

// Removed returns how many events were dropped as overlap so far.
func (fs *Files) Removed() int { return fs.removed }

// Damaged returns how many damaged events lenient readers skipped so far.
func (fs *Files) Damaged() int {
	n := fs.damaged
	if fs.r != nil {
		n += fs.r.Damaged()
	}
	return n
}

// Close closes the file being read.
func (fs *Files) Close() error {
	if fs.f == nil {
		return nil
	}
	err := fs.f.Close()
	fs.f, fs.r = nil, nil
	return err
}

func (fs *Files) window() int {
	if fs.overlapWindow > 0 {
		return fs.overlapWindow
	}
	return 4096
}

func fingerprintOf(ev *Event) fingerprint {
	h := fnv.New64a()
	io.WriteString(h, ev.Body)
	return fingerprint{ev.Code, ev.Job, ev.Time.UnixNano(), h.Sum64()}
}

func (fs *Files) remember(ev *Event) {
	if !ev.Job.isJob() {
		return
	}
	if fs.ring == nil {
		fs.ring = make([]Event, fs.window())
	}
	fs.ring[fs.ringN%len(fs.ring)] = *ev
	fs.ringN++
}

// tail returns the fingerprints of the ring's events, oldest first.
func (fs *Files) tail() []fingerprint {
	if fs.ringN == 0 {
		return nil
	}
	w := len(fs.ring)
	n := min(fs.ringN, w)
	out := make([]fingerprint, 0, n)
	for k := fs.ringN - n; k < fs.ringN; k++ {
		out = append(out, fingerprintOf(&fs.ring[k%w]))
	}
	return out
}

// open opens the next file and queues its first events with any overlap
// removed.
func (fs *Files) open() error {
	path := fs.paths[fs.idx]
	fs.idx++
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("eventlog: %w", err)
	}
	opt := fs.opt
	if opt.Year == 0 && opt.fileTime.IsZero() {
		if st, err := f.Stat(); err == nil {
			opt.fileTime = st.ModTime()
		}
	}
	r := NewReader(f)
	r.Options = opt
	r.File = path
	fs.f, fs.r = f, r
	fs.prev, fs.ringN = fs.tail(), 0
	fs.firstPending = true
	if len(fs.prev) == 0 {
		return nil
	}
	// Read as many job events as the previous tail holds.
	var q []pendingEvent
	jobEvents := 0
	for jobEvents < len(fs.prev) {
		ev, err := r.Read()
		if err == io.EOF {
			break
		}
		ev.File = path
		q = append(q, pendingEvent{ev, err})
		if err != nil {
			break
		}
		if ev.Job.isJob() {
			jobEvents++
		}
	}
	// The job events of q as fingerprints, with their positions in q.
	var fp []fingerprint
	var pos []int
	for i := range q {
		if q[i].err != nil {
			break
		}
		if q[i].ev.Job.isJob() {
			fp = append(fp, fingerprintOf(&q[i].ev))
			pos = append(pos, i)
		}
	}
	k := 0
	if len(fp) > 0 {
		for i := range fs.prev {
			n := len(fs.prev) - i
			if n <= len(fp) && fs.prev[i] == fp[0] && slices.Equal(fs.prev[i:], fp[:n]) {
				k = n
				break
			}
		}
	}
	drop := make(map[int]bool, k)
	for _, p := range pos[:k] {
		drop[p] = true
	}
	fs.removed += k
	first := true
	for i, pe := range q {
		if pe.err == nil {
			fs.remember(&q[i].ev)
		}
		if !drop[i] {
			if pe.err == nil && pe.ev.Job.isJob() {
				fs.backInTime(&q[i].ev, first)
				first = false
			}
			fs.pending = append(fs.pending, pe)
		}
	}
	fs.firstPending = first
	return nil
}

// read returns the next event of the set; io.EOF after the last file.
func (fs *Files) read() (Event, error) {
	for {
		if len(fs.pending) > 0 {
			pe := fs.pending[0]
			fs.pending = fs.pending[1:]
			return pe.ev, pe.err
		}
		if fs.r == nil {
			if fs.idx >= len(fs.paths) {
				return Event{}, io.EOF
			}
			if err := fs.open(); err != nil {
				return Event{}, err
			}
			continue
		}
		ev, err := fs.r.Read()
		if err == io.EOF {
			fs.damaged += fs.r.Damaged()
			if cerr := fs.Close(); cerr != nil {
				return Event{}, cerr
			}
			continue
		}
		if err != nil {
			if !isParseError(err) { // a read error of a file Files opened
				err = fmt.Errorf("eventlog: %w", err)
			}
			return Event{}, err
		}
		ev.File = fs.r.File
		fs.remember(&ev)
		if ev.Job.isJob() {
			fs.backInTime(&ev, fs.firstPending)
			fs.firstPending = false
		}
		return ev, nil
	}
}

// ReadAll reads the remaining events until the end or the first error and
// closes the open file.
func (fs *Files) ReadAll() ([]Event, error) {
	defer fs.Close()
	return readAll(fs.read)
}

// All returns an iterator over the remaining events: a *ParseError is
// yielded and iteration goes on with the next event; any other error is
// yielded last.
func (fs *Files) All() iter.Seq2[Event, error] { return all(fs.read) }
