package eventlog_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

const exampleLog = `000 (101.000.000) 2024-03-05 10:00:00 Job submitted from host: <10.0.0.5:9618>
...
001 (101.000.000) 2024-03-05 10:01:00 Job executing on host: <10.1.0.9:9618>
...
012 (101.000.000) 2024-03-05 10:03:00 Job was held.
	via condor_hold (by user alice)
	Code 1 Subcode 0
...
013 (101.000.000) 2024-03-05 10:05:00 Job was released.
	via condor_release (by user alice)
...
001 (101.000.000) 2024-03-05 10:06:00 Job executing on host: <10.1.0.9:9618>
...
005 (101.000.000) 2024-03-05 10:08:00 Job terminated.
	(1) Normal termination (return value 0)
...
`

func ExampleReader() {
	r := eventlog.NewReader(strings.NewReader(exampleLog))
	r.Location = time.UTC
	for ev, err := range r.All() {
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(ev.Code, ev.Job, ev.Time.Format(time.TimeOnly))
		if ev.Code == eventlog.Held {
			h, _ := ev.HoldInfo()
			fmt.Printf("  held: %q code %d subcode %d\n", h.Reason, h.Code, h.Subcode)
		}
	}
	// Output:
	// ULOG_SUBMIT 101.000.000 10:00:00
	// ULOG_EXECUTE 101.000.000 10:01:00
	// ULOG_JOB_HELD 101.000.000 10:03:00
	//   held: "via condor_hold (by user alice)" code 1 subcode 0
	// ULOG_JOB_RELEASED 101.000.000 10:05:00
	// ULOG_EXECUTE 101.000.000 10:06:00
	// ULOG_JOB_TERMINATED 101.000.000 10:08:00
}

func ExampleReader_badInput() {
	in := exampleLog[:strings.Index(exampleLog, "012")] + "this line is not an event\n"
	r := eventlog.NewReader(strings.NewReader(in))
	r.Location = time.UTC
	events, err := r.ReadAll()
	fmt.Println(len(events), "events before:", err)
	// Output:
	// 2 events before: eventlog: line 5, column 1: expected event header "NNN (cluster.proc.subproc) date time"
}

func ExampleBuilder() {
	r := eventlog.NewReader(strings.NewReader(exampleLog))
	r.Location = time.UTC
	events, _ := r.ReadAll()
	jobs := eventlog.Group("schedd-a", events)
	fmt.Println(jobs[0].Key, jobs[0].Label())

	// The default framing ends at the decision, the first hold: nothing
	// written after it (the release, the termination that make the
	// label) is in the sample. Forward framing would show them.
	for _, forward := range []bool{false, true} {
		b := eventlog.Builder{M: 9, Frame: time.Minute, Forward: forward}
		samples, _ := b.Build(jobs)
		s := samples[0]
		fmt.Printf("forward=%v: %d values: J, M, E = %d %d %d\n", forward, len(s.X), s.J, s.M, s.E)
		for m, row := range s.Rows() {
			for e, v := range row {
				if v == 1 {
					fmt.Printf("  frame %d: state %s\n", m, eventlog.Code(e))
				}
			}
		}
	}
	// Output:
	// schedd-a/101.000.000 release
	// forward=false: 414 values: J, M, E = 1 9 46
	//   frame 5: state ULOG_SUBMIT
	//   frame 6: state ULOG_EXECUTE
	//   frame 7: state ULOG_EXECUTE
	//   frame 8: state ULOG_JOB_HELD
	// forward=true: 414 values: J, M, E = 1 9 46
	//   frame 0: state ULOG_SUBMIT
	//   frame 1: state ULOG_EXECUTE
	//   frame 2: state ULOG_EXECUTE
	//   frame 3: state ULOG_JOB_HELD
	//   frame 4: state ULOG_JOB_HELD
	//   frame 5: state ULOG_JOB_RELEASED
	//   frame 6: state ULOG_EXECUTE
	//   frame 7: state ULOG_EXECUTE
	//   frame 8: state ULOG_JOB_TERMINATED
}

// Group gathers each job's events, in log order; End says how each job
// ended. Job 102 was removed while held; job 103, still in the queue, has
// not ended, which End reports as Running.
func ExampleGroup() {
	log := exampleLog + `000 (102.000.000) 2024-03-05 10:02:00 Job submitted from host: <10.0.0.5:9618>
...
000 (103.000.000) 2024-03-05 10:02:30 Job submitted from host: <10.0.0.5:9618>
...
012 (102.000.000) 2024-03-05 10:04:00 Job was held.
	Error from slot1@node7: disk quota exceeded
	Code 34 Subcode 0
...
009 (102.000.000) 2024-03-05 10:09:00 Job was aborted.
	via condor_rm (by user alice)
...
`
	r := eventlog.NewReader(strings.NewReader(log))
	r.Location = time.UTC
	events, err := r.ReadAll()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range eventlog.Group("schedd-a", events) {
		end, at := j.End()
		fmt.Printf("%s: events %d, %s", j.Key, len(j.Events), end)
		if !at.IsZero() {
			fmt.Printf(" at %s", at.Format(time.TimeOnly))
		}
		fmt.Printf(", label %s\n", j.Label())
	}
	// Output:
	// schedd-a/101.000.000: events 6, terminated normally at 10:08:00, label release
	// schedd-a/102.000.000: events 3, removed at 10:09:00, label remove
	// schedd-a/103.000.000: events 1, running, label unlabeled
}

// A *ParseError names the file and line; errors.Is names what was wrong.
func ExampleParseError() {
	r := eventlog.NewReader(strings.NewReader(strings.Replace(exampleLog, "2024-03-05 10:05", "2024-02-30 10:05", 1)))
	r.File, r.Location = "schedd-a.log", time.UTC
	_, err := r.ReadAll()
	var pe *eventlog.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.File, pe.Line, errors.Is(err, eventlog.ErrDate))
	}
	fmt.Println(err)
	// Output:
	// schedd-a.log 9 true
	// eventlog: schedd-a.log:line 9, column 19: impossible date or time
}
