package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/exampletest"
	"github.com/crosscluster/crosscluster/internal/pubdata"
)

func TestMain(m *testing.M) {
	if os.Getenv("EVENTLOG_TEST_MAIN") == "1" { // TestInterrupt: be the program
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFlags: every flag is checked before anything is done; a refused
// command line creates nothing (issue 26 item 13: -m -3 panicked after
// writing files; positional arguments were ignored).
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "user.log")
	if err := os.WriteFile(log, []byte("000 (1.000.000) 03/05 10:00:00 Job submitted from host: <h>\n...\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exampletest.Flags(t, []exampletest.Flag{
		{Name: "defaults", Args: nil, Want: ""},
		{Name: "logs", Args: []string{"-logs", log, "-m", "60", "-j", "1", "-frame", "30s", "-tz", "Local"}, Want: ""},
		{Name: "seedcompat", Args: []string{"-seedcompat"}, Want: ""},
		{Name: "negative m", Args: []string{"-m", "-3"}, Want: "-m -3"},
		{Name: "zero m", Args: []string{"-m", "0"}, Want: "-m 0"},
		{Name: "zero j", Args: []string{"-j", "0"}, Want: "-j 0"},
		{Name: "negative j", Args: []string{"-j", "-2"}, Want: "-j -2"},
		{Name: "zero frame", Args: []string{"-frame", "0s"}, Want: "-frame 0s"},
		{Name: "negative frame", Args: []string{"-frame", "-1m"}, Want: "-frame -1m0s"},
		{Name: "zero jobs", Args: []string{"-jobs", "0"}, Want: "-jobs 0"},
		{Name: "jobs with logs", Args: []string{"-logs", log, "-jobs", "5"}, Want: "-jobs sets the synthetic log"},
		{Name: "two framings", Args: []string{"-seedcompat", "-forward"}, Want: "choose one"},
		{Name: "bad zone", Args: []string{"-tz", "Mars/Olympus"}, Want: `-tz "Mars/Olympus"`},
		{Name: "missing log", Args: []string{"-logs", filepath.Join(dir, "none.log")}, Want: "-logs"},
		{Name: "directory as log", Args: []string{"-logs", dir}, Want: "not a regular file"},
		{Name: "empty out", Args: []string{"-out", ""}, Want: "-out is empty"},
		{Name: "stray argument", Args: []string{"EventLog"}, Want: `unexpected argument "EventLog"`},
		{Name: "stray argument after flags", Args: []string{"-m", "5", "x"}, Want: `unexpected argument "x"`},
		{Name: "not a number", Args: []string{"-m", "ten"}, Want: "invalid value"},
		{Name: "unknown flag", Args: []string{"-n", "3"}, Want: "not defined"},
	}, errUsage, func(args []string) error {
		_, err := parseFlags(args, io.Discard)
		return err
	})
}

// TestNotAnEventLog: a CSV file or an empty file is refused as not an
// HTCondor event log (issue 26 item 11: "0 events, 1 damaged", exit 0).
func TestNotAnEventLog(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"jobs.csv":  "job,events\n1.0.0,3\n2.0.0,4\n",
		"empty.log": "",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		o, err := parseFlags([]string{"-out", out, "-logs", p}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		err = run(context.Background(), o)
		if !errors.Is(err, errNotLog) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: run = %v; want errNotLog naming the file", name, err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused log left %s behind", name, out)
		}
	}
}

// TestRealLogEventsOfNoJob: on a real HTCondor test log the events of job
// -1.-1.-1 are counted and reported, not silently dropped (issue 26 item
// 11: 48 held events vanished without a word).
func TestRealLogEventsOfNoJob(t *testing.T) {
	src := pubdata.Need(t, "htcondor")
	log := filepath.Join(src, "htcondor_test_condor.log")
	// The reference count, by the package itself: events whose id is not
	// a job's.
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	r := eventlog.NewReader(f)
	r.Lenient, r.Location = true, time.UTC
	evs, err := r.ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, ev := range evs {
		if ev.Job.Cluster < 0 {
			want++
		}
	}
	if want == 0 {
		t.Fatal("the test log holds no event of job -1.-1.-1; pick another")
	}
	out := t.TempDir()
	o, err := parseFlags([]string{"-out", out, "-logs", log, "-m", "5", "-j", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Events   int `json:"events"`
		NotGroup int `json:"events_not_grouped"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.NotGroup != want || s.Events != len(evs) {
		t.Errorf("summary: %d events, %d not grouped; want %d and %d", s.Events, s.NotGroup, len(evs), want)
	}
}

// TestInterrupt: Ctrl-C while the synthetic log is written exits 130 with
// one line on standard error and leaves no file cut short under its final
// name, nor a temporary one.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(exe, "-out", out, "-jobs", "5000000")
	cmd.Env = append(os.Environ(), "EVENTLOG_TEST_MAIN=1")
	stderr := exampletest.InterruptAtLine(t, cmd, "writing a synthetic", 200*time.Millisecond)
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "interrupted") {
		t.Errorf("stderr should be one line saying it was interrupted:\n%s", stderr)
	}
	left, _ := os.ReadDir(out)
	for _, e := range left {
		t.Errorf("%s left behind by an interrupted run", e.Name())
	}
}
