package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// jsonState reads HTCondor's JSON event-log format: one ClassAd per event
// written by ClassAdJsonUnParser (write_user_log.cpp), objects one after the
// other, or a JSON array of them.
type jsonState struct {
	dec     *json.Decoder
	started bool
	array   bool
	done    bool
	n       int
}

func newJSONState(r *bufio.Reader, array bool) *jsonState {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return &jsonState{dec: dec, array: array}
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

func (r *Reader) readJSON(js *jsonState) (Event, error) {
	if js.done {
		return Event{}, io.EOF
	}
	if !js.started {
		js.started = true
		if js.array {
			if _, err := js.dec.Token(); err != nil { // the '['
				js.done = true
				return Event{}, r.perr(1, 0, fmt.Errorf("%w: %v", ErrJSON, err))
			}
		}
	}
	if js.array && !js.dec.More() {
		js.done = true
		return Event{}, io.EOF
	}
	var raw json.RawMessage
	if err := js.dec.Decode(&raw); err != nil {
		js.done = true
		if err == io.EOF && !js.array {
			return Event{}, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Event{}, r.perr(js.n+1, 0, fmt.Errorf("%w: %v", ErrJSON, err))
	}
	js.n++
	return r.jsonEvent(js.n, raw)
}

func (r *Reader) jsonEvent(n int, raw json.RawMessage) (Event, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var attrs map[string]any
	if err := dec.Decode(&attrs); err != nil {
		return Event{}, r.perr(n, 0, fmt.Errorf("%w: event is not an object: %v", ErrJSON, err))
	}
	ev := Event{Line: n, Body: string(raw), Attrs: attrs}
	code, ok := attrInt(attrs, "EventTypeNumber")
	if !ok {
		return Event{}, r.perr(n, 0, fmt.Errorf("%w: missing EventTypeNumber", ErrJSON))
	}
	if r.Strict && !Code(code).Known() {
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
