// Command eventlog walks through reading HTCondor event logs: it writes a
// synthetic global event log (or reads the logs given with -logs), counts
// events per code, groups them into jobs with hold cycles and labels, builds
// held-job tensors and saves them as a NumPy dataset with a seeded split.
//
//	go run ./examples/eventlog -out out/eventlog
//	go run ./examples/eventlog -out out/eventlog -logs EventLog.2,EventLog.1,EventLog
//
// Outputs in -out: global.log (the synthetic log), codes.csv, jobs.csv,
// holds.png, dataset.npz, split.json and summary.json.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/synth"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

type options struct {
	out        string
	logs       string
	jobs       int
	seed       uint64
	m, j       int
	frame      time.Duration
	seedCompat bool
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "out/eventlog", "output directory")
	flag.StringVar(&o.logs, "logs", "", "comma-separated HTCondor event logs to read instead of the synthetic one (rotated sets are ordered oldest first)")
	flag.IntVar(&o.jobs, "jobs", 5000, "jobs in the synthetic log")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic log, the context-job choice and the split")
	flag.IntVar(&o.m, "m", 10, "frames per sample")
	flag.IntVar(&o.j, "j", 10, "jobs per sample (the held job and j-1 context jobs)")
	flag.DurationVar(&o.frame, "frame", time.Minute, "frame length")
	flag.BoolVar(&o.seedCompat, "seedcompat", false, "frame as the published pipeline did (window ending at the first hold, newest first)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "eventlog:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	paths := strings.Split(o.logs, ",")
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
	}
	paths = eventlog.SortRotated(paths)

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
	fs := eventlog.NewFiles(paths, eventlog.Options{Lenient: true})
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

	fs = eventlog.NewFiles(paths, eventlog.Options{Lenient: true, JobAds: eventlog.FoldJobAds})
	jobs, err := eventlog.GroupSeq("", fs.All())
	if err != nil {
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
	if err := plotHolds(filepath.Join(o.out, "holds.png"), holdCodes); err != nil {
		return err
	}

	b := eventlog.Builder{M: o.m, J: o.j, Frame: o.frame, Seed: o.seed, Pad: true, SeedCompat: o.seedCompat}
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
	tr, va, te := eventlog.Split(len(samples), o.seed, 0.6, 0.2)
	if err := writeJSON(filepath.Join(o.out, "split.json"), map[string][]int{"train": tr, "validate": va, "test": te}); err != nil {
		return err
	}
	summary := map[string]any{
		"files": paths, "bytes": size, "events": n, "jobs": len(jobs),
		"labels":  map[string]int{"release": labels[eventlog.Release], "remove": labels[eventlog.Remove], "unlabeled": labels[eventlog.Unlabeled]},
		"samples": len(samples), "J": o.j, "M": o.m, "E": eventlog.DefaultE, "frame_s": o.frame.Seconds(), "seedcompat": o.seedCompat,
	}
	if err := writeJSON(filepath.Join(o.out, "summary.json"), summary); err != nil {
		return err
	}
	fmt.Printf("wrote codes.csv, jobs.csv, holds.png, dataset.npz (x float32 %d×%d×%d×%d, labels int8), split.json and summary.json to %s\n",
		len(samples), o.j, o.m, eventlog.DefaultE, o.out)
	return nil
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

func plotHolds(path string, holdCodes map[int]int) error {
	codes := slices.Sorted(func(yield func(int) bool) {
		for c := range holdCodes {
			if !yield(c) {
				return
			}
		}
	})
	if len(codes) == 0 {
		return nil
	}
	vals := make(plotter.Values, len(codes))
	names := make([]string, len(codes))
	for i, c := range codes {
		vals[i] = float64(holdCodes[c])
		names[i] = strconv.Itoa(c)
	}
	p := plot.New()
	p.Title.Text = "Holds by HoldReasonCode"
	p.X.Label.Text = "HoldReasonCode"
	p.Y.Label.Text = "holds"
	bars, err := plotter.NewBarChart(vals, vg.Points(18))
	if err != nil {
		return err
	}
	p.Add(bars)
	p.NominalX(names...)
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
