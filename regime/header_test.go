package regime

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestEmptyAndDuplicateHeaders: columns without a name (Excel's trailing
// empty fields, pandas' index) are ignored and reported in Unknown;
// duplicated names are refused only for columns the reader reads, with the
// name and both field numbers in the message (issue 13 item 12).
func TestEmptyAndDuplicateHeaders(t *testing.T) {
	t.Run("accepted", func(t *testing.T) {
		for _, c := range []struct {
			name, in      string
			unknown, mets []string
		}{
			{"excel trailing empty", "jid,ncores,value_gpu,,\nj1,4,1,,\nj2,8,2,,\n", []string{"", ""}, []string{"gpu"}},
			{"pandas index", ",jid,ncores\n0,j1,4\n1,j2,8\n", []string{""}, nil},
			{"blank names", "jid, ,ncores,\t\nj1,,4,\nj2,,8,\n", []string{"", ""}, nil},
			{"duplicate unknown", "jid,notes,ncores,Notes \nj1,a,4,b\nj2,c,8,d\n", []string{"notes", "Notes"}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				tab, err := readCSV(strings.NewReader(c.in), "h.csv", "x")
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(tab.Unknown, c.unknown) || !slices.Equal(tab.Metrics, c.mets) {
					t.Errorf("Unknown %q Metrics %q, want %q %q", tab.Unknown, tab.Metrics, c.unknown, c.mets)
				}
				if len(tab.Rows) != 2 || tab.Rows[1].JobID != "j2" || tab.Rows[1].NCores != 8 {
					t.Errorf("rows %+v", tab.Rows)
				}
			})
		}
	})
	t.Run("metric not kept may repeat", func(t *testing.T) {
		in := "jid,value_gpu,value_x,VALUE_X\nj1,1,a,b\n"
		jt, err := ReadJobsCSV(strings.NewReader(in), "h.csv", ReadConfig{Cluster: "x", Metrics: []string{"gpu"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(jt.metrics, []string{"gpu", "x"}) || !slices.Equal(jt.kept, []string{"gpu"}) {
			t.Errorf("Metrics %q Kept %q", jt.metrics, jt.kept)
		}
		// Read with every metric, the same file is refused.
		if _, err := ReadJobsCSV(strings.NewReader(in), "h.csv", ReadConfig{Cluster: "x"}); !errors.Is(err, ErrBadValue) {
			t.Errorf("every metric read: err %v, want ErrBadValue", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			name, in, want string
		}{
			{"jid twice", "jid,ncores,JID \nj1,4,j2\n", `regime: h.csv:1: column "JID": bad value: duplicate column: fields 1 ("jid") and 3 ("JID") have the same name (names are matched without case and surrounding spaces)`},
			{"metric twice", "jid,value_gpu,ncores,value_gpu\nj1,1,4,2\n", `regime: h.csv:1: column "value_gpu": bad value: duplicate column: fields 2 ("value_gpu") and 4 ("value_gpu") have the same name (names are matched without case and surrounding spaces)`},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := readCSV(strings.NewReader(c.in), "h.csv", "x")
				var pe *ParseError
				if !errors.As(err, &pe) || !errors.Is(err, ErrBadValue) || pe.Line != 1 {
					t.Fatalf("err %v, want a *ParseError at line 1 wrapping ErrBadValue", err)
				}
				if err.Error() != c.want {
					t.Errorf("message %q\nwant    %q", err.Error(), c.want)
				}
			})
		}
	})
	t.Run("stampede", func(t *testing.T) {
		const cols = "jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus"
		const rec = "j1,u,a,n,q,60,COMPLETED,03/11/2018 01:00:00,03/11/2018 03:00:00,03/11/2018 00:30:00,1,16"
		jobs, err := ReadStampede(strings.NewReader(cols+",,,Notes,notes\n"+rec+",,,x,y\n"), "s.csv")
		if err != nil || len(jobs) != 1 || jobs[0].NCores != 16 {
			t.Errorf("trailing empty and repeated unread columns: %v (%d jobs)", err, len(jobs))
		}
		_, err = ReadStampede(strings.NewReader(cols+",NCPUS\n"+rec+",32\n"), "s.csv")
		want := `regime: s.csv:1: column "NCPUS": bad value: duplicate column: fields 12 ("ncpus") and 13 ("NCPUS") have the same name (names are matched without case and surrounding spaces)`
		if err == nil || err.Error() != want || !errors.Is(err, ErrBadValue) {
			t.Errorf("read column twice: %v\nwant %s", err, want)
		}
	})
}

// TestErrorLineIsTheField: a record spanning lines (a quoted field with
// newlines) reports the line of the bad field, not the record's first
// line (issue 13 item 13).
func TestErrorLineIsTheField(t *testing.T) {
	const telem = "jid,username,ncores,value_gpu\n" +
		"j1,u,4,1\n" +
		"j2,\"a\nb\nc\",4,oops\n"
	for _, read := range []struct {
		name string
		f    func() error
	}{
		{"readCSV", func() error { _, err := readCSV(strings.NewReader(telem), "t.csv", "x"); return err }},
		{"ReadJobsCSV", func() error {
			_, err := ReadJobsCSV(strings.NewReader(telem), "t.csv", ReadConfig{Cluster: "x"})
			return err
		}},
		{"ReadStampede", func() error {
			in := "jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus\n" +
				"j1,\"a\nb\",acc,\"x\ny\nz\",q,60,COMPLETED,03/11/2018 01:00:00,03/11/2018 03:00:00,03/11/2018 00:30:00,1,oops\n"
			_, err := ReadStampede(strings.NewReader(in), "t.csv")
			return err
		}},
	} {
		t.Run(read.name, func(t *testing.T) {
			err := read.f()
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrBadValue) {
				t.Fatalf("err %v, want a *ParseError wrapping ErrBadValue", err)
			}
			if pe.Line != 5 {
				t.Errorf("%v: line %d, want 5 (the bad field's line; the record starts on line 3 or 2)", err, pe.Line)
			}
		})
	}
}

// TestIsStampede: the accounting header is recognised as ReadStampede
// matches names: quoted, any case, spaces, a byte-order mark, CRLF (issue 13
// item 10).
func TestIsStampede(t *testing.T) {
	for _, c := range []struct {
		head string
		want bool
	}{
		{"jobID,user,account,jobname,queue\nj1,", true},
		{`"jobID","user","account"` + "\r\n", true},
		{"\ufeff\"jobID\",user\r\n", true},
		{"jobid,user\n", true},
		{" JOBID ,user", true}, // no line end yet: the head is all there is
		{"user,jobID,queue\n", true},
		{"jid,ncores\n", false},
		{"jid,jobID\n", false}, // a telemetry table with a column of that name
		{"job,id\n", false},
		{"", false},
		{"\"jobID\n", false}, // unterminated quote
	} {
		if got := IsStampede([]byte(c.head)); got != c.want {
			t.Errorf("IsStampede(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}
