package eventlog

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The typed accessors below parse Event.Body following the writers in
// htcondor/htcondor src/condor_utils/condor_event.cpp (formatBody of each
// event class). Like HTCondor's own readers they require the first line and
// take the optional lines they recognise, so older body texts (for example
// "Job was aborted by the user." or a held event without a Code line) read
// fine. Calling an accessor on an event of another code is a caller mistake
// and panics. A body that does not match gives a *ParseError wrapping
// ErrBody whose Line is the body line at fault.

// splitLine returns the first line of s and the rest after its "\n".
func splitLine(s string) (string, string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func (e *Event) bodyErr(lineOffset int, format string, args ...any) error {
	return &ParseError{File: e.File, Line: e.Line + lineOffset, Err: fmt.Errorf("%w: %s: %s", ErrBody, e.Code, fmt.Sprintf(format, args...))}
}

func (e *Event) must(c Code, method string) {
	if e.Code != c {
		panic("eventlog: " + method + " called on an event of another code")
	}
}

// SubmitInfo is the body of a 000 event.
type SubmitInfo struct {
	Host  string   // "Job submitted from host: <...>"
	Notes []string // the indented note lines (DAG node, user notes, warnings)
}

// SubmitInfo parses a 000 (ULOG_SUBMIT) event.
func (e *Event) SubmitInfo() (SubmitInfo, error) {
	e.must(Submit, "SubmitInfo")
	if e.attrs != nil {
		return SubmitInfo{Host: attrString(e.attrs, "SubmitHost")}, nil
	}
	first, rest := splitLine(e.Body)
	h, ok := strings.CutPrefix(first, "Job submitted from host: ")
	if !ok {
		return SubmitInfo{}, e.bodyErr(0, `expected "Job submitted from host: "`)
	}
	s := SubmitInfo{Host: strings.TrimSpace(h)}
	for rest != "" {
		var l string
		l, rest = splitLine(rest)
		if t := strings.TrimSpace(l); t != "" {
			s.Notes = append(s.Notes, t)
		}
	}
	return s, nil
}

// ExecuteInfo is the body of a 001 event.
type ExecuteInfo struct {
	Host string // "Job executing on host: <...>"
	Slot string // "SlotName: ..." when present
	// Props holds the "Name = value" lines of the slot's properties, as written.
	Props []Attr
}

// Attr is one "Name = value" ClassAd line; Value is the unparsed expression.
type Attr struct{ Name, Value string }

// ExecuteInfo parses a 001 (ULOG_EXECUTE) event.
func (e *Event) ExecuteInfo() (ExecuteInfo, error) {
	e.must(Execute, "ExecuteInfo")
	if e.attrs != nil {
		return ExecuteInfo{Host: attrString(e.attrs, "ExecuteHost"), Slot: attrString(e.attrs, "SlotName")}, nil
	}
	first, rest := splitLine(e.Body)
	h, ok := strings.CutPrefix(first, "Job executing on host: ")
	if !ok {
		return ExecuteInfo{}, e.bodyErr(0, `expected "Job executing on host: "`)
	}
	x := ExecuteInfo{Host: strings.TrimSpace(h)}
	for rest != "" {
		var l string
		l, rest = splitLine(rest)
		t := strings.TrimSpace(l)
		if s, ok := strings.CutPrefix(t, "SlotName: "); ok {
			x.Slot = s
		} else if n, v, ok := strings.Cut(t, " = "); ok {
			x.Props = append(x.Props, Attr{n, v})
		}
	}
	return x, nil
}

// Usage is one rusage line: "Usr D HH:MM:SS, Sys D HH:MM:SS".
type Usage struct{ User, System time.Duration }

func parseDHMS(s string) (time.Duration, bool) {
	// "D HH:MM:SS"
	d, hms, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return 0, false
	}
	days, err := strconv.Atoi(d)
	if err != nil {
		return 0, false
	}
	p := strings.Split(hms, ":")
	if len(p) != 3 {
		return 0, false
	}
	var v [3]int
	for i := range p {
		if v[i], err = strconv.Atoi(p[i]); err != nil {
			return 0, false
		}
	}
	return time.Duration(((days*24+v[0])*60+v[1])*60+v[2]) * time.Second, true
}

// parseUsage parses "Usr 0 00:00:06, Sys 0 00:00:00  -  Run Remote Usage"
// and returns the usage and its label ("Run Remote Usage").
func parseUsage(l string) (Usage, string, bool) {
	t := strings.TrimSpace(l)
	v, label, ok := strings.Cut(t, "  -  ")
	if !ok {
		return Usage{}, "", false
	}
	u, s, ok := strings.Cut(v, ", ")
	if !ok {
		return Usage{}, "", false
	}
	u, ok1 := strings.CutPrefix(u, "Usr ")
	s, ok2 := strings.CutPrefix(s, "Sys ")
	if !ok1 || !ok2 {
		return Usage{}, "", false
	}
	ud, ok1 := parseDHMS(u)
	sd, ok2 := parseDHMS(s)
	return Usage{ud, sd}, label, ok1 && ok2
}

// Resource is one row of the "Partitionable Resources" table of 004 and 005
// events. Columns left blank in the log are NaN.
type Resource struct {
	Name                      string // "Cpus", "Disk (KB)", "Memory (MB)", ...
	Usage, Request, Allocated float64
	Assigned                  string // the "Assigned" column of newer HTCondor, as written
}

// TerminateInfo is the body of a 005 (or 015) event, and the termination
// part of a 004 event that requeued the job.
type TerminateInfo struct {
	Normal                                                             bool
	ReturnValue                                                        int    // when Normal
	Signal                                                             int    // when not Normal
	CoreFile                                                           string // "(1) Corefile in: ..." when not Normal
	RunRemote, RunLocal, TotalRemote, TotalLocal                       Usage
	RunBytesSent, RunBytesReceived, TotalBytesSent, TotalBytesReceived float64
	Resources                                                          []Resource
	// Notes holds other non-blank lines, such as "Job terminated of its own
	// accord at ... with exit-code 0."
	Notes []string
}

// TerminateInfo parses a 005 (ULOG_JOB_TERMINATED) or 015
// (ULOG_NODE_TERMINATED) event.
func (e *Event) TerminateInfo() (TerminateInfo, error) {
	if e.Code != Terminated && e.Code != codeNodeTerminated {
		panic("eventlog: TerminateInfo called on an event of another code")
	}
	var t TerminateInfo
	if e.attrs != nil {
		t.Normal, _ = e.attrs["TerminatedNormally"].(bool)
		t.ReturnValue, _ = attrInt(e.attrs, "ReturnValue")
		t.Signal, _ = attrInt(e.attrs, "TerminatedBySignal")
		t.CoreFile = attrString(e.attrs, "CoreFile")
		return t, nil
	}
	_, rest := splitLine(e.Body) // "Job terminated." / "Node N terminated."
	n := 1
	l, rest := splitLine(rest)
	t0 := strings.TrimSpace(l)
	switch {
	case strings.HasPrefix(t0, "(1) Normal termination (return value "):
		t.Normal = true
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(t0, "(1) Normal termination (return value "), ")"))
		if err != nil {
			return t, e.bodyErr(n, "bad return value")
		}
		t.ReturnValue = v
	case strings.HasPrefix(t0, "(0) Abnormal termination (signal "):
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(t0, "(0) Abnormal termination (signal "), ")"))
		if err != nil {
			return t, e.bodyErr(n, "bad signal number")
		}
		t.Signal = v
	default:
		return t, e.bodyErr(n, `expected "(1) Normal termination" or "(0) Abnormal termination"`)
	}
	return t, e.parseTail(&t, rest, n+1)
}

// parseTail reads the core-file, usage, bytes and resources lines shared by
// terminated and evicted events.
func (e *Event) parseTail(t *TerminateInfo, rest string, n int) error {
	var cols []colSpec
	for ; rest != ""; n++ {
		var l string
		l, rest = splitLine(rest)
		s := strings.TrimSpace(l)
		switch {
		case s == "":
			cols = nil // a blank line ends the resources table
		case strings.HasPrefix(s, "(1) Corefile in: "):
			t.CoreFile = strings.TrimPrefix(s, "(1) Corefile in: ")
		case s == "(0) No core file":
		case strings.HasPrefix(s, "Usr "):
			u, label, ok := parseUsage(s)
			if !ok {
				return e.bodyErr(n, "bad usage line")
			}
			switch label {
			case "Run Remote Usage":
				t.RunRemote = u
			case "Run Local Usage":
				t.RunLocal = u
			case "Total Remote Usage":
				t.TotalRemote = u
			case "Total Local Usage":
				t.TotalLocal = u
			}
		case strings.HasPrefix(s, "Partitionable Resources :"):
			cols = parseColumns(strings.TrimLeft(l, "\t"))
		case cols != nil && strings.Contains(s, ":"):
			t.Resources = append(t.Resources, parseResource(strings.TrimLeft(l, "\t"), cols))
		default:
			if v, label, ok := strings.Cut(s, "  -  "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err == nil && strings.HasPrefix(label, "Run Bytes Sent By ") {
					t.RunBytesSent = f
					continue
				} else if err == nil && strings.HasPrefix(label, "Run Bytes Received By ") {
					t.RunBytesReceived = f
					continue
				} else if err == nil && strings.HasPrefix(label, "Total Bytes Sent By ") {
					t.TotalBytesSent = f
					continue
				} else if err == nil && strings.HasPrefix(label, "Total Bytes Received By ") {
					t.TotalBytesReceived = f
					continue
				}
			}
			t.Notes = append(t.Notes, s)
		}
	}
	return nil
}

type colSpec struct {
	name string
	end  int // index just past the column's right-aligned header word
}

// parseColumns reads "Partitionable Resources :    Usage  Request Allocated".
// The values under each header are right-aligned to it.
func parseColumns(l string) []colSpec {
	colon := strings.IndexByte(l, ':')
	var cols []colSpec
	i := colon + 1
	for i < len(l) {
		for i < len(l) && l[i] == ' ' {
			i++
		}
		j := i
		for j < len(l) && l[j] != ' ' {
			j++
		}
		if j > i {
			cols = append(cols, colSpec{l[i:j], j})
		}
		i = j
	}
	return cols
}

func parseResource(l string, cols []colSpec) Resource {
	colon := strings.IndexByte(l, ':')
	r := Resource{Name: strings.TrimSpace(l[:colon]), Usage: math.NaN(), Request: math.NaN(), Allocated: math.NaN()}
	i := colon + 1
	for i < len(l) {
		for i < len(l) && l[i] == ' ' {
			i++
		}
		j := i
		for j < len(l) && l[j] != ' ' {
			j++
		}
		if j == i {
			break
		}
		tok := l[i:j]
		// The column whose header ends nearest to the token's end.
		best, bestD := -1, 1<<30
		for k, c := range cols {
			if d := abs(c.end - j); d < bestD {
				best, bestD = k, d
			}
		}
		if best >= 0 {
			v, err := strconv.ParseFloat(tok, 64)
			switch cols[best].name {
			case "Usage":
				if err == nil {
					r.Usage = v
				}
			case "Request":
				if err == nil {
					r.Request = v
				}
			case "Allocated":
				if err == nil {
					r.Allocated = v
				}
			case "Assigned":
				r.Assigned = tok
			}
		}
		i = j
	}
	return r
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// EvictInfo is the body of a 004 event.
type EvictInfo struct {
	Code, Subcode int  // "Job was evicted. Code N Subcode M", zero when absent
	Checkpointed  bool // "(1) Job was checkpointed."
	Requeued      bool // "(0) Job terminated and was requeued"
	Reason        string
	// Terminate holds the termination status, usage and bytes; its Normal,
	// ReturnValue, Signal and CoreFile are meaningful only when Requeued.
	Terminate TerminateInfo
}

// EvictInfo parses a 004 (ULOG_JOB_EVICTED) event.
func (e *Event) EvictInfo() (EvictInfo, error) {
	e.must(Evicted, "EvictInfo")
	var v EvictInfo
	if e.attrs != nil {
		v.Checkpointed, _ = e.attrs["Checkpointed"].(bool)
		v.Requeued, _ = e.attrs["TerminatedAndRequeued"].(bool)
		v.Reason = attrString(e.attrs, "Reason")
		v.Code, _ = attrInt(e.attrs, "ReasonCode")
		v.Subcode, _ = attrInt(e.attrs, "ReasonSubCode")
		return v, nil
	}
	first, rest := splitLine(e.Body)
	if !strings.HasPrefix(first, "Job was evicted.") {
		return v, e.bodyErr(0, `expected "Job was evicted."`)
	}
	if c, ok := strings.CutPrefix(first, "Job was evicted. Code "); ok {
		if _, err := fmt.Sscanf(c, "%d Subcode %d", &v.Code, &v.Subcode); err != nil {
			return v, e.bodyErr(0, "bad Code/Subcode")
		}
	}
	l, rest := splitLine(rest)
	switch s := strings.TrimSpace(l); {
	case s == "(0) Job terminated and was requeued":
		v.Requeued = true
	case s == "(1) Job was checkpointed.":
		v.Checkpointed = true
	case s == "(0) CPU times", s == "(0) Job was not checkpointed.":
	default:
		return v, e.bodyErr(1, `expected "(0) CPU times", "(1) Job was checkpointed." or "(0) Job terminated and was requeued"`)
	}
	n := 2
	var tail strings.Builder
	for ; rest != ""; n++ {
		l, rest = splitLine(rest)
		s := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(s, "Reason: "):
			v.Reason = strings.TrimPrefix(s, "Reason: ")
		case strings.HasPrefix(s, "(1) Normal termination (return value "):
			v.Terminate.Normal = true
			v.Terminate.ReturnValue, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(s, "(1) Normal termination (return value "), ")"))
		case strings.HasPrefix(s, "(0) Abnormal termination (signal "):
			v.Terminate.Signal, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(s, "(0) Abnormal termination (signal "), ")"))
		default:
			tail.WriteString(l)
			tail.WriteByte('\n')
		}
	}
	if err := e.parseTail(&v.Terminate, tail.String(), 2); err != nil {
		return v, err
	}
	if v.Requeued && v.Reason == "" && len(v.Terminate.Notes) > 0 {
		// A requeued eviction writes its reason without the "Reason: " prefix.
		v.Reason = v.Terminate.Notes[len(v.Terminate.Notes)-1]
		v.Terminate.Notes = v.Terminate.Notes[:len(v.Terminate.Notes)-1]
	}
	return v, nil
}

// ImageSizeInfo is the body of a 006 event. Fields absent from older logs
// are -1.
type ImageSizeInfo struct {
	ImageSizeKB, MemoryUsageMB, ResidentSetSizeKB, ProportionalSetSizeKB int64
}

// ImageSizeInfo parses a 006 (ULOG_IMAGE_SIZE) event.
func (e *Event) ImageSizeInfo() (ImageSizeInfo, error) {
	e.must(codeImageSize, "ImageSizeInfo")
	v := ImageSizeInfo{-1, -1, -1, -1}
	if e.attrs != nil {
		if n, ok := e.attrs["Size"]; ok {
			v.ImageSizeKB = jsonInt64(n)
		}
		if n, ok := e.attrs["MemoryUsage"]; ok {
			v.MemoryUsageMB = jsonInt64(n)
		}
		if n, ok := e.attrs["ResidentSetSize"]; ok {
			v.ResidentSetSizeKB = jsonInt64(n)
		}
		if n, ok := e.attrs["ProportionalSetSize"]; ok {
			v.ProportionalSetSizeKB = jsonInt64(n)
		}
		return v, nil
	}
	first, rest := splitLine(e.Body)
	s, ok := strings.CutPrefix(first, "Image size of job updated: ")
	if !ok {
		return v, e.bodyErr(0, `expected "Image size of job updated: "`)
	}
	var err error
	if v.ImageSizeKB, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
		return v, e.bodyErr(0, "bad image size")
	}
	for n := 1; rest != ""; n++ {
		var l string
		l, rest = splitLine(rest)
		num, label, ok := strings.Cut(strings.TrimSpace(l), "  -  ")
		if !ok {
			continue
		}
		x, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return v, e.bodyErr(n, "bad number")
		}
		switch label {
		case "MemoryUsage of job (MB)":
			v.MemoryUsageMB = x
		case "ResidentSetSize of job (KB)":
			v.ResidentSetSizeKB = x
		case "ProportionalSetSize of job (KB)":
			v.ProportionalSetSizeKB = x
		}
	}
	return v, nil
}

func jsonInt64(v any) int64 {
	if n, ok := v.(interface{ Int64() (int64, error) }); ok {
		i, _ := n.Int64()
		return i
	}
	return -1
}

// ShadowExceptionInfo is the body of a 007 event.
type ShadowExceptionInfo struct {
	Message                  string
	SentBytes, ReceivedBytes float64
}

// ShadowExceptionInfo parses a 007 (ULOG_SHADOW_EXCEPTION) event.
func (e *Event) ShadowExceptionInfo() (ShadowExceptionInfo, error) {
	e.must(codeShadowException, "ShadowExceptionInfo")
	var v ShadowExceptionInfo
	if e.attrs != nil {
		v.Message = attrString(e.attrs, "Message")
		return v, nil
	}
	first, rest := splitLine(e.Body)
	if !strings.HasPrefix(first, "Shadow exception!") {
		return v, e.bodyErr(0, `expected "Shadow exception!"`)
	}
	l, rest := splitLine(rest)
	v.Message = strings.TrimSpace(l)
	for rest != "" {
		l, rest = splitLine(rest)
		num, label, ok := strings.Cut(strings.TrimSpace(l), "  -  ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			continue
		}
		switch label {
		case "Run Bytes Sent By Job":
			v.SentBytes = f
		case "Run Bytes Received By Job":
			v.ReceivedBytes = f
		}
	}
	return v, nil
}

// AbortInfo is the body of a 009 event.
type AbortInfo struct{ Reason string }

// AbortInfo parses a 009 (ULOG_JOB_ABORTED) event.
func (e *Event) AbortInfo() (AbortInfo, error) {
	e.must(Aborted, "AbortInfo")
	if e.attrs != nil {
		return AbortInfo{attrString(e.attrs, "Reason")}, nil
	}
	r, err := e.reasonAfter("Job was aborted")
	return AbortInfo{r}, err
}

// HoldInfo is the body of a 012 event.
type HoldInfo struct {
	Reason string
	// Code and Subcode are HoldReasonCode and HoldReasonSubCode; HasCode is
	// false for logs older than the "Code N Subcode M" line.
	Code, Subcode int
	HasCode       bool
}

// HoldInfo parses a 012 (ULOG_JOB_HELD) event.
func (e *Event) HoldInfo() (HoldInfo, error) {
	e.must(Held, "HoldInfo")
	var v HoldInfo
	if e.attrs != nil {
		v.Reason = attrString(e.attrs, "HoldReason")
		v.Code, v.HasCode = attrInt(e.attrs, "HoldReasonCode")
		v.Subcode, _ = attrInt(e.attrs, "HoldReasonSubCode")
		return v, nil
	}
	first, rest := splitLine(e.Body)
	if !strings.HasPrefix(first, "Job was held.") {
		return v, e.bodyErr(0, `expected "Job was held."`)
	}
	for n := 1; rest != ""; n++ {
		var l string
		l, rest = splitLine(rest)
		s := strings.TrimSpace(l)
		if c, ok := strings.CutPrefix(s, "Code "); ok {
			if _, err := fmt.Sscanf(c, "%d Subcode %d", &v.Code, &v.Subcode); err != nil {
				return v, e.bodyErr(n, `bad "Code N Subcode M" line`)
			}
			v.HasCode = true
		} else if s != "" && v.Reason == "" {
			v.Reason = s
		}
	}
	if v.Reason == "Reason unspecified" {
		v.Reason = ""
	}
	return v, nil
}

// ReleaseInfo is the body of a 013 event.
type ReleaseInfo struct{ Reason string }

// ReleaseInfo parses a 013 (ULOG_JOB_RELEASED) event.
func (e *Event) ReleaseInfo() (ReleaseInfo, error) {
	e.must(Released, "ReleaseInfo")
	if e.attrs != nil {
		return ReleaseInfo{attrString(e.attrs, "Reason")}, nil
	}
	r, err := e.reasonAfter("Job was released.")
	return ReleaseInfo{r}, err
}

// reasonAfter checks that the body's first line starts with head and
// returns the trimmed second line, where 009 and 013 bodies keep the reason.
func (e *Event) reasonAfter(head string) (string, error) {
	first, rest := splitLine(e.Body)
	if !strings.HasPrefix(first, head) {
		return "", e.bodyErr(0, "expected %q", head)
	}
	l, _ := splitLine(rest)
	return strings.TrimSpace(l), nil
}

// DisconnectInfo is the body of a 022 event, or of a 024 event (Reason and
// StartdName only).
type DisconnectInfo struct {
	Reason, StartdName, StartdAddr string
}

// DisconnectInfo parses a 022 (ULOG_JOB_DISCONNECTED) or 024
// (ULOG_JOB_RECONNECT_FAILED) event.
func (e *Event) DisconnectInfo() (DisconnectInfo, error) {
	if e.Code != codeDisconnected && e.Code != codeReconnectFailed {
		panic("eventlog: DisconnectInfo called on an event of another code")
	}
	var v DisconnectInfo
	if e.attrs != nil {
		v.Reason = attrString(e.attrs, "DisconnectReason")
		if v.Reason == "" {
			v.Reason = attrString(e.attrs, "Reason")
		}
		v.StartdName = attrString(e.attrs, "StartdName")
		v.StartdAddr = attrString(e.attrs, "StartdAddr")
		return v, nil
	}
	first, rest := splitLine(e.Body)
	want := "Job disconnected, attempting to reconnect"
	if e.Code == codeReconnectFailed {
		want = "Job reconnection failed"
	}
	if !strings.HasPrefix(first, want) {
		return v, e.bodyErr(0, "expected %q", want)
	}
	l, rest := splitLine(rest)
	v.Reason = strings.TrimSpace(l)
	l, _ = splitLine(rest)
	s := strings.TrimSpace(l)
	if t, ok := strings.CutPrefix(s, "Trying to reconnect to "); ok {
		v.StartdName, v.StartdAddr, _ = strings.Cut(t, " ")
	} else if t, ok := strings.CutPrefix(s, "Can not reconnect to "); ok {
		v.StartdName = strings.TrimSuffix(t, ", rescheduling job")
	}
	return v, nil
}

// ReconnectInfo is the body of a 023 event.
type ReconnectInfo struct {
	StartdName, StartdAddr, StarterAddr string
}

// ReconnectInfo parses a 023 (ULOG_JOB_RECONNECTED) event.
func (e *Event) ReconnectInfo() (ReconnectInfo, error) {
	e.must(codeReconnected, "ReconnectInfo")
	var v ReconnectInfo
	if e.attrs != nil {
		v.StartdName = attrString(e.attrs, "StartdName")
		v.StartdAddr = attrString(e.attrs, "StartdAddr")
		v.StarterAddr = attrString(e.attrs, "StarterAddr")
		return v, nil
	}
	first, rest := splitLine(e.Body)
	name, ok := strings.CutPrefix(first, "Job reconnected to ")
	if !ok {
		return v, e.bodyErr(0, `expected "Job reconnected to "`)
	}
	v.StartdName = strings.TrimSpace(name)
	for rest != "" {
		var l string
		l, rest = splitLine(rest)
		s := strings.TrimSpace(l)
		if a, ok := strings.CutPrefix(s, "startd address: "); ok {
			v.StartdAddr = a
		} else if a, ok := strings.CutPrefix(s, "starter address: "); ok {
			v.StarterAddr = a
		}
	}
	return v, nil
}

// AttributeUpdateInfo is the body of a 033 event.
type AttributeUpdateInfo struct {
	Name, Value, Old string
	HasOld           bool
}

// AttributeUpdateInfo parses a 033 (ULOG_ATTRIBUTE_UPDATE) event:
// "Changing job attribute N from OLD to NEW" or "Setting job attribute N to NEW".
func (e *Event) AttributeUpdateInfo() (AttributeUpdateInfo, error) {
	e.must(codeAttributeUpdate, "AttributeUpdateInfo")
	var v AttributeUpdateInfo
	if e.attrs != nil {
		v.Name = attrString(e.attrs, "Attribute")
		v.Value = fmt.Sprint(e.attrs["Value"])
		if o, ok := e.attrs["PriorValue"]; ok {
			v.Old, v.HasOld = fmt.Sprint(o), true
		}
		return v, nil
	}
	first, _ := splitLine(e.Body)
	if s, ok := strings.CutPrefix(first, "Changing job attribute "); ok {
		n, r, ok1 := strings.Cut(s, " from ")
		o, nv, ok2 := strings.Cut(r, " to ")
		if !ok1 || !ok2 {
			return v, e.bodyErr(0, `expected "Changing job attribute N from OLD to NEW"`)
		}
		return AttributeUpdateInfo{Name: n, Old: o, Value: nv, HasOld: true}, nil
	}
	if s, ok := strings.CutPrefix(first, "Setting job attribute "); ok {
		n, nv, ok := strings.Cut(s, " to ")
		if !ok {
			return v, e.bodyErr(0, `expected "Setting job attribute N to NEW"`)
		}
		return AttributeUpdateInfo{Name: n, Value: nv}, nil
	}
	return v, e.bodyErr(0, `expected "Changing job attribute" or "Setting job attribute"`)
}

// JobAdInfo is the body of a 028 event: the job-ad attributes it carries and
// the event that triggered it.
type JobAdInfo struct {
	// Attrs are in the order of the log's lines, or sorted by name for an
	// event read from a JSON log.
	Attrs []Attr
	// Trigger is TriggerEventTypeNumber, or -1 when absent.
	Trigger Code
}

// JobAdInfo parses a 028 (ULOG_JOB_AD_INFORMATION) event, or the folded
// attributes of an event read with FoldJobAds (any code, when Ad is set).
func (e *Event) JobAdInfo() (JobAdInfo, error) {
	var lines string
	switch {
	case e.Code == JobAdInformation && e.attrs != nil:
		j := JobAdInfo{Trigger: -1}
		// Sorted by name: map order is random, and the same event must
		// give the same JobAdInfo.
		for _, k := range slices.Sorted(maps.Keys(e.attrs)) {
			j.Attrs = append(j.Attrs, Attr{k, fmt.Sprint(e.attrs[k])})
		}
		if t, ok := attrInt(e.attrs, "TriggerEventTypeNumber"); ok {
			j.Trigger = Code(t)
		}
		return j, nil
	case e.Code == JobAdInformation:
		first, rest := splitLine(e.Body)
		if !strings.HasPrefix(first, "Job ad information event triggered.") {
			return JobAdInfo{}, e.bodyErr(0, `expected "Job ad information event triggered."`)
		}
		lines = rest
	case e.Ad != "":
		lines = e.Ad
	default:
		panic("eventlog: JobAdInfo called on an event that is not ULOG_JOB_AD_INFORMATION and has no folded ad")
	}
	j := JobAdInfo{Trigger: -1}
	for n := 1; lines != ""; n++ {
		var l string
		l, lines = splitLine(lines)
		if strings.TrimSpace(l) == "" {
			continue
		}
		name, val, ok := strings.Cut(l, " = ")
		if !ok {
			return j, e.bodyErr(n, `expected "Name = value"`)
		}
		name = strings.TrimSpace(name)
		j.Attrs = append(j.Attrs, Attr{name, strings.TrimSpace(val)})
		if strings.EqualFold(name, "TriggerEventTypeNumber") {
			if t, err := strconv.Atoi(strings.TrimSpace(val)); err == nil {
				j.Trigger = Code(t)
			}
		}
	}
	return j, nil
}

// TransferKind is the kind of a 040 file-transfer event
// (FileTransferEventStrings in condor_event.cpp).
type TransferKind int

// The file-transfer event kinds.
const (
	InputQueued TransferKind = iota + 1
	InputStarted
	InputFinished
	OutputQueued
	OutputStarted
	OutputFinished
)

var transferTexts = [...]string{
	InputQueued:    "Entered queue to transfer input files",
	InputStarted:   "Started transferring input files",
	InputFinished:  "Finished transferring input files",
	OutputQueued:   "Entered queue to transfer output files",
	OutputStarted:  "Started transferring output files",
	OutputFinished: "Finished transferring output files",
}

// String returns the text HTCondor writes for k.
func (k TransferKind) String() string {
	if k >= InputQueued && k <= OutputFinished {
		return transferTexts[k]
	}
	return "TransferKind(" + strconv.Itoa(int(k)) + ")"
}

// TransferInfo is the body of a 040 event.
type TransferInfo struct {
	Kind TransferKind
	// QueueingDelay is "Seconds spent in queue", or -1 when absent.
	QueueingDelay time.Duration
	Host          string // "Transferring to host: ..."
}

// TransferInfo parses a 040 (ULOG_FILE_TRANSFER) event.
func (e *Event) TransferInfo() (TransferInfo, error) {
	e.must(codeFileTransfer, "TransferInfo")
	v := TransferInfo{QueueingDelay: -1}
	if e.attrs != nil {
		k, _ := attrInt(e.attrs, "Type")
		v.Kind = TransferKind(k)
		if d, ok := attrInt(e.attrs, "QueueingDelay"); ok {
			v.QueueingDelay = time.Duration(d) * time.Second
		}
		v.Host = attrString(e.attrs, "Host")
		return v, nil
	}
	first, rest := splitLine(e.Body)
	first = strings.TrimSpace(first)
	for k := InputQueued; k <= OutputFinished; k++ {
		if first == transferTexts[k] {
			v.Kind = k
		}
	}
	if v.Kind == 0 {
		return v, e.bodyErr(0, "unknown file-transfer kind %q", first)
	}
	for n := 1; rest != ""; n++ {
		var l string
		l, rest = splitLine(rest)
		s := strings.TrimSpace(l)
		if d, ok := strings.CutPrefix(s, "Seconds spent in queue: "); ok {
			x, err := strconv.ParseInt(d, 10, 64)
			if err != nil {
				return v, e.bodyErr(n, "bad queueing delay")
			}
			v.QueueingDelay = time.Duration(x) * time.Second
		} else if h, ok := strings.CutPrefix(s, "Transferring to host: "); ok {
			v.Host = h
		}
	}
	return v, nil
}
