package eventlog

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/crosscluster/crosscluster/internal/decompress"
)

// JobID identifies a job within one schedd: cluster.proc.subproc. Events that
// belong to no job, such as the global-log header, carry -1.-1.-1.
type JobID struct {
	Cluster, Proc, Subproc int
}

// String formats id as HTCondor does in event headers, "%03d.%03d.%03d".
func (id JobID) String() string {
	return fmt.Sprintf("%03d.%03d.%03d", id.Cluster, id.Proc, id.Subproc)
}

// isJob reports whether id names a job (all three parts non-negative).
func (id JobID) isJob() bool { return id.Cluster >= 0 && id.Proc >= 0 && id.Subproc >= 0 }

// Event is one HTCondor job event.
//
// Body holds the event's text exactly as HTCondor's formatBody wrote it, with
// line ends normalised to "\n": the remainder of the header line after the
// date (for example "Job was held.\n"), then each body line, without the
// "..." terminator. The typed accessors (HoldInfo, TerminateInfo, ...) parse
// Body on demand, so a reader that only needs codes, ids and times never pays
// for them. A classic-text Body is not a copy: it shares the block of input
// it was read from (up to 1 MiB) with the events around it, and keeping one
// event keeps that block; strings.Clone the Body of the few events kept from
// a large log.
type Event struct {
	Code Code
	Job  JobID
	Time time.Time
	// Line is the 1-based line of the event header in its input. For JSON
	// logs it is the 1-based index of the event instead.
	Line int
	Body string
	// Ad holds the ClassAd lines ("Name = value\n" each) of the 028
	// job-ad-information event that followed this event, when the reader
	// folds them (FoldJobAds).
	Ad string
	// File names the file the event came from; set by Files, empty otherwise.
	File string
	// attrs holds every attribute of an event read from a JSON log (whose
	// Body is the event's JSON text); nil for
	// the classic text format.
	attrs map[string]any
}

// Errors a Reader reports inside a *ParseError.
var (
	ErrHeader            = errors.New(`expected event header "NNN (cluster.proc.subproc) date time"`)
	ErrDate              = errors.New("impossible date or time") // including years outside minYear–maxYear
	ErrUnknownCode       = errors.New("event number not defined by HTCondor")
	ErrMissingTerminator = errors.New(`expected "..." before the next event header`)
	ErrTruncated         = errors.New(`truncated event: input ended before "..."`)
	ErrLineTooLong       = errors.New("line longer than 16 MiB")
	ErrXML               = errors.New("XML event logs are not supported; write the log in the classic or JSON format")
	ErrJSON              = errors.New("malformed JSON event")
	ErrBody              = errors.New("malformed event body")
	ErrCompressed        = errors.New("compressed event log that cannot be read (bzip2, xz, zstd, or a damaged gzip header); decompress it first")
)

// ParseError reports bad input: where (File if known, Line, Column when
// known, 1-based) and what was expected (Err, one of the Err* values above,
// possibly wrapped).
type ParseError struct {
	File   string
	Line   int
	Column int
	Err    error
}

func (e *ParseError) Error() string {
	var b []byte
	b = append(b, "eventlog: "...)
	if e.File != "" {
		b = append(b, e.File...)
		b = append(b, ':')
	}
	b = append(b, "line "...)
	b = strconv.AppendInt(b, int64(e.Line), 10)
	if e.Column > 0 {
		b = append(b, ", column "...)
		b = strconv.AppendInt(b, int64(e.Column), 10)
	}
	b = append(b, ": "...)
	b = append(b, e.Err.Error()...)
	return string(b)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

const maxLine = 16 << 20

// Options are the settings of a Reader; Files applies them to each file.
type Options struct {
	// Year is the year of the first date written without one
	// ("MM/DD HH:MM:SS"). When zero, the first such date takes its year from
	// a global-log header's ctime or else from the file's modification
	// time (the year that puts it at or before that time; now for a
	// stream that is not a file). Every later yearless date takes the year
	// that puts it nearest the log's running clock (the latest time read so
	// far), so a writer that logs an old-year event after the first
	// new-year ones (two writers around New Year) keeps it in the old year
	// without moving the clock back, and a log over several years advances
	// a year at each turn. 02/29 takes the nearest leap year.
	Year int
	// fileTime is the file's modification time (set by Files), the last
	// resort for the year; when zero, the current time is used, as
	// HTCondor does.
	fileTime time.Time
	// Location is the zone of dates without "Z" or an offset; nil means
	// time.Local.
	Location *time.Location
	// Lenient makes Read skip damaged events instead of returning a
	// *ParseError; Damaged counts them.
	Lenient bool
	// Strict makes an event number HTCondor does not define an error
	// (ErrUnknownCode); otherwise such events are returned with their raw
	// body like any other.
	Strict bool
	// FoldJobAds attaches each 028 job-ad-information event, which
	// EVENT_LOG_JOB_AD_INFORMATION_ATTRS makes HTCondor write after every
	// event of the global event log, to the event of the same job before it
	// (Event.Ad) instead of returning it; otherwise 028 events are returned
	// like any other.
	FoldJobAds bool
	// maxEventSize overrides the 16 MiB cap on one event (tests).
	maxEventSize int
}

// Reader reads events from an HTCondor event log in the classic text format
// (the default, "NNN (c.p.s) date time ..." events terminated by "...") or
// the JSON format, detected from the first non-blank byte. XML logs are
// refused with ErrXML. A gzip-compressed log (a rotated EventLog.1.gz) is
// decompressed as it is read; other compressed formats (bzip2, xz, zstd)
// are refused with ErrCompressed.
//
// Set the options before the first call to Read.
type Reader struct {
	Options
	// File names the input in ParseErrors.
	File string

	br      *bufio.Reader // format detection and JSON
	in      textInput     // the classic text, read through br
	line    int
	lineOff int  // offset in in.buf of the last line nextLine returned; -1 for stash and long
	lineLen int  // its length without the line end
	slow    bool // line by line only, no fastBody (tests)
	buf     []byte
	long    []byte
	stash   []byte
	stashed bool
	resync  bool
	started bool
	refused bool
	json    *jsonState
	damaged int

	clock   int64 // Unix seconds of the latest event time; 0 before the first
	clocked bool

	block []byte // see text

	peek    Event
	peekErr error
	hasPeek bool
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Damaged returns how many damaged events a lenient Reader skipped.
func (r *Reader) Damaged() int { return r.damaged }

// Read returns the next event. At the end of the input it returns io.EOF.
// Bad input gives a *ParseError; the next Read resumes at the following
// event. Errors from the underlying reader are returned as they are.
func (r *Reader) Read() (Event, error) {
	ev, err := r.next()
	if err == nil && r.FoldJobAds && ev.Code != JobAdInformation {
		r.fold(&ev)
	}
	return ev, err
}

func (r *Reader) fold(ev *Event) {
	nx, err := r.next()
	if err == nil && nx.Code == JobAdInformation && nx.Job == ev.Job {
		ev.Ad = adLines(nx.Body)
		return
	}
	r.peek, r.peekErr, r.hasPeek = nx, err, true
}

func (r *Reader) next() (Event, error) {
	if r.hasPeek {
		r.hasPeek = false
		return r.peek, r.peekErr
	}
	if r.refused {
		return Event{}, io.EOF
	}
	if !r.started {
		r.started = true
		if err := r.detect(); err != nil {
			// An XML log is refused as a whole.
			r.refused = true
			return Event{}, err
		}
		r.in.src = r.br
		if r.in.max == 0 {
			r.in.next, r.in.max, r.in.minRead = firstChunk, maxChunk, r.br.Size()
		}
	}
	if r.json != nil {
		return r.nextJSON()
	}
	for {
		ev, err := r.readText()
		if err != nil && r.Lenient && isParseError(err) {
			r.damaged++
			if errors.Is(err, ErrTruncated) {
				return Event{}, io.EOF
			}
			continue
		}
		return ev, err
	}
}

// ReadAll reads events until io.EOF or the first error and returns those
// read; io.EOF is not an error.
func (r *Reader) ReadAll() ([]Event, error) { return readAll(r.Read) }

// readAll calls read until io.EOF or the first error; io.EOF is not an error.
func readAll(read func() (Event, error)) ([]Event, error) {
	var out []Event
	for {
		ev, err := read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// all iterates over read's events: a *ParseError is yielded and iteration
// goes on; any other error is yielded last.
func all(read func() (Event, error)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := read()
			if err == io.EOF {
				return
			}
			if !yield(ev, err) {
				return
			}
			if err != nil && !isParseError(err) {
				return
			}
		}
	}
}

func isParseError(err error) bool {
	var pe *ParseError
	return errors.As(err, &pe)
}

func (r *Reader) perr(line, col int, err error) *ParseError {
	return &ParseError{File: r.File, Line: line, Column: col, Err: err}
}

// detect reads a gzip-compressed log through (refusing other compressed
// formats), skips a UTF-8 byte order mark (a log saved by a Windows editor)
// and looks at the first non-blank byte to tell the format.
func (r *Reader) detect() error {
	br, err := decompress.Gzip(r.br, cmp.Or(r.File, "input"), "log")
	if err != nil {
		// decompress's sentence, under this package's sentinel.
		return r.perr(1, 1, fmt.Errorf("%w%s", ErrCompressed, strings.TrimPrefix(err.Error(), decompress.ErrUnsupported.Error())))
	}
	r.br = br
	if b, _ := r.br.Peek(3); string(b) == "\ufeff" {
		r.br.Discard(3)
	}
	for i := 1; i <= 4096; i++ {
		b, err := r.br.Peek(i)
		if len(b) < i {
			if err == io.EOF {
				return nil
			}
			return err
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			r.json = newJSONState(r.br, c == '[')
			return nil
		case '<':
			return r.perr(1, i, ErrXML)
		default:
			return nil
		}
	}
	return nil
}

// nextLine returns the next line without its line end. The slice is valid
// until the next call.
func (r *Reader) nextLine() ([]byte, error) {
	r.lineOff = -1
	if r.stashed {
		r.stashed = false
		return r.stash, nil
	}
	line, off, err := r.in.readSlice()
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, _, err = r.in.readSlice()
			r.long = append(r.long, line...)
			if len(r.long) > maxLine {
				r.line++
				for err == bufio.ErrBufferFull { // skip the rest of the line
					_, _, err = r.in.readSlice()
				}
				r.resync = true // and the rest of its event
				return nil, r.perr(r.line, 0, ErrLineTooLong)
			}
		}
		line, off = r.long, -1
	}
	if len(line) == 0 {
		if err == nil {
			err = io.EOF
		}
		return nil, err
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	r.line++
	if line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	r.lineOff, r.lineLen = off, len(line)
	return line, nil
}

func (r *Reader) unread(line []byte) {
	r.stash = append(r.stash[:0], line...)
	r.stashed = true
}

func isSync(line []byte) bool {
	return len(line) == 3 && line[0] == '.' && line[1] == '.' && line[2] == '.'
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

func (r *Reader) readText() (Event, error) {
	var h header
	var hline int
	for {
		line, err := r.nextLine()
		if err != nil {
			return Event{}, err
		}
		if isSync(line) {
			r.resync = false
			continue
		}
		if r.resync || isBlank(line) {
			if r.resync && looksLikeHeader(line) {
				if col, _ := parseHeader(line, &h); col == 0 {
					r.resync = false
					hline = r.line
					break
				}
			}
			continue
		}
		hline = r.line
		col, herr := parseHeader(line, &h)
		if col != 0 {
			r.resync = true
			return Event{}, r.perr(hline, col, herr)
		}
		break
	}
	if !r.slow {
		if body, ok := r.fastBody(&h); ok {
			return r.finish(&h, hline, body)
		}
	}
	// The header line's rest starts the body.
	r.buf = append(r.buf[:0], h.rest...)
	r.buf = append(r.buf, '\n')
	for {
		line, err := r.nextLine()
		if err == io.EOF {
			return Event{}, r.perr(r.line, 0, ErrTruncated)
		}
		if err != nil {
			return Event{}, err
		}
		if isSync(line) {
			break
		}
		if looksLikeHeader(line) {
			var h2 header
			if col, _ := parseHeader(line, &h2); col == 0 {
				r.unread(line)
				return Event{}, r.perr(r.line, 1, ErrMissingTerminator)
			}
		}
		if len(r.buf)+len(line) >= r.maxEvent() {
			// Skip to the event's end without keeping it: the cap bounds
			// the memory one event can take, as for JSON logs.
			r.resync = true
			return Event{}, r.perr(hline, 0, fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, r.maxEvent()))
		}
		r.buf = append(r.buf, line...)
		r.buf = append(r.buf, '\n')
	}
	return r.finish(&h, hline, r.text(r.buf, false, nil))
}

// fastBody is the common case of readText: the body lines and the "..."
// line follow the header line, with "\n" line ends and no header-like line
// among them. It returns the body, consumed, reading more input while the
// event is incomplete (up to the input's limit). When the header line ends
// in "\n" in the input's chunk, the body (the header line's rest, its
// "\n", the body lines) is a string over the chunk, not a copy. Otherwise
// it consumes nothing but the input it read, h.rest is moved with it, and
// readText goes line by line.
func (r *Reader) fastBody(h *header) (string, bool) {
	in := &r.in
	// In the chunk, the header line is buf[r.lineOff:in.r]: contiguous when
	// a single "\n" ends it.
	restOff := -1
	from := in.r
	if r.lineOff >= 0 {
		from = r.lineOff
		if r.lineOff+r.lineLen+1 == in.r {
			restOff = r.lineOff + r.lineLen - len(h.rest)
		}
	}
	n, lines := 0, 0 // body bytes (whole lines) and lines scanned
	for {
		buf := in.buf[in.r:in.w]
		for {
			k := bytes.IndexByte(buf[n:], '\n')
			if k < 0 {
				break
			}
			line := buf[n : n+k]
			if isSync(line) {
				var s string
				if restOff >= 0 {
					s = unsafe.String(&in.buf[restOff], len(h.rest)+1+n)
					in.kept = true
				} else {
					s = r.text(h.rest, true, buf[:n])
				}
				in.r += n + k + 1
				r.line += lines + 1
				return s, true
			}
			if looksLikeHeader(line) || (k > 0 && line[k-1] == '\r') {
				return "", false
			}
			n += k + 1
			lines++
			if len(h.rest)+1+n >= r.maxEvent() {
				return "", false
			}
		}
		if in.err != nil || in.w-from >= in.limit() {
			return "", false
		}
		shift := in.fill(from)
		from -= shift
		if r.lineOff >= 0 {
			r.lineOff -= shift
			h.rest = in.buf[r.lineOff+r.lineLen-len(h.rest) : r.lineOff+r.lineLen]
			if restOff >= 0 {
				restOff -= shift
			}
		}
	}
}

// textBlock is the size of the blocks the bodies fastBody cannot leave in
// the input (read line by line, with "\r\n" line ends, or after a stashed
// or long header line) are copied into: one allocation per block instead of
// one per event. Keeping one such event keeps its block (16 KiB) alive.
const textBlock = 16 << 10

// text returns a, then "\n" when nl, then b, as a string. Short texts are
// copied into the reader's current block, which is only ever appended to,
// so the strings made from it never change.
func (r *Reader) text(a []byte, nl bool, b []byte) string {
	n := len(a) + len(b)
	if nl {
		n++
	}
	if n == 0 {
		return ""
	}
	if n > textBlock/8 {
		out := make([]byte, 0, n)
		out = append(out, a...)
		if nl {
			out = append(out, '\n')
		}
		return unsafe.String(&append(out, b...)[0], n)
	}
	if cap(r.block)-len(r.block) < n {
		r.block = make([]byte, 0, textBlock)
	}
	start := len(r.block)
	r.block = append(r.block, a...)
	if nl {
		r.block = append(r.block, '\n')
	}
	r.block = append(r.block, b...)
	return unsafe.String(&r.block[start], n)
}

func (r *Reader) finish(h *header, hline int, body string) (Event, error) {
	if r.Strict && !h.code.known() {
		return Event{}, r.perr(hline, 1, ErrUnknownCode)
	}
	ev := Event{Code: h.code, Job: h.job, Line: hline, Body: body}
	// A global-log header's ctime starts the clock for yearless dates.
	if ev.Code == codeGeneric && !ev.Job.isJob() && r.Year == 0 && !r.clocked {
		if gh, ok := parseGlobalHeader(ev); ok && !gh.Ctime.IsZero() {
			r.clock, r.clocked = gh.Ctime.Unix(), true
		}
	}
	t, err := r.eventTime(h)
	if err != nil {
		return Event{}, r.perr(hline, h.dateCol, err)
	}
	ev.Time = t
	return ev, nil
}

func (r *Reader) loc() *time.Location {
	if r.Location != nil {
		return r.Location
	}
	return time.Local
}

var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// The years an event may carry. HTCondor writes Unix times, so nothing
// before 1970 is real; jobs, tensors and file overlaps compare times as
// Unix nanoseconds, which end in April 2262. A date outside is bad input
// (ErrDate), not a time to compute with.
const (
	minYear = 1970
	maxYear = 2261
)

func (r *Reader) eventTime(h *header) (time.Time, error) {
	loc := r.loc()
	switch {
	case h.utc:
		loc = time.UTC
	case h.hasOffset:
		loc = time.FixedZone("", h.offset)
	}
	at := func(year int) (time.Time, bool) {
		if year < minYear || year > maxYear || h.day > daysInMonth(year, h.month) {
			return time.Time{}, false
		}
		return time.Date(year, time.Month(h.month), h.day, h.hour, h.min, h.sec, h.nsec, loc), true
	}
	if h.year >= 0 {
		t, ok := at(h.year)
		if !ok {
			return time.Time{}, ErrDate
		}
		r.advance(t)
		return t, nil
	}
	if !r.clocked {
		// The first yearless date: Options.Year, or the year that puts it
		// at or before fileTime (now when unset).
		year := r.Year
		if year == 0 {
			ref := r.fileTime
			if ref.IsZero() {
				ref = time.Now()
			}
			year = ref.In(loc).Year()
			if t, ok := at(year); ok && t.After(ref) {
				year--
			} else if !ok && h.month == 2 && h.day == 29 {
				// The nearest leap year not after ref.
				for year > minYear && daysInMonth(year, 2) < 29 {
					year--
				}
			}
		}
		t, ok := at(year)
		if !ok {
			return time.Time{}, ErrDate
		}
		r.clock, r.clocked = t.Unix(), true
		return t, nil
	}
	// Later dates: the year nearest the running clock. Within half a year
	// of the clock in the clock's year, no other year is nearer; otherwise
	// the candidates are the years around it (and, for 02/29, the leap
	// years within four of it).
	clock := time.Unix(r.clock, 0).In(loc)
	year := clock.Year()
	if t, ok := at(year); ok {
		if d := t.Unix() - r.clock; d >= -halfYear && d <= halfYear {
			r.advance(t)
			return t, nil
		}
	}
	var best time.Time
	bestD := int64(-1)
	span := 1
	if h.month == 2 && h.day == 29 {
		span = 4
	}
	for y := year - span; y <= year+span; y++ {
		t, ok := at(y)
		if !ok {
			continue
		}
		d := t.Unix() - r.clock
		if d < 0 {
			d = -d
		}
		if bestD < 0 || d < bestD {
			best, bestD = t, d
		}
	}
	if bestD < 0 {
		return time.Time{}, ErrDate
	}
	r.advance(best)
	return best, nil
}

// halfYear is half of a 365-day year, in seconds.
const halfYear = 365 * 24 * 3600 / 2

// advance moves the running clock forward to t; an earlier t (a late write)
// leaves it.
func (r *Reader) advance(t time.Time) {
	if u := t.Unix(); !r.clocked || u > r.clock {
		r.clock, r.clocked = u, true
	}
}

// daysInMonth returns the days of month m (1–12) in year.
func daysInMonth(year, m int) int {
	if m == 2 && !(year%4 == 0 && (year%100 != 0 || year%400 == 0)) {
		return 28
	}
	return daysIn[m]
}

type header struct {
	code                       Code
	job                        JobID
	year                       int // -1 when the date has none
	month, day, hour, min, sec int
	nsec                       int
	utc, hasOffset             bool
	offset                     int // seconds east of UTC
	dateCol                    int
	rest                       []byte
}

func looksLikeHeader(b []byte) bool {
	return len(b) > 5 && isDigit(b[0]) && isDigit(b[1]) && isDigit(b[2]) && b[3] == ' ' && b[4] == '('
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseHeader parses "NNN (c.p.s) date time[.frac][Z|±hh:mm] rest". It
// returns the 1-based column of the first problem, or 0 on success.
func parseHeader(b []byte, h *header) (int, error) {
	if !looksLikeHeader(b) {
		return 1, ErrHeader
	}
	h.code = Code(int(b[0]-'0')*100 + int(b[1]-'0')*10 + int(b[2]-'0'))
	i := 5
	var ok bool
	if h.job.Cluster, i, ok = parseInt(b, i); !ok || i >= len(b) || b[i] != '.' {
		return i + 1, ErrHeader
	}
	if h.job.Proc, i, ok = parseInt(b, i+1); !ok || i >= len(b) || b[i] != '.' {
		return i + 1, ErrHeader
	}
	if h.job.Subproc, i, ok = parseInt(b, i+1); !ok || i >= len(b) || b[i] != ')' {
		return i + 1, ErrHeader
	}
	i++
	if i >= len(b) || b[i] != ' ' {
		return i + 1, ErrHeader
	}
	i++
	h.dateCol = i + 1
	d := b[i:]
	switch {
	case len(d) >= 5 && d[2] == '/':
		m, ok1 := num2(d, 0)
		dd, ok2 := num2(d, 3)
		if !ok1 || !ok2 {
			return i + 1, ErrHeader
		}
		h.year, h.month, h.day = -1, m, dd
		i += 5
	case len(d) >= 10 && d[4] == '-' && d[7] == '-':
		y1, ok1 := num2(d, 0)
		y2, ok2 := num2(d, 2)
		m, ok3 := num2(d, 5)
		dd, ok4 := num2(d, 8)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return i + 1, ErrHeader
		}
		h.year, h.month, h.day = y1*100+y2, m, dd
		i += 10
	default:
		return i + 1, ErrHeader
	}
	if i >= len(b) || (b[i] != ' ' && b[i] != 'T') {
		return i + 1, ErrHeader
	}
	i++
	t := b[i:]
	if len(t) < 8 || t[2] != ':' || t[5] != ':' {
		return i + 1, ErrHeader
	}
	hh, ok1 := num2(t, 0)
	mm, ok2 := num2(t, 3)
	ss, ok3 := num2(t, 6)
	if !ok1 || !ok2 || !ok3 {
		return i + 1, ErrHeader
	}
	if h.month < 1 || h.month > 12 || h.day < 1 || h.day > 31 || hh > 23 || mm > 59 || ss > 60 {
		return h.dateCol, ErrDate
	}
	h.hour, h.min, h.sec = hh, mm, ss
	i += 8
	h.nsec, h.utc, h.hasOffset, h.offset = 0, false, false, 0
	if i < len(b) && b[i] == '.' {
		i++
		scale := 100000000
		n := 0
		for i < len(b) && isDigit(b[i]) {
			if scale > 0 {
				h.nsec += int(b[i]-'0') * scale
				scale /= 10
			}
			i++
			n++
		}
		if n == 0 {
			return i + 1, ErrHeader
		}
	}
	if i < len(b) {
		switch b[i] {
		case 'Z':
			h.utc = true
			i++
		case '+', '-':
			o := b[i+1:]
			if len(o) >= 5 && o[2] == ':' {
				oh, ok1 := num2(o, 0)
				om, ok2 := num2(o, 3)
				if !ok1 || !ok2 {
					return i + 1, ErrHeader
				}
				h.hasOffset = true
				h.offset = oh*3600 + om*60
				if b[i] == '-' {
					h.offset = -h.offset
				}
				i += 6
			}
		}
	}
	switch {
	case i == len(b):
		h.rest = b[i:]
	case b[i] == ' ':
		h.rest = b[i+1:]
	default:
		return i + 1, ErrHeader
	}
	return 0, nil
}

func num2(b []byte, i int) (int, bool) {
	if !isDigit(b[i]) || !isDigit(b[i+1]) {
		return 0, false
	}
	return int(b[i]-'0')*10 + int(b[i+1]-'0'), true
}

// parseInt parses an optionally negative decimal integer of at most nine
// digits starting at b[i] and returns it and the index after it.
func parseInt(b []byte, i int) (int, int, bool) {
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start := i
	n := 0
	for i < len(b) && isDigit(b[i]) {
		n = n*10 + int(b[i]-'0')
		i++
	}
	if i == start || i-start > 10 || n > 1<<31-1 {
		return 0, i, false
	}
	if neg {
		n = -n
	}
	return n, i, true
}

// adLines strips the "Job ad information event triggered." line from a 028
// body, leaving its attribute lines.
func adLines(body string) string {
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		return body[i+1:]
	}
	return ""
}
