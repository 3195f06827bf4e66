package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// jsonState reads HTCondor's JSON event-log format: one ClassAd per event
// written by ClassAdJsonUnParser (write_user_log.cpp), objects one after the
// other, or a JSON array of them. It splits the stream into top-level
// objects itself (braces outside strings) instead of decoding it as one
// JSON value, so that a damaged object costs that object only: HTCondor
// starts every event's "{" at the beginning of a line, so a "{" at a line
// start inside an unfinished object ends it as damaged and starts the next.
type jsonState struct {
	br   *bufio.Reader
	done bool
	n    int // objects read
	line int // current line, from 1
	buf  []byte
	// pending is a "{" at a line start already consumed, opening the next
	// object.
	pending bool
}

func newJSONState(r *bufio.Reader, _ bool) *jsonState {
	return &jsonState{br: r, line: 1}
}

// maxEventSize caps one event of a log (16 MiB, as one line of the
// classic format), classic or JSON: a larger event is a ParseError wrapping
// ErrEventTooLarge (skipped and counted when Lenient), read through without
// keeping it, so one event cannot take unbounded memory.
const maxEventSize = 16 << 20

// ErrEventTooLarge: an event longer than 16 MiB.
var ErrEventTooLarge = errors.New("event larger than the size cap")

func (r *Reader) maxEvent() int {
	if r.maxEventSize > 0 {
		return r.maxEventSize
	}
	return maxEventSize
}

func (r *Reader) nextJSON() (Event, error) {
	js := r.json
	for {
		ev, err := r.readJSON(js)
		if err != nil && err != io.EOF && r.Lenient {
			if _, ok := err.(*ParseError); ok {
				r.damaged++
				continue
			}
		}
		return ev, err
	}
}

// readJSON returns the next event. A damaged object, garbage between
// objects and an oversized event are ParseErrors after which reading can
// go on (Lenient counts and skips them).
func (r *Reader) readJSON(js *jsonState) (Event, error) {
	if js.done {
		return Event{}, io.EOF
	}
	start, err := js.seek()
	if err == io.EOF {
		js.done = true
		return Event{}, io.EOF
	}
	if err != nil {
		return Event{}, r.jsonErr(js, start, err)
	}
	js.n++
	raw, err := js.object(r.maxEvent())
	if err != nil {
		return Event{}, r.jsonErr(js, start, err)
	}
	return r.jsonEvent(js.n, raw)
}

// jsonErr wraps err as a ParseError at line; an I/O error (not a format
// one) ends the stream.
func (r *Reader) jsonErr(js *jsonState, line int, err error) error {
	if !errors.Is(err, ErrJSON) && !errors.Is(err, ErrEventTooLarge) {
		js.done = true
		if err == io.ErrUnexpectedEOF {
			return r.perr(line, 0, fmt.Errorf("%w: input ended inside an event", ErrJSON))
		}
		return err
	}
	return r.perr(line, 0, err)
}

// seek skips white space, commas and the brackets of the array form to the
// next "{", which it consumes, and returns its line. Anything else is
// garbage: it is skipped to the next "{" at a line start and reported.
func (js *jsonState) seek() (int, error) {
	if js.pending {
		js.pending = false
		return js.line, nil
	}
	garbage, at := false, 0
	lineStart := true
	for {
		c, err := js.br.ReadByte()
		if err != nil {
			if garbage {
				return at, fmt.Errorf("%w: text outside any event", ErrJSON)
			}
			return js.line, err
		}
		switch {
		case c == '{' && (!garbage || lineStart):
			if garbage {
				js.pending = true
				return at, fmt.Errorf("%w: text outside any event", ErrJSON)
			}
			return js.line, nil
		case c == '\n':
			js.line++
			lineStart = true
			continue
		case !garbage && (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '[' || c == ']'):
		default:
			if !garbage {
				garbage, at = true, js.line
			}
		}
		lineStart = false
	}
}

// object reads the rest of an object whose "{" seek consumed.
func (js *jsonState) object(max int) ([]byte, error) {
	js.buf = append(js.buf[:0], '{')
	depth, inStr, esc := 1, false, false
	lineStart := false
	tooLarge := false
	for {
		c, err := js.br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%w: input ended inside an event", ErrJSON)
			}
			return nil, err
		}
		if c == '{' && lineStart && !inStr {
			// The next event begins: this one was cut short.
			js.pending = true
			return nil, fmt.Errorf("%w: event not closed before the next one", ErrJSON)
		}
		lineStart = c == '\n'
		if c == '\n' {
			js.line++
		}
		if !tooLarge {
			js.buf = append(js.buf, c)
			if len(js.buf) > max {
				tooLarge = true
				js.buf = js.buf[:0]
			}
		}
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				if tooLarge {
					return nil, fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, max)
				}
				return js.buf, nil
			}
		}
	}
}

func (r *Reader) jsonEvent(n int, raw []byte) (Event, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var attrs map[string]any
	if err := dec.Decode(&attrs); err != nil {
		return Event{}, r.perr(n, 0, fmt.Errorf("%w: event is not an object: %v", ErrJSON, err))
	}
	ev := Event{Line: n, Body: string(raw), attrs: attrs}
	if dec.More() {
		return Event{}, r.perr(n, 0, fmt.Errorf("%w: text after the event's closing brace", ErrJSON))
	}
	code, ok := attrInt(attrs, "EventTypeNumber")
	if !ok {
		return Event{}, r.perr(n, 0, fmt.Errorf("%w: missing EventTypeNumber", ErrJSON))
	}
	if r.Strict && !Code(code).known() {
		return Event{}, r.perr(n, 0, ErrUnknownCode)
	}
	ev.Code = Code(code)
	ev.Job.Cluster, ok = attrInt(attrs, "Cluster")
	if !ok {
		ev.Job.Cluster = -1
	}
	if ev.Job.Proc, ok = attrInt(attrs, "Proc"); !ok {
		ev.Job.Proc = -1
	}
	if ev.Job.Subproc, ok = attrInt(attrs, "Subproc"); !ok {
		ev.Job.Subproc = -1
	}
	s, _ := attrs["EventTime"].(string)
	t, err := parseISOTime(s, r.loc())
	if err == nil && (t.Year() < minYear || t.Year() > maxYear) {
		err = ErrDate
	}
	if err != nil {
		return Event{}, r.perr(n, 0, fmt.Errorf("%w: EventTime %q", ErrDate, s))
	}
	ev.Time = t
	return ev, nil
}

func attrInt(attrs map[string]any, key string) (int, bool) {
	v, ok := attrs[key].(json.Number)
	if !ok {
		return 0, false
	}
	i, err := v.Int64()
	if err != nil || i < -1<<31 || i > 1<<31-1 {
		return 0, false
	}
	return int(i), true
}

func attrString(attrs map[string]any, key string) string {
	s, _ := attrs[key].(string)
	return s
}

// parseISOTime parses the EventTime of HTCondor's JSON and XML formats:
// "2006-01-02T15:04:05" with optional fraction and zone.
func parseISOTime(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.ParseInLocation("2006-01-02T15:04:05.999999999", s, loc)
}
