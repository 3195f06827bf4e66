package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
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
	for _, tt := range []struct {
		name string
		args []string
		want string // "" for accepted
	}{
		{"defaults", nil, ""},
		{"logs", []string{"-logs", log, "-m", "60", "-j", "1", "-frame", "30s", "-tz", "Local"}, ""},
		{"seedcompat", []string{"-seedcompat"}, ""},
		{"negative m", []string{"-m", "-3"}, "-m -3"},
		{"zero m", []string{"-m", "0"}, "-m 0"},
		{"zero j", []string{"-j", "0"}, "-j 0"},
		{"negative j", []string{"-j", "-2"}, "-j -2"},
		{"zero frame", []string{"-frame", "0s"}, "-frame 0s"},
		{"negative frame", []string{"-frame", "-1m"}, "-frame -1m0s"},
		{"zero jobs", []string{"-jobs", "0"}, "-jobs 0"},
		{"jobs with logs", []string{"-logs", log, "-jobs", "5"}, "-jobs sets the synthetic log"},
		{"two framings", []string{"-seedcompat", "-forward"}, "choose one"},
		{"bad zone", []string{"-tz", "Mars/Olympus"}, `-tz "Mars/Olympus"`},
		{"missing log", []string{"-logs", filepath.Join(dir, "none.log")}, "-logs"},
		{"directory as log", []string{"-logs", dir}, "not a regular file"},
		{"empty out", []string{"-out", ""}, "-out is empty"},
		{"stray argument", []string{"EventLog"}, `unexpected argument "EventLog"`},
		{"stray argument after flags", []string{"-m", "5", "x"}, `unexpected argument "x"`},
		{"not a number", []string{"-m", "ten"}, "invalid value"},
		{"unknown flag", []string{"-n", "3"}, "not defined"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "-out") {
				args = append([]string{"-out", out}, args...)
			}
			_, err := parseFlags(args, io.Discard)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseFlags(%q) = %v; want a usage error saying %q", tt.args, err, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused command line left %s behind", out)
			}
		})
	}
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
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "writing a synthetic") {
			break
		}
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	go io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "interrupted") {
		t.Errorf("stderr should be one line saying it was interrupted:\n%s", stderr.String())
	}
	left, _ := os.ReadDir(out)
	for _, e := range left {
		t.Errorf("%s left behind by an interrupted run", e.Name())
	}
}
