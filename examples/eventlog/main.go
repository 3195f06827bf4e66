// Command eventlog walks through reading HTCondor event logs: it writes a
// synthetic global event log (or reads the logs given with -logs), counts
// events per code, groups them into jobs with hold cycles and labels, builds
// held-job tensors and saves them as a NumPy dataset with a seeded split.
//
//	go run ./examples/eventlog -out out/eventlog
//	go run ./examples/eventlog -out out/eventlog -logs EventLog.2,EventLog.1,EventLog
//
// Outputs in -out: global.log (the synthetic log), codes.csv, jobs.csv,
// holds.png (when any job was held), dataset.npz, split.json and
// summary.json. Dates written without a zone are read in -tz (UTC by
// default; the zone is printed). Events of no job (id -1.-1.-1, such as
// global-log headers, or the placeholder ids of some test logs) are counted
// and reported, not grouped.
//
// Every flag is checked before anything is written, and stray arguments
// are refused (exit status 2). A file with no valid event is an error: it
// is not an HTCondor event log. Every output is written under a temporary
// name and renamed, so Ctrl-C (exit status 130) never leaves a file cut
// short under its final name.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/pathlist"
	"github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/internal/synth"
)

type options struct {
	out        string
	logs       string
	jobs       int
	seed       uint64
	m, j       int
	frame      time.Duration
	seedCompat bool
	forward    bool
	tz         string

	loc   *time.Location // from tz
	paths []string       // from logs
}

// errUsage marks a flag error: exit status 2, nothing done.
var errUsage = errors.New("usage")

// parseFlags reads and checks every flag before anything is done.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("eventlog", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "out", "out/eventlog", "output directory (e.g. -out /tmp/ev)")
	fs.StringVar(&o.logs, "logs", "", "comma-separated HTCondor event logs to read instead of the synthetic one; rotated sets are ordered oldest first; a path holding a comma is read whole when given alone (e.g. -logs EventLog.1,EventLog)")
	fs.IntVar(&o.jobs, "jobs", 5000, "jobs in the synthetic log, at least 1 (e.g. -jobs 200)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic log, the context-job choice and the split (e.g. -seed 7)")
	fs.IntVar(&o.m, "m", 10, "frames per sample, at least 1 (e.g. -m 60)")
	fs.IntVar(&o.j, "j", 10, "jobs per sample, at least 1: the held job and j-1 context jobs (e.g. -j 5)")
	fs.DurationVar(&o.frame, "frame", time.Minute, "frame length, positive (e.g. -frame 30s)")
	fs.BoolVar(&o.seedCompat, "seedcompat", false, "frame as the published pipeline did: window ending at the first hold, newest first (e.g. -seedcompat)")
	fs.BoolVar(&o.forward, "forward", false, "frame forward from each job's first event, past the hold: leaks the label, for reproducing earlier results only (e.g. -forward)")
	fs.StringVar(&o.tz, "tz", "UTC", "time zone of dates written without one, an IANA name or Local (e.g. -tz America/Chicago)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	bad := func(format string, a ...any) (options, error) {
		return o, fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q: give logs with -logs (see -h)", fs.Arg(0))
	case o.out == "":
		return bad("-out is empty: want a directory")
	case o.m < 1:
		return bad("-m %d: want at least 1 frame", o.m)
	case o.j < 1:
		return bad("-j %d: want at least 1 job per sample", o.j)
	case o.frame <= 0:
		return bad("-frame %s: want a positive duration", o.frame)
	case o.jobs < 1:
		return bad("-jobs %d: want at least 1", o.jobs)
	case o.logs != "" && set["jobs"]:
		return bad("-jobs sets the synthetic log; with -logs the logs decide")
	case o.seedCompat && o.forward:
		return bad("-seedcompat and -forward are two framings: choose one")
	}
	loc, err := zone(o.tz)
	if err != nil {
		return bad("%v", err)
	}
	o.loc = loc
	if o.logs != "" {
		o.paths = pathlist.Split(o.logs)
		for _, p := range o.paths {
			st, err := os.Stat(p)
			if err != nil {
				return bad("-logs: %v", err)
			}
			if !st.Mode().IsRegular() {
				return bad("-logs: %s is not a regular file", p)
			}
		}
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventlog:", strings.TrimPrefix(err.Error(), "usage: "))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, o)
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "eventlog: interrupted; files written so far are complete, the rest were not written")
		os.Exit(130)
	}
	if err != nil {
		// The eventlog package's errors already start with its name.
		msg := err.Error()
		if !strings.HasPrefix(msg, "eventlog: ") {
			msg = "eventlog: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

// errNotLog: a file held no valid event.
var errNotLog = errors.New("not an HTCondor event log")

func run(ctx context.Context, o options) error {
	loc := o.loc
	if loc == nil {
		var err error
		if loc, err = zone(o.tz); err != nil {
			return err
		}
	}
	paths := o.paths
	if paths == nil && o.logs != "" {
		paths = pathlist.Split(o.logs)
	}
	var written []string
	if o.logs == "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		p := filepath.Join(o.out, "global.log")
		fmt.Printf("writing a synthetic global event log of %d jobs (seed %d) to %s\n", o.jobs, o.seed, p)
		var st synth.CondorLogStats
		err := atomicWrite(p, func(f *os.File) error {
			var err error
			st, err = synth.CondorGlobalLog(ctxWriter{ctx, f}, synth.CondorLogConfig{Seed: o.seed, Jobs: o.jobs, Noise: true, JobAds: true, Header: true})
			return err
		})
		if err != nil {
			return err
		}
		fmt.Printf("  %d events, %.1f MB, %d jobs held, %d to release, %d to remove\n", st.Events, float64(st.Bytes)/1e6, st.Held, st.Release, st.Remove)
		paths = []string{p}
		written = append(written, p)
	}
	paths = eventlog.SortRotated(paths)
	fmt.Printf("dates without a zone are read in %s (-tz)\n", loc)

	// Read twice: once keeping every event (for the counts and the speed),
	// once folding the 028 job-ad events into the events they follow.
	fmt.Printf("reading %d file(s): %s\n", len(paths), strings.Join(paths, ", "))
	var size int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		size += st.Size()
	}
	counts := map[eventlog.Code]int{}
	perFile := map[string]int{}
	noJob := 0
	fs := eventlog.NewFiles(paths, eventlog.Options{Lenient: true, Location: loc})
	defer fs.Close()
	start, cpu0 := time.Now(), cpuTime()
	n := 0
	for ev, err := range fs.All() {
		if err != nil {
			return err
		}
		counts[ev.Code]++
		perFile[ev.File]++
		if ev.Job.Cluster < 0 || ev.Job.Proc < 0 || ev.Job.Subproc < 0 {
			noJob++
		}
		n++
		if n%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	for _, p := range paths {
		if perFile[p] == 0 {
			return fmt.Errorf("%s: %w: no valid event in %d bytes (%d damaged events skipped in all files)", p, errNotLog, fileSize(p), fs.Damaged())
		}
	}
	fmt.Printf("  %d events in %s: %.0f MB/s wall, %.0f MB per CPU second; %d damaged skipped, %d overlap events removed\n",
		n, wall.Round(time.Millisecond), float64(size)/1e6/wall.Seconds(), float64(size)/1e6/cpu.Seconds(), fs.Damaged(), fs.Removed())
	// Only logs that hold events make outputs: a refused file leaves nothing.
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if noJob > 0 {
		fmt.Printf("  %d events of no job (id -1.-1.-1: global-log headers, or placeholder ids) are not grouped into jobs\n", noJob)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeCodes(filepath.Join(o.out, "codes.csv"), counts); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "codes.csv"))

	fs = eventlog.NewFiles(paths, eventlog.Options{Lenient: true, Location: loc, FoldJobAds: true})
	defer fs.Close()
	// Each log (and its rotations) is its own source: the job ids of two
	// schedds' logs repeat.
	jobs, err := eventlog.GroupBySource(fs.All())
	if err != nil {
		return err
	}
	for _, w := range fs.Warnings() {
		fmt.Println("warning:", w)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	labels := map[eventlog.Label]int{}
	holdCodes := map[int]int{}
	for _, j := range jobs {
		labels[j.Label()]++
		for _, h := range j.Holds() {
			holdCodes[h.Code]++
		}
	}
	fmt.Printf("grouped %d jobs: %d release, %d remove, %d unlabeled\n", len(jobs), labels[eventlog.Release], labels[eventlog.Remove], labels[eventlog.Unlabeled])
	if err := writeJobs(filepath.Join(o.out, "jobs.csv"), jobs); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "jobs.csv"))
	holds := filepath.Join(o.out, "holds.png")
	if err := os.Remove(holds); err != nil && !errors.Is(err, os.ErrNotExist) { // not this run's
		return err
	}
	err = atomicWrite(holds, func(f *os.File) error {
		f.Close()
		return plot.HoldCodes(f.Name(), "Holds by HoldReasonCode", holdCodes)
	})
	switch {
	case errors.Is(err, plot.ErrNoData):
		fmt.Println("no job was held: holds.png not written")
	case err != nil:
		return err
	default:
		written = append(written, holds)
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	b := eventlog.Builder{M: o.m, J: o.j, Frame: o.frame, Seed: o.seed, Pad: true, SeedCompat: o.seedCompat, Forward: o.forward}
	start, cpu0 = time.Now(), cpuTime()
	samples, err := b.Build(jobs)
	if err != nil {
		return err
	}
	wall, cpu = time.Since(start), cpuTime()-cpu0
	fmt.Printf("built %d samples (J=%d, M=%d, E=%d) in %s: %.0f samples/s wall, %.0f per CPU second\n",
		len(samples), o.j, o.m, eventlog.DefaultE, wall.Round(time.Millisecond), float64(len(samples))/wall.Seconds(), float64(len(samples))/cpu.Seconds())
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := atomicWrite(filepath.Join(o.out, "dataset.npz"), func(f *os.File) error { return eventlog.WriteDataset(f, b, samples) }); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "dataset.npz"))
	tr, va, te := eventlog.Split(len(samples), o.seed, 0.6, 0.2)
	if err := writeJSON(filepath.Join(o.out, "split.json"), map[string][]int{"train": tr, "validate": va, "test": te}); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "split.json"))
	summary := map[string]any{
		"files": paths, "bytes": size, "events": n, "events_not_grouped": noJob, "damaged": fs.Damaged(), "jobs": len(jobs),
		"labels":  map[string]int{"release": labels[eventlog.Release], "remove": labels[eventlog.Remove], "unlabeled": labels[eventlog.Unlabeled]},
		"samples": len(samples), "J": o.j, "M": o.m, "E": eventlog.DefaultE, "frame_s": o.frame.Seconds(), "seedcompat": o.seedCompat, "forward": o.forward,
		"time_zone": loc.String(),
	}
	if err := writeJSON(filepath.Join(o.out, "summary.json"), summary); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "summary.json"))
	fmt.Printf("dataset.npz holds x float32 %d×%d×%d×%d and labels int8; wrote:\n", len(samples), o.j, o.m, eventlog.DefaultE)
	for _, p := range written {
		fmt.Println("  " + p)
	}
	return nil
}

// ctxWriter stops a long write when ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// atomicWrite has write fill a temporary file beside path (same
// extension), then renames it to path; the temporary file is removed on
// failure, so path is never left cut short.
func atomicWrite(path string, write func(*os.File) error) error {
	ext := filepath.Ext(path)
	tmp := strings.TrimSuffix(path, ext) + ".partial" + ext
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// zone resolves -tz: an IANA name, UTC or Local.
func zone(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("-tz %q: %w (want an IANA zone such as Europe/Berlin, UTC or Local)", name, err)
	}
	return loc, nil
}

// cpuTime is this process's CPU time (0 where the system cannot tell).
func cpuTime() time.Duration {
	d, _ := cputime.Self()
	return d
}

func writeCodes(path string, counts map[eventlog.Code]int) error {
	codes := slices.Sorted(func(yield func(eventlog.Code) bool) {
		for c := range counts {
			if !yield(c) {
				return
			}
		}
	})
	rows := [][]string{{"code", "name", "events"}}
	for _, c := range codes {
		rows = append(rows, []string{fmt.Sprintf("%03d", int(c)), c.String(), strconv.Itoa(counts[c])})
	}
	return writeCSV(path, rows)
}

func writeJobs(path string, jobs []*eventlog.Job) error {
	rows := [][]string{{"job", "events", "holds", "first_hold_code", "end", "label", "idle_s", "running_s", "held_s"}}
	for _, j := range jobs {
		holds := j.Holds()
		first := ""
		if len(holds) > 0 && holds[0].HasCode {
			first = strconv.Itoa(holds[0].Code)
		}
		end, _ := j.End()
		t := j.Times()
		rows = append(rows, []string{j.Key.String(), strconv.Itoa(len(j.Events)), strconv.Itoa(len(holds)), first, end.String(), j.Label().String(),
			strconv.FormatFloat(t.Idle.Seconds(), 'f', 0, 64), strconv.FormatFloat(t.Running.Seconds(), 'f', 0, 64), strconv.FormatFloat(t.Held.Seconds(), 'f', 0, 64)})
	}
	return writeCSV(path, rows)
}

func writeCSV(path string, rows [][]string) error {
	return atomicWrite(path, func(f *os.File) error {
		w := csv.NewWriter(f)
		w.WriteAll(rows)
		return w.Error()
	})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicWrite(path, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
}
