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
// default; the zone is printed).
package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "out/eventlog", "output directory (e.g. -out /tmp/ev)")
	flag.StringVar(&o.logs, "logs", "", "comma-separated HTCondor event logs to read instead of the synthetic one; rotated sets are ordered oldest first; a path holding a comma is read whole when given alone (e.g. -logs EventLog.1,EventLog)")
	flag.IntVar(&o.jobs, "jobs", 5000, "jobs in the synthetic log (e.g. -jobs 200)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic log, the context-job choice and the split (e.g. -seed 7)")
	flag.IntVar(&o.m, "m", 10, "frames per sample (e.g. -m 60)")
	flag.IntVar(&o.j, "j", 10, "jobs per sample: the held job and j-1 context jobs (e.g. -j 5)")
	flag.DurationVar(&o.frame, "frame", time.Minute, "frame length (e.g. -frame 30s)")
	flag.BoolVar(&o.seedCompat, "seedcompat", false, "frame as the published pipeline did: window ending at the first hold, newest first (e.g. -seedcompat)")
	flag.BoolVar(&o.forward, "forward", false, "frame forward from each job's first event, past the hold: leaks the label, for reproducing earlier results only (e.g. -forward)")
	flag.StringVar(&o.tz, "tz", "UTC", "time zone of dates written without one, an IANA name or Local (e.g. -tz America/Chicago)")
	flag.Parse()
	if err := run(o); err != nil {
		// The eventlog package's errors already start with its name.
		msg := err.Error()
		if !strings.HasPrefix(msg, "eventlog: ") {
			msg = "eventlog: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

func run(o options) error {
	loc, err := zone(o.tz)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var written []string
	paths := pathlist.Split(o.logs)
	if o.logs == "" {
		p := filepath.Join(o.out, "global.log")
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		fmt.Printf("writing a synthetic global event log of %d jobs (seed %d) to %s\n", o.jobs, o.seed, p)
		st, err := synth.CondorGlobalLog(f, synth.CondorLogConfig{Seed: o.seed, Jobs: o.jobs, Noise: true, JobAds: true, Header: true})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
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
	fs := eventlog.NewFiles(paths, eventlog.Options{Lenient: true, Location: loc})
	start, cpu0 := time.Now(), cpuTime()
	n := 0
	for ev, err := range fs.All() {
		if err != nil {
			return err
		}
		counts[ev.Code]++
		n++
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	fmt.Printf("  %d events in %s: %.0f MB/s wall, %.0f MB per CPU second; %d damaged skipped, %d overlap events removed\n",
		n, wall.Round(time.Millisecond), float64(size)/1e6/wall.Seconds(), float64(size)/1e6/cpu.Seconds(), fs.Damaged(), fs.Removed())
	if err := writeCodes(filepath.Join(o.out, "codes.csv"), counts); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "codes.csv"))

	fs = eventlog.NewFiles(paths, eventlog.Options{Lenient: true, Location: loc, FoldJobAds: true})
	// Each log (and its rotations) is its own source: the job ids of two
	// schedds' logs repeat.
	jobs, err := eventlog.GroupBySource(fs.All())
	if err != nil {
		return err
	}
	for _, w := range fs.Warnings() {
		fmt.Println("warning:", w)
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
	switch err := plot.HoldCodes(filepath.Join(o.out, "holds.png"), "Holds by HoldReasonCode", holdCodes); {
	case errors.Is(err, plot.ErrNoData):
		fmt.Println("no job was held: holds.png not written")
	case err != nil:
		return err
	default:
		written = append(written, filepath.Join(o.out, "holds.png"))
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
	df, err := os.Create(filepath.Join(o.out, "dataset.npz"))
	if err != nil {
		return err
	}
	err = eventlog.WriteDataset(df, b, samples)
	if cerr := df.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "dataset.npz"))
	tr, va, te := eventlog.Split(len(samples), o.seed, 0.6, 0.2)
	if err := writeJSON(filepath.Join(o.out, "split.json"), map[string][]int{"train": tr, "validate": va, "test": te}); err != nil {
		return err
	}
	written = append(written, filepath.Join(o.out, "split.json"))
	summary := map[string]any{
		"files": paths, "bytes": size, "events": n, "jobs": len(jobs),
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
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
