package eventlog

import (
	"iter"
	"strconv"
	"strings"
	"time"
)

// Key identifies a job across schedds: Source tags the log it came from (a
// schedd name, a file set), so that two schedds' 1234.0.0 do not collide.
type Key struct {
	Source string
	JobID
}

// String returns "source/cluster.proc.subproc", or the id alone without a
// source.
func (k Key) String() string {
	if k.Source == "" {
		return k.JobID.String()
	}
	return k.Source + "/" + k.JobID.String()
}

// Job is one job's history: its events in log order.
type Job struct {
	Key    Key
	Events []Event
}

// Group gathers events into jobs tagged with source, in order of each job's
// first event. Events of no job (id -1.-1.-1, such as global-log headers)
// are left out. events is not modified.
func Group(source string, events []Event) []*Job {
	idx := make(map[JobID]*Job)
	var jobs []*Job
	for i := range events {
		ev := &events[i]
		if !ev.Job.isJob() {
			continue
		}
		j := idx[ev.Job]
		if j == nil {
			j = &Job{Key: Key{source, ev.Job}}
			idx[ev.Job] = j
			jobs = append(jobs, j)
		}
		j.Events = append(j.Events, *ev)
	}
	return jobs
}

// GroupBySource groups events by the log each came from as well as by job
// id: each event's source is sourceOf(ev.File), so the logs of several
// schedds read together (whose job ids repeat) keep their jobs apart, and
// the rotations of one log share them. Use it with Files over more than one
// log; events without a File share the source "".
func GroupBySource(events iter.Seq2[Event, error]) ([]*Job, error) {
	return groupKeyed(events, func(ev *Event) Key {
		if ev.File == "" {
			return Key{"", ev.Job}
		}
		return Key{sourceOf(ev.File), ev.Job}
	})
}

// groupKeyed gathers the job events of a stream by key, jobs in order of
// first appearance; it stops at the first error.
func groupKeyed(events iter.Seq2[Event, error], key func(*Event) Key) ([]*Job, error) {
	idx := make(map[Key]*Job)
	var jobs []*Job
	for ev, err := range events {
		if err != nil {
			return jobs, err
		}
		if !ev.Job.isJob() {
			continue
		}
		k := key(&ev)
		j := idx[k]
		if j == nil {
			j = &Job{Key: k}
			idx[k] = j
			jobs = append(jobs, j)
		}
		j.Events = append(j.Events, ev)
	}
	return jobs, nil
}

// HoldCycle is one hold of a job and the release that ended it, if any.
type HoldCycle struct {
	Held     time.Time
	Released time.Time // zero when the job was not released
	Reason   string
	// Code and Subcode are HoldReasonCode and HoldReasonSubCode; HasCode is
	// false when the log predates them.
	Code, Subcode int
	HasCode       bool
}

// Holds returns the job's hold cycles in order. A hold whose body cannot be
// parsed still counts, with no reason or code.
func (j *Job) Holds() []HoldCycle {
	var out []HoldCycle
	for i := range j.Events {
		ev := &j.Events[i]
		switch ev.Code {
		case Held:
			h, _ := ev.HoldInfo()
			out = append(out, HoldCycle{Held: ev.Time, Reason: h.Reason, Code: h.Code, Subcode: h.Subcode, HasCode: h.HasCode})
		case Released:
			if n := len(out); n > 0 && out[n-1].Released.IsZero() {
				out[n-1].Released = ev.Time
			}
		}
	}
	return out
}

// stateEvent reports whether an event moves a job between queue states
// (the events Times follows): submit, execute, executable error, eviction,
// termination, shadow exception, abort, suspend, unsuspend, hold, release
// and reconnect failure. Everything else only reports on the job: image
// size (006), job-ad information (028), DAGMan's POST script terminated
// (016, written after the node job's 005 or 009, or after a hold when
// DAGMan gives up on it), disconnection, file transfer and the rest.
func stateEvent(c Code) bool {
	switch c {
	case Submit, Execute, codeExecutableError, Evicted, Terminated, codeShadowException, Aborted,
		codeSuspended, codeUnsuspended, Held, Released, codeReconnectFailed:
		return true
	}
	return false
}

// LastState returns the job's last event that changes its queue state (see
// Times): a 016, 028, 006 or other report after a job's 005 leaves the 005
// its last state.
func (j *Job) LastState() (Event, bool) {
	for i := len(j.Events) - 1; i >= 0; i-- {
		if stateEvent(j.Events[i].Code) {
			return j.Events[i], true
		}
	}
	return Event{}, false
}

// End says how a job ended.
type End int

// The ways a job ends, judged from its last state event.
const (
	Running              End = iota // no terminal event (still in the queue when the log ends)
	TerminatedNormally              // 005 with "(1) Normal termination", whatever the return value
	TerminatedAbnormally            // 005 killed by a signal
	Removed                         // 009 aborted (condor_rm, or DAGMan)
)

func (e End) String() string {
	switch e {
	case Running:
		return "running"
	case TerminatedNormally:
		return "terminated normally"
	case TerminatedAbnormally:
		return "terminated abnormally"
	case Removed:
		return "removed"
	}
	return "End(" + strconv.Itoa(int(e)) + ")"
}

// End returns how the job ended and when, from its last state event.
func (j *Job) End() (End, time.Time) {
	ev, ok := j.LastState()
	if !ok {
		return Running, time.Time{}
	}
	switch ev.Code {
	case Aborted:
		return Removed, ev.Time
	case Terminated:
		if normalTermination(&ev) {
			return TerminatedNormally, ev.Time
		}
		return TerminatedAbnormally, ev.Time
	}
	return Running, time.Time{}
}

func normalTermination(ev *Event) bool {
	if ev.attrs != nil {
		t, _ := ev.TerminateInfo()
		return t.Normal
	}
	_, rest := splitLine(ev.Body)
	l, _ := splitLine(rest)
	return strings.HasPrefix(strings.TrimSpace(l), "(1) Normal termination")
}

// Label is the outcome the held-job classifier learns.
type Label int8

// Labels, with the values stored in datasets.
const (
	Unlabeled Label = -1
	Remove    Label = 0
	Release   Label = 1
)

func (l Label) String() string {
	switch l {
	case Release:
		return "release"
	case Remove:
		return "remove"
	}
	return "unlabeled"
}

// Label labels a job: Release when it has at least one hold→release cycle
// and its last state event (trailing 028 and 006 events aside) is a normal
// termination; Remove when it was held at least once and ends aborted (009)
// or terminated abnormally; Unlabeled otherwise (never held, still running,
// or a normal termination without any release).
func (j *Job) Label() Label {
	held, released := false, false
	for i := range j.Events {
		switch j.Events[i].Code {
		case Held:
			held = true
		case Released:
			released = released || held
		}
	}
	if !held {
		return Unlabeled
	}
	switch end, _ := j.End(); end {
	case TerminatedNormally:
		if released {
			return Release
		}
	case Removed, TerminatedAbnormally:
		return Remove
	}
	return Unlabeled
}

// state is a job's queue state as its events move it.
type state int

// Queue states.
const (
	idle state = iota
	executing
	onHold
	suspendedState
	finished
)

// StateTimes are the durations a job spent in each state, from its first
// event to its terminal event (or its last event when it has none).
type StateTimes struct {
	Idle, Running, Held, Suspended time.Duration
}

// Times returns how long the job spent idle, running, held and suspended.
// Submit, eviction, release, shadow exception, executable error and
// reconnect failure make a job idle; execute and unsuspend make it run;
// hold holds it; suspend suspends it; terminate and abort end it.
func (j *Job) Times() StateTimes {
	var st StateTimes
	if len(j.Events) == 0 {
		return st
	}
	cur := idle
	last := j.Events[0].Time
	add := func(t time.Time) {
		d := t.Sub(last)
		if d < 0 {
			d = 0
		}
		switch cur {
		case idle:
			st.Idle += d
		case executing:
			st.Running += d
		case onHold:
			st.Held += d
		case suspendedState:
			st.Suspended += d
		}
		last = t
	}
	for i := range j.Events {
		ev := &j.Events[i]
		var next state
		switch ev.Code {
		case Submit, Evicted, Released, codeShadowException, codeExecutableError, codeReconnectFailed:
			next = idle
		case Execute, codeUnsuspended:
			next = executing
		case Held:
			next = onHold
		case codeSuspended:
			next = suspendedState
		case Terminated, Aborted:
			next = finished
		default:
			continue
		}
		add(ev.Time)
		cur = next
		if cur == finished {
			break
		}
	}
	if cur != finished {
		add(j.Events[len(j.Events)-1].Time)
	}
	return st
}
