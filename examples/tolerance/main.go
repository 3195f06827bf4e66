// Command tolerance runs the same chaotic simulation on several "boxes",
// collects each box's NumPy archive and reports the pairwise maximum
// divergence of every key, with pass/fail against a tolerance on the
// per-step norm and, if asked, element by element as
// numpy.testing.assert_allclose does.
//
// By default the boxes are three local git checkouts under -out, each
// running this program's simulation with a different but valid
// floating-point evaluation order (see sim.go); they are synced to one
// commit, launched, polled and collected with divergence.Sync and
// divergence.Replicate exactly as real machines would be. With -hosts FILE
// the hosts registry names real machines (see divergence.Host) whose
// command writes an .npz with the keys to compare; they are first synced
// to the HEAD of -sync (default: the current directory's checkout) unless
// -no-sync.
//
// Usage:
//
//	go run ./examples/tolerance -out DIR [-hosts FILE] [-sync REPO | -no-sync] [-allow-dirty]
//	    [-tol 1e-4] [-rtol 1e-7] [-atol 0] [-norm L2|Linf] [-allow-failed-hosts]
//
// Outputs in DIR: collected/<box>.npz (each box's archive), hosts.json
// (each host's status, launch name, commit at launch and collected file),
// pairs.json and pairs.csv (one row per pair and key), series_z_b.csv and
// divergence_z_b.png (the per-step L2 divergence of z_b for each pair).
// The exit status is 1 when any pair and key fails a bound, and when any
// host did not finish (its run failed, vanished or timed out, it could not
// be reached, was not at the synced commit, or returned another host's
// archive) unless -allow-failed-hosts: a verdict over the hosts that
// happened to finish is not a verdict over the hosts asked for.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/divergence"
	"github.com/crosscluster/crosscluster/internal/npy"
	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/internal/sh"
)

// config is what the flags set.
type config struct {
	out, hostsFile, stem, normName, syncRepo  string
	tol, rtol, atol                           float64
	allclose, noSync, allowDirty, allowFailed bool
	steps                                     int
	budget, poll                              time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "out", "output directory (e.g. -out /tmp/tol)")
	flag.StringVar(&c.hostsFile, "hosts", "", "hosts registry YAML; default: three local boxes (e.g. -hosts hosts.yaml)")
	flag.StringVar(&c.stem, "stem", "tolerance", "run stem ({stem} in host commands) (e.g. -stem run42)")
	flag.Float64Var(&c.tol, "tol", 1e-4, "tolerance on every key's max per-step divergence; negative: none (e.g. -tol 1e-3)")
	flag.Float64Var(&c.rtol, "rtol", 1e-7, "with -allclose (or when given), element-wise relative tolerance as numpy.testing.assert_allclose's rtol (e.g. -rtol 1e-5)")
	flag.Float64Var(&c.atol, "atol", 0, "with -allclose (or when given), element-wise absolute tolerance as assert_allclose's atol (e.g. -atol 1e-9)")
	flag.BoolVar(&c.allclose, "allclose", false, "also check every element as numpy.testing.assert_allclose(a, b, rtol, atol) does, reporting how many differ and where the largest difference is (e.g. -allclose)")
	flag.StringVar(&c.normName, "norm", "L2", "norm over the axes after the first: L2 or Linf (e.g. -norm Linf)")
	flag.StringVar(&c.syncRepo, "sync", "", "bring every host to this controller checkout's HEAD before launching; default: the current directory with -hosts, the boxes' origin without (e.g. -sync ~/src/model)")
	flag.BoolVar(&c.noSync, "no-sync", false, "skip the pre-launch sync; each host's commit is still recorded (e.g. -no-sync)")
	flag.BoolVar(&c.allowDirty, "allow-dirty", false, "sync hosts with uncommitted changes to tracked files (e.g. -allow-dirty)")
	flag.BoolVar(&c.allowFailed, "allow-failed-hosts", false, "judge only the hosts that finished: a host that failed, vanished, timed out or could not be reached no longer fails the verdict (at least two must finish) (e.g. -allow-failed-hosts)")
	flag.IntVar(&c.steps, "steps", 15000, "local boxes: RK4 steps of 1 ms (e.g. -steps 3000)")
	flag.DurationVar(&c.budget, "budget", 10*time.Minute, "poll budget for the runs (e.g. -budget 30m)")
	flag.DurationVar(&c.poll, "poll", 200*time.Millisecond, "poll interval (e.g. -poll 1s)")
	// Box mode: what a local box's command runs.
	boxVariant := flag.Int("box-variant", -1, "internal: run one box's simulation with this evaluation order")
	boxOut := flag.String("box-out", "", "internal: archive the box writes")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { c.allclose = c.allclose || f.Name == "rtol" || f.Name == "atol" })

	if *boxVariant >= 0 {
		if err := writeBox(*boxOut, c.steps, 10, *boxVariant); err != nil {
			fmt.Fprintln(os.Stderr, "tolerance box:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "tolerance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	var norm divergence.Norm
	switch c.normName {
	case "L2":
		norm = divergence.L2
	case "Linf":
		norm = divergence.LInf
	default:
		return fmt.Errorf("-norm %q: want L2 or Linf", c.normName)
	}
	if c.allclose && !(c.rtol >= 0 && c.atol >= 0) {
		return fmt.Errorf("-rtol %g, -atol %g: both must be ≥ 0", c.rtol, c.atol)
	}
	out, err := filepath.Abs(c.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var hosts []divergence.Host
	syncRepo := c.syncRepo
	if c.hostsFile != "" {
		f, err := os.Open(c.hostsFile)
		if err != nil {
			return err
		}
		hosts, err = divergence.LoadHosts(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.hostsFile, err)
		}
		if syncRepo == "" {
			syncRepo = "."
		}
	} else {
		var origin string
		hosts, origin, err = localBoxes(ctx, out, c.steps)
		if err != nil {
			return err
		}
		if syncRepo == "" {
			syncRepo = origin
		}
	}
	commit := ""
	if !c.noSync {
		commit, err = divergence.Head(ctx, syncRepo)
		if err != nil {
			return fmt.Errorf("the pre-launch sync needs a git checkout to take HEAD from (-sync REPO), or -no-sync to skip it: %w", err)
		}
		fmt.Printf("syncing %d hosts to %s (HEAD of %s)\n", len(hosts), commit, syncRepo)
		synced, err := divergence.Sync(ctx, hosts, commit, divergence.SyncOptions{AllowDirty: c.allowDirty})
		for _, s := range synced {
			fmt.Printf("  %s at %s (dirty %v)\n", s.Host, s.Commit, s.Dirty)
		}
		if err != nil {
			return err
		}
	}

	fmt.Printf("replicating %q on %d hosts\n", c.stem, len(hosts))
	start := time.Now()
	outcomes, err := divergence.Replicate(ctx, hosts, divergence.ReplicateConfig{
		Stem: c.stem, Dest: filepath.Join(out, "collected"), Poll: c.poll, Budget: c.budget, Progress: os.Stderr, Commit: commit,
	})
	if err != nil && !errors.Is(err, divergence.ErrTooFew) {
		return err
	}
	fmt.Printf("replication took %s\n", time.Since(start).Round(time.Millisecond))
	for _, o := range outcomes {
		at := o.Commit
		if at == "" {
			at = "no git checkout"
		} else if o.Dirty {
			at += " (uncommitted changes)"
		}
		fmt.Printf("  %-14s %-9s launch %s at %s\n", o.Host, o.Status, o.Launch, at)
	}
	if werr := writeFile(filepath.Join(out, "hosts.json"), func(b *bytes.Buffer) error { return writeOutcomes(b, outcomes) }); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	var runs []divergence.NamedRun
	for _, o := range outcomes {
		if o.Status == divergence.Finished {
			runs = append(runs, divergence.NamedRun{Name: o.Host, Path: o.Path})
		}
	}
	hostsErr := unfinished(outcomes)
	if hostsErr != nil && c.allowFailed {
		fmt.Printf("-allow-failed-hosts: comparing the %d hosts that finished; %v\n", len(runs), hostsErr)
		hostsErr = nil
	}

	opt := divergence.Options{Norm: norm}
	if c.tol >= 0 {
		opt.Tolerance = map[string]float64{"*": c.tol}
	}
	if c.allclose {
		opt.Close = map[string]divergence.Closeness{"*": {RTol: c.rtol, ATol: c.atol}}
	}
	rows, err := divergence.CompareContext(ctx, runs, nil, opt)
	if err != nil {
		return err
	}
	fmt.Printf("\npairwise max divergence (%v over the axes after the first):\n", norm)
	divergence.WriteText(os.Stdout, rows)
	if err := writeFile(filepath.Join(out, "pairs.json"), func(b *bytes.Buffer) error { return divergence.WriteJSON(b, rows) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, "pairs.csv"), func(b *bytes.Buffer) error { return divergence.WriteCSV(b, rows) }); err != nil {
		return err
	}
	wrote, err := seriesOutputs(out, runs, c.tol)
	if err != nil {
		return err
	}
	fmt.Printf("\nwrote %s/{%s}\n", out, strings.Join(append(append([]string{"hosts.json", "pairs.json", "pairs.csv"}, wrote...), "collected/"), ","))
	return errors.Join(hostsErr, verdict(rows))
}

// errHosts is the verdict when a host did not finish.
var errHosts = errors.New("hosts did not finish")

// unfinished returns nil when every host finished, else an error naming
// each other host, its status and why.
func unfinished(outcomes []divergence.Outcome) error {
	var bad []string
	for _, o := range outcomes {
		if o.Status == divergence.Finished {
			continue
		}
		s := o.Host + " " + o.Status.String()
		if o.Err != nil {
			s += " (" + strings.TrimPrefix(o.Err.Error(), "divergence: ") + ")"
		}
		bad = append(bad, s)
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d of %d: %s; only the hosts that finished were compared (-allow-failed-hosts accepts that)",
		errHosts, len(bad), len(outcomes), strings.Join(bad, "; "))
}

// writeOutcomes writes each host's outcome as JSON: what ran where, at
// which commit, and what was collected.
func writeOutcomes(b *bytes.Buffer, outcomes []divergence.Outcome) error {
	type host struct {
		Host      string `json:"host"`
		Status    string `json:"status"`
		Launch    string `json:"launch"`
		Commit    string `json:"commit"`
		Dirty     bool   `json:"dirty"`
		Launched  string `json:"launched,omitempty"`
		Exit      int    `json:"exit"`
		Remote    string `json:"remote,omitempty"`
		FileID    string `json:"file_id,omitempty"`
		Collected string `json:"collected,omitempty"`
		Error     string `json:"error,omitempty"`
	}
	hs := make([]host, len(outcomes))
	for i, o := range outcomes {
		hs[i] = host{Host: o.Host, Status: o.Status.String(), Launch: o.Launch, Commit: o.Commit, Dirty: o.Dirty,
			Exit: o.Exit, Remote: o.Remote, FileID: o.FileID, Collected: o.Path}
		if !o.Launched.IsZero() {
			hs[i].Launched = o.Launched.UTC().Format(time.RFC3339Nano)
		}
		if o.Err != nil {
			hs[i].Error = o.Err.Error()
		}
	}
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(hs)
}

// errFail is the verdict when a bounded row did not pass.
var errFail = errors.New("tolerance exceeded")

// verdict returns nil when every bounded row passes, else an error naming
// each failing pair and key (and the program exits 1). A row that could not
// be compared (missing key, shape mismatch, NaN) under a bound fails.
func verdict(rows []divergence.Row) error {
	var bad []string
	bounded := 0
	for _, r := range rows {
		if !r.Bounded {
			continue
		}
		bounded++
		if r.Pass {
			continue
		}
		var why []string
		switch {
		case r.Warning != "":
			why = append(why, r.Warning)
		case math.IsNaN(r.Max):
			why = append(why, "NaN on one side only")
		case r.HasTolerance && r.Max > r.Tolerance:
			why = append(why, fmt.Sprintf("max %.6e at step %d > tol %.6e", r.Max, r.MaxStep, r.Tolerance))
		}
		if r.Close != nil && r.Mismatched > 0 {
			why = append(why, fmt.Sprintf("%d of %d elements outside rtol=%g, atol=%g; largest |a-b| %.6e at %v",
				r.Mismatched, r.Elements, r.Close.RTol, r.Close.ATol, r.MaxAbs, r.MaxAbsAt))
		}
		bad = append(bad, fmt.Sprintf("%s vs %s %s (%s)", r.A, r.B, r.Key, strings.Join(why, "; ")))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d of %d rows FAIL: %s", errFail, len(bad), bounded, strings.Join(bad, "; "))
	}
	return nil
}

// boxScript is the run script committed in the boxes' origin: what a box
// runs, so that the commit each box is at says what it ran.
const boxScript = `#!/bin/sh
# One tolerance box's run (written by examples/tolerance): evaluation
# order $1, archive out/$2.npz. TOLERANCE_EXE is the tolerance binary.
exec "$TOLERANCE_EXE" -box-variant "$1" -steps %d -box-out "out/$2.npz"
`

// localBoxes lays out three boxes, git clones of an origin checkout under
// out that holds the run script, whose command runs the script with
// evaluation order 0, 1 or 2. It returns the hosts and the origin, which
// the boxes sync to. A box that exists is kept (the sync brings it to the
// origin's HEAD); a changed script is committed in the origin.
func localBoxes(ctx context.Context, out string, steps int) ([]divergence.Host, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	origin := filepath.Join(out, "boxes", "origin")
	gitc := func(dir string, args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "user.name=tolerance", "-c", "user.email=tolerance@localhost",
			"-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false"}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, bytes.TrimSpace(b))
		}
		return nil
	}
	if err := os.MkdirAll(origin, 0o755); err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(filepath.Join(origin, ".git")); err != nil {
		if err := gitc(origin, "init", "-q"); err != nil {
			return nil, "", err
		}
	}
	script := fmt.Sprintf(boxScript, steps)
	if old, err := os.ReadFile(filepath.Join(origin, "run.sh")); err != nil || string(old) != script {
		if err := os.WriteFile(filepath.Join(origin, "run.sh"), []byte(script), 0o755); err != nil {
			return nil, "", err
		}
		if err := gitc(origin, "add", "run.sh"); err != nil {
			return nil, "", err
		}
		if err := gitc(origin, "commit", "-q", "-m", fmt.Sprintf("run.sh: %d steps", steps)); err != nil {
			return nil, "", err
		}
	}
	var hosts []divergence.Host
	for v, name := range []string{"box-textbook", "box-reordered", "box-fma"} {
		dir := filepath.Join(out, "boxes", name)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
			if err := gitc(filepath.Dir(dir), "clone", "-q", origin, name); err != nil {
				return nil, "", err
			}
		}
		cmd := fmt.Sprintf("TOLERANCE_EXE=%s sh run.sh %d {stem}", sh.Quote(exe), v)
		hosts = append(hosts, divergence.Host{Name: name, Repo: dir, Command: cmd, Output: "out"})
	}
	return hosts, origin, nil
}

func writeFile(path string, fill func(*bytes.Buffer) error) error {
	var b bytes.Buffer
	if err := fill(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func writeNPZ(path string, data map[string][]float64, shapes [][]int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	z := npy.NewZipWriter(f, false)
	for i, k := range []string{"z_b", "omega_b"} {
		if err := z.Add(k, shapes[i], data[k]); err != nil {
			f.Close()
			return err
		}
	}
	if err := z.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// seriesOutputs writes the per-step L2 divergence of z_b for every pair
// as CSV and as a log-scale plot, and returns the names of the files it
// wrote. Pairs whose z_b have different shapes have no series; pairs of
// different lengths (hosts that ran different step counts) each get their
// own length, the CSV's cells past a pair's end left empty.
func seriesOutputs(out string, runs []divergence.NamedRun, tol float64) ([]string, error) {
	opened := make([]*divergence.Run, len(runs))
	for i, r := range runs {
		o, err := divergence.Open(r.Path)
		if err != nil {
			return nil, err
		}
		defer o.Close()
		opened[i] = o
	}
	var curves []cplot.Curve
	header := []string{"step"}
	steps := 0
	for i := range opened {
		for j := i + 1; j < len(opened); j++ {
			s, err := divergence.Series(opened[i], opened[j], "z_b", divergence.L2)
			if err != nil {
				fmt.Printf("no series for %s vs %s: %v\n", runs[i].Name, runs[j].Name, err)
				continue
			}
			header = append(header, runs[i].Name+" vs "+runs[j].Name)
			curves = append(curves, cplot.Curve{Name: header[len(header)-1], Y: s})
			steps = max(steps, len(s))
		}
	}
	// A figure or table from an earlier run must not pass for this one's.
	for _, f := range []string{"series_z_b.csv", "divergence_z_b.png"} {
		if err := os.Remove(filepath.Join(out, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if len(curves) == 0 {
		return nil, nil
	}
	var csv strings.Builder
	csv.WriteString(strings.Join(header, ",") + "\n")
	for k := range steps {
		csv.WriteString(strconv.Itoa(k))
		for _, c := range curves {
			csv.WriteString(",")
			if k < len(c.Y) {
				csv.WriteString(strconv.FormatFloat(c.Y[k], 'g', 17, 64))
			}
		}
		csv.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(out, "series_z_b.csv"), []byte(csv.String()), 0o644); err != nil {
		return nil, err
	}
	wrote := []string{"series_z_b.csv"}
	err := cplot.Divergence(filepath.Join(out, "divergence_z_b.png"), "z_b: per-step L2 divergence between boxes",
		"recorded step (10 ms)", "‖z_a(t) − z_b(t)‖", curves, tol)
	switch {
	case errors.Is(err, cplot.ErrNoData):
		fmt.Println("every pair agrees exactly on z_b: divergence_z_b.png not written")
		return wrote, nil
	case err != nil:
		return nil, err
	}
	return append(wrote, "divergence_z_b.png"), nil
}
