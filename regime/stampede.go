package regime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// stampedeEpochSentinel is Unix time 0 written in US Central time, which the
// Stampede accounting files use for a missing start.
const stampedeEpochSentinel = "12/31/1969 19:00:00"

var stampedeColumns = [...]string{"jobID", "queue", "walltime", "exit_status", "start", "end", "submit", "nnodes", "ncpus"}

// stampedeRead reports whether ReadStampede reads the column of a matched
// name.
func stampedeRead(name string) bool {
	if name == "user" || name == "account" {
		return true
	}
	for _, c := range stampedeColumns {
		if strings.ToLower(c) == name {
			return true
		}
	}
	return false
}

// IsStampede reports whether head, the first bytes of a CSV file (its
// header line at least), is the header of a Stampede accounting file: it
// has a jobID column and no jid column, names matched as ReadStampede
// matches them (quoted or not, without case, surrounding spaces or a
// byte-order mark). A header that does not parse as CSV is not one.
func IsStampede(head []byte) bool {
	header, err := newCSV(bytes.NewReader(head)).Read()
	if err != nil {
		return false
	}
	stampede := false
	for _, h := range header {
		switch matchName(h) {
		case colJob:
			return false
		case "jobid":
			stampede = true
		}
	}
	return stampede
}

// ReadStampede reads a TACC Stampede job-accounting CSV (header
// jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus)
// into job records of cluster "stampede": walltime is minutes (TimelimitSec
// is walltime×60), nnodes is NHosts, ncpus is NCores, queue is Partition.
// Times are MM/DD/YYYY HH:MM:SS local wall-clock text read as naive UTC, so
// differences match pandas' naive arithmetic across the DST change; the
// sentinel 12/31/1969 19:00:00 is missing. Every data problem is a
// *ParseError naming file, line and column.
func ReadStampede(r io.Reader, file string) ([]Job, error) {
	cr := newCSV(r)
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ParseError{File: file, Err: fmt.Errorf("%w: empty file, no header", ErrMissingColumn)}
		}
		return nil, csvError(file, err, header, len(header))
	}
	header = slices.Clone(header) // the reader reuses its record
	idx := make(map[string]int, len(header))
	for i, h := range header {
		name := matchName(h)
		if name == "" {
			continue // Excel's trailing empty columns: nothing to read
		}
		if j, dup := idx[name]; dup {
			if stampedeRead(name) {
				return nil, &ParseError{File: file, Line: 1, column: written(h), Err: duplicate(written(header[j]), j, written(h), i)}
			}
			continue
		}
		idx[name] = i
	}
	for _, c := range stampedeColumns {
		if _, ok := idx[strings.ToLower(c)]; !ok {
			return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("%w %q%s", ErrMissingColumn, c, otherSeparator(header))}
		}
	}
	var jobs []Job
	strs := newStrtab()
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return jobs, nil
		}
		if err != nil {
			return nil, csvError(file, err, rec, len(header))
		}
		if slices.Equal(rec, header) {
			return nil, repeatedHeader(file, cr)
		}
		get := func(c string) string { return strings.TrimSpace(rec[idx[strings.ToLower(c)]]) }
		// The fields are slices of the record's line: the job keeps copies.
		j := Job{ID: strings.Clone(get("jobID")), Cluster: "stampede", Partition: strs.str(get("queue")), ExitStatus: strs.str(get("exit_status"))}
		if i, ok := idx["user"]; ok {
			j.User = strs.str(strings.TrimSpace(rec[i]))
		}
		if i, ok := idx["account"]; ok {
			j.Account = strs.str(strings.TrimSpace(rec[i]))
		}
		fail := func(col string, err error) error {
			// The bad field's line: a quoted field before it may span lines.
			i := idx[strings.ToLower(col)]
			line, _ := cr.FieldPos(i)
			return &ParseError{File: file, Line: line, column: written(header[i]), Err: err}
		}
		if j.ID == "" {
			return nil, fail("jobID", fmt.Errorf("%w: empty job id", ErrBadValue))
		}
		for _, tc := range []struct {
			name string
			dst  *time.Time
		}{{"submit", &j.Submit}, {"start", &j.Start}, {"end", &j.End}} {
			s := get(tc.name)
			if s == stampedeEpochSentinel {
				continue
			}
			t, err := parseTime(s)
			if err != nil {
				return nil, fail(tc.name, err)
			}
			*tc.dst = t
		}
		for _, nc := range []struct {
			name  string
			dst   *float64
			scale float64
		}{{"walltime", &j.TimelimitSec, 60}, {"nnodes", &j.NHosts, 1}, {"ncpus", &j.NCores, 1}} {
			v, err := parseNumber(get(nc.name))
			if err != nil {
				return nil, fail(nc.name, err)
			}
			if v < 0 {
				return nil, fail(nc.name, fmt.Errorf("%w: negative %s %v", ErrBadValue, nc.name, v))
			}
			*nc.dst = v * nc.scale
		}
		jobs = append(jobs, j)
	}
}
