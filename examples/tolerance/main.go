// Command tolerance runs the same chaotic simulation on several "boxes",
// collects each box's NumPy archive and reports the pairwise maximum
// divergence of every key, with pass/fail against a tolerance on the
// per-step norm and, if asked, element by element as
// numpy.testing.assert_allclose does.
//
// By default the boxes are three local git checkouts under -out, each
// running this program's simulation with a different but valid
// floating-point evaluation order (see sim.go) and writing its archive with
// divergence.Writer; divergence.Replicate syncs them to one commit,
// launches, polls and collects them exactly as real machines would be. With
// -hosts FILE
// the hosts registry names real machines (see divergence.Host) whose
// command writes an .npz with the keys to compare; they are first synced
// to the HEAD of -sync (default: the current directory's checkout) unless
// -no-sync.
//
// Usage:
//
//	go run ./examples/tolerance -out DIR [-hosts FILE] [-sync REPO | -no-sync] [-allow-dirty]
//	    [-tol 1e-4] [-rtol 1e-7] [-atol 0] [-norm L2|Linf] [-allow-failed-hosts]
//	    [-stem NAME] [-steps 15000] [-budget 10m]
//
// Outputs in DIR: collected/<box>.npz (each box's archive), hosts.json
// (each host's status, launch name, commit at launch and collected file),
// pairs.json and pairs.csv (one row per pair and key), and for every key
// series_<key>.csv and divergence_<key>.png (the per-step divergence of
// the key for each pair, in the norm of -norm); the keys are listed with
// the failing ones first. Every file is written under a temporary name
// and renamed, so an interrupted run (Ctrl-C: exit status 130) leaves no
// file cut short under its final name.
//
// Every flag is checked before anything is written; stray arguments are
// refused. The exit status is 1 when any pair and key fails a bound, and
// when any host did not finish (its run failed, vanished or timed out, it
// could not be reached or synced, was not at the synced commit, or
// returned another host's archive) unless -allow-failed-hosts: a verdict
// over the hosts that happened to finish is not a verdict over the hosts
// asked for; 2 for a usage error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/divergence"
	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/internal/sh"
)

// config is what the flags set.
type config struct {
	out, hostsFile, stem, normName, syncRepo  string
	tol, rtol, atol                           float64
	allclose, noSync, allowDirty, allowFailed bool
	steps                                     int
	budget                                    time.Duration

	norm  divergence.Norm   // from normName
	hosts []divergence.Host // from hostsFile, when given
}

// box is what a local box's command runs (internal flags).
type box struct {
	variant int
	out     string
}

// errUsage marks a flag error: exit status 2, nothing done.
var errUsage = errors.New("usage")

// stemRE is what divergence.Replicate accepts as a stem.
var stemRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// parseFlags reads and checks every flag before anything is done.
func parseFlags(args []string, stderr io.Writer) (config, *box, error) {
	var c config
	fs := flag.NewFlagSet("tolerance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.out, "out", "out", "output directory (e.g. -out /tmp/tol)")
	fs.StringVar(&c.hostsFile, "hosts", "", "hosts registry YAML; default: three local boxes (e.g. -hosts hosts.yaml)")
	fs.StringVar(&c.stem, "stem", "tolerance", "run stem ({stem} in host commands), [A-Za-z0-9._-]+ (e.g. -stem run42)")
	fs.Float64Var(&c.tol, "tol", 1e-4, "tolerance on every key's max per-step divergence; negative: none (e.g. -tol 1e-3)")
	fs.Float64Var(&c.rtol, "rtol", 1e-7, "with -allclose (or when given), element-wise relative tolerance as numpy.testing.assert_allclose's rtol (e.g. -rtol 1e-5)")
	fs.Float64Var(&c.atol, "atol", 0, "with -allclose (or when given), element-wise absolute tolerance as assert_allclose's atol (e.g. -atol 1e-9)")
	fs.BoolVar(&c.allclose, "allclose", false, "also check every element as numpy.testing.assert_allclose(a, b, rtol, atol) does, reporting how many differ and where the largest difference is (e.g. -allclose)")
	fs.StringVar(&c.normName, "norm", "L2", "norm over the axes after the first, for the verdict and the plots: L2 or Linf (e.g. -norm Linf)")
	fs.StringVar(&c.syncRepo, "sync", "", "bring every host to this controller checkout's HEAD before launching; default: the current directory with -hosts, the boxes' origin without (e.g. -sync ~/src/model)")
	fs.BoolVar(&c.noSync, "no-sync", false, "skip the pre-launch sync; each host's commit is still recorded (e.g. -no-sync)")
	fs.BoolVar(&c.allowDirty, "allow-dirty", false, "sync hosts with uncommitted changes to tracked files (e.g. -allow-dirty)")
	fs.BoolVar(&c.allowFailed, "allow-failed-hosts", false, "judge only the hosts that finished: a host that failed, vanished, timed out or could not be reached no longer fails the verdict (at least two must finish) (e.g. -allow-failed-hosts)")
	fs.IntVar(&c.steps, "steps", 15000, "local boxes: RK4 steps of 1 ms, at least 10 (e.g. -steps 3000)")
	fs.DurationVar(&c.budget, "budget", 10*time.Minute, "poll budget for the runs (e.g. -budget 30m)")
	boxVariant := fs.Int("box-variant", -1, "internal: run one box's simulation with this evaluation order (0, 1 or 2)")
	boxOut := fs.String("box-out", "", "internal: archive the box writes")
	if err := fs.Parse(args); err != nil {
		return c, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.allclose = c.allclose || set["rtol"] || set["atol"]
	bad := func(format string, a ...any) (config, *box, error) {
		return c, nil, fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q: every input is a flag (see -h)", fs.Arg(0))
	}
	if c.steps < 10 {
		return bad("-steps %d: want at least 10 (one step of the archive is recorded every 10)", c.steps)
	}
	if set["box-variant"] || set["box-out"] {
		if *boxVariant < 0 || *boxVariant > 2 || *boxOut == "" {
			return bad("-box-variant %d -box-out %q: internal flags, want a variant 0, 1 or 2 and an output path", *boxVariant, *boxOut)
		}
		return c, &box{variant: *boxVariant, out: *boxOut}, nil
	}
	switch c.normName {
	case "L2":
		c.norm = divergence.L2
	case "Linf":
		c.norm = divergence.LInf
	default:
		return bad("-norm %q: want L2 or Linf", c.normName)
	}
	switch {
	case c.out == "":
		return bad("-out is empty: want a directory")
	case !stemRE.MatchString(c.stem):
		return bad("-stem %q: want letters, digits, '.', '_' or '-'", c.stem)
	case math.IsNaN(c.tol) || math.IsInf(c.tol, 0):
		return bad("-tol %g: want a finite number (negative: no tolerance)", c.tol)
	case c.allclose && !(c.rtol >= 0 && c.atol >= 0 && !math.IsInf(c.rtol, 0) && !math.IsInf(c.atol, 0)):
		return bad("-rtol %g, -atol %g: both must be finite and ≥ 0", c.rtol, c.atol)
	case c.budget <= 0:
		return bad("-budget %s: want a positive duration", c.budget)
	case c.noSync && (set["sync"] || c.allowDirty):
		return bad("-no-sync with -sync or -allow-dirty: choose whether to sync")
	case c.hostsFile != "" && set["steps"]:
		return bad("-steps sets the local boxes' run; with -hosts each host's command decides")
	}
	if c.hostsFile != "" {
		f, err := os.Open(c.hostsFile)
		if err != nil {
			return bad("-hosts: %v", err)
		}
		c.hosts, err = divergence.LoadHosts(f)
		f.Close()
		if err != nil {
			return bad("-hosts %s: %v", c.hostsFile, err)
		}
	}
	if c.syncRepo != "" {
		if st, err := os.Stat(c.syncRepo); err != nil || !st.IsDir() {
			return bad("-sync %q: not a directory", c.syncRepo)
		}
	}
	return c, nil, nil
}

func main() {
	c, bx, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tolerance:", strings.TrimPrefix(err.Error(), "usage: "))
		os.Exit(2)
	}
	if bx != nil {
		if err := writeBox(bx.out, c.steps, 10, bx.variant); err != nil {
			fmt.Fprintln(os.Stderr, "tolerance box:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, c)
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "tolerance: interrupted; files written so far are complete, the rest were not written")
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tolerance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	out, err := filepath.Abs(c.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	hosts := c.hosts
	syncRepo := c.syncRepo
	if c.hostsFile != "" && hosts == nil {
		f, err := os.Open(c.hostsFile)
		if err != nil {
			return err
		}
		hosts, err = divergence.LoadHosts(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.hostsFile, err)
		}
	}
	if c.hostsFile != "" {
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
		commit, err = gitHead(ctx, syncRepo)
		if err != nil {
			return fmt.Errorf("the pre-launch sync needs a git checkout to take HEAD from (-sync REPO), or -no-sync to skip it: %w", err)
		}
		fmt.Printf("syncing %d hosts to %s (HEAD of %s)\n", len(hosts), commit, syncRepo)
	}

	fmt.Printf("replicating %q on %d hosts\n", c.stem, len(hosts))
	start := time.Now()
	outcomes, err := divergence.Replicate(ctx, hosts, divergence.ReplicateConfig{
		Stem: c.stem, Dest: filepath.Join(out, "collected"), Budget: c.budget, Progress: os.Stderr, Commit: commit, AllowDirty: c.allowDirty,
	})
	if err != nil && !errors.Is(err, divergence.ErrTooFew) {
		return err
	}
	fmt.Printf("replication took %s\n", time.Since(start).Round(time.Millisecond))
	for _, o := range outcomes {
		at := o.Commit
		if at == "" {
			at = "no git checkout"
		}
		fmt.Printf("  %-14s %-9s launch %s at %s\n", o.Host, status(o), o.Launch, at)
	}
	if werr := writeFile(filepath.Join(out, "hosts.json"), func(b *bytes.Buffer) error { return writeOutcomes(b, outcomes) }); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	var runs []divergence.NamedRun
	for _, o := range outcomes {
		if o.Err == nil {
			runs = append(runs, divergence.NamedRun{Name: o.Host, Path: o.Path})
		}
	}
	hostsErr := unfinished(outcomes)
	if hostsErr != nil && c.allowFailed {
		fmt.Printf("-allow-failed-hosts: comparing the %d hosts that finished; %v\n", len(runs), hostsErr)
		hostsErr = nil
	}

	opt := divergence.Options{Norm: c.norm}
	if c.tol >= 0 {
		opt.Tolerance = map[string]float64{"*": c.tol}
	}
	if c.allclose {
		opt.Close = map[string]divergence.Closeness{"*": {RTol: c.rtol, ATol: c.atol}}
	}
	rows, err := divergence.Compare(ctx, runs, nil, opt)
	if err != nil {
		return err
	}
	fmt.Printf("\npairwise max divergence (%s over the axes after the first):\n", c.normName)
	for _, r := range rows {
		fmt.Println(r)
	}
	if err := writeFile(filepath.Join(out, "pairs.json"), func(b *bytes.Buffer) error { return divergence.WriteJSON(b, rows) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, "pairs.csv"), func(b *bytes.Buffer) error { return divergence.WriteCSV(b, rows) }); err != nil {
		return err
	}
	wrote, err := seriesOutputs(ctx, out, runs, rows, c)
	if err != nil {
		return err
	}
	fmt.Printf("\nwrote %s/{%s}\n", out, strings.Join(append(append([]string{"hosts.json", "pairs.json", "pairs.csv"}, wrote...), "collected/"), ","))
	return errors.Join(hostsErr, verdict(rows, c))
}

// status is a host's outcome in capitals.
func status(o divergence.Outcome) string {
	if o.Err == nil {
		return "FINISHED"
	}
	return "FAILED"
}

// gitHead returns the commit checked out in the repository dir.
func gitHead(ctx context.Context, dir string) (string, error) {
	b, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", "HEAD^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD in %s: %w", dir, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// errHosts is the verdict when a host did not finish.
var errHosts = errors.New("hosts did not finish")

// unfinished returns nil when every host finished, else an error naming
// each other host and why.
func unfinished(outcomes []divergence.Outcome) error {
	var bad []string
	for _, o := range outcomes {
		if o.Err == nil {
			continue
		}
		bad = append(bad, o.Host+" FAILED ("+strings.TrimPrefix(o.Err.Error(), "divergence: ")+")")
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
		Collected string `json:"collected,omitempty"`
		Error     string `json:"error,omitempty"`
	}
	hs := make([]host, len(outcomes))
	for i, o := range outcomes {
		hs[i] = host{Host: o.Host, Status: status(o), Launch: o.Launch, Commit: o.Commit, Collected: o.Path}
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

// bounded reports whether c puts a bound on the rows.
func (c config) bounded() bool { return c.tol >= 0 || c.allclose }

// verdict returns nil when every row passes the bounds of c (or c sets
// none), else an error naming each failing pair and key (and the program
// exits 1). A row that could not be compared (missing key, shape mismatch,
// NaN) under a bound fails.
func verdict(rows []divergence.Row, c config) error {
	if !c.bounded() {
		return nil
	}
	var bad []string
	for _, r := range rows {
		if r.Pass {
			continue
		}
		var why []string
		switch {
		case r.Warning != "":
			why = append(why, r.Warning)
		case math.IsNaN(r.Max):
			why = append(why, "NaN on one side only")
		case c.tol >= 0 && r.Max > c.tol:
			why = append(why, fmt.Sprintf("max %.6e at step %d > tol %.6e", r.Max, r.MaxStep, c.tol))
		}
		if c.allclose && r.Mismatched > 0 {
			why = append(why, fmt.Sprintf("%d of %d elements outside rtol=%g, atol=%g; largest |a-b| %.6e at %v",
				r.Mismatched, r.Elements, c.rtol, c.atol, r.MaxAbs, r.MaxAbsAt))
		}
		bad = append(bad, fmt.Sprintf("%s vs %s %s (%s)", r.A, r.B, r.Key, strings.Join(why, "; ")))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d of %d rows FAIL: %s", errFail, len(bad), len(rows), strings.Join(bad, "; "))
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

// writeFile writes what fill produces to path through a temporary file in
// the same directory, renamed into place: an interrupted run never leaves
// a file cut short under its final name.
func writeFile(path string, fill func(*bytes.Buffer) error) error {
	var b bytes.Buffer
	if err := fill(&b); err != nil {
		return err
	}
	return atomicWrite(path, func(tmp string) error { return os.WriteFile(tmp, b.Bytes(), 0o644) })
}

// atomicWrite has write create tmp, a temporary name beside path with the
// same extension, then renames it to path; tmp is removed on failure.
func atomicWrite(path string, write func(tmp string) error) error {
	ext := filepath.Ext(path)
	tmp := strings.TrimSuffix(path, ext) + ".partial" + ext
	if err := write(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeNPZ writes a box's archive with divergence.Writer, the writer a Go
// program whose runs are compared uses.
func writeNPZ(path string, keys []string, shapes [][]int, data [][]float64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicWrite(path, func(tmp string) error {
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		w := divergence.NewWriter(f)
		for i, k := range keys {
			if err := w.Add(k, shapes[i], data[i]); err != nil {
				f.Close()
				return err
			}
		}
		if err := w.Close(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// fileRE is what a key may keep in a file name.
var fileRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// keyOrder returns the keys of rows, those with a failing row first, each
// group in the rows' order, and whether each key fails.
func keyOrder(rows []divergence.Row, c config) ([]string, map[string]bool) {
	var keys []string
	failing := map[string]bool{}
	for _, r := range rows {
		if r.Key == "" {
			continue
		}
		if _, ok := failing[r.Key]; !ok {
			keys = append(keys, r.Key)
			failing[r.Key] = false
		}
		if c.bounded() && !r.Pass {
			failing[r.Key] = true
		}
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		switch {
		case failing[a] == failing[b]:
			return 0
		case failing[a]:
			return -1
		}
		return 1
	})
	return keys, failing
}

// seriesOutputs writes, for every key compared (failing keys first), the
// per-step divergence in c's norm of every pair as CSV and as a log-scale
// plot, and returns the names of the files it wrote in that order. Pairs
// whose arrays have different shapes have no series; pairs of different
// lengths (hosts that ran different step counts) each get their own
// length, the CSV's cells past a pair's end left empty. Files an earlier
// run left are removed first, so none passes for this run's.
func seriesOutputs(ctx context.Context, out string, runs []divergence.NamedRun, rows []divergence.Row, c config) ([]string, error) {
	for _, pat := range []string{"series_*.csv", "divergence_*.png"} {
		old, _ := filepath.Glob(filepath.Join(out, pat))
		for _, f := range old {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
	}
	opened := make([]*divergence.Run, len(runs))
	for i, r := range runs {
		o, err := divergence.Open(r.Path)
		if err != nil {
			return nil, err
		}
		defer o.Close()
		opened[i] = o
	}
	keys, failing := keyOrder(rows, c)
	ylabel := "‖a_t − b_t‖₂"
	if c.norm == divergence.LInf {
		ylabel = "max |a_t − b_t|"
	}
	var wrote, order []string
	names := map[string]bool{}
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return wrote, err
		}
		name := fileRE.ReplaceAllString(key, "_")
		for base := name; names[name]; {
			name = base + "_" + strconv.Itoa(len(names))
		}
		names[name] = true
		var curves []cplot.Curve
		header := []string{"step"}
		steps := 0
		for i := range opened {
			for j := i + 1; j < len(opened); j++ {
				s, err := divergence.Series(opened[i], opened[j], key, c.norm)
				if err != nil {
					fmt.Printf("no %s series for %s vs %s: %v\n", key, runs[i].Name, runs[j].Name, err)
					continue
				}
				header = append(header, runs[i].Name+" vs "+runs[j].Name)
				curves = append(curves, cplot.Curve{Name: header[len(header)-1], Y: s})
				steps = max(steps, len(s))
			}
		}
		verdict := "PASS"
		if failing[key] {
			verdict = "FAIL"
		} else if !c.bounded() {
			verdict = "unbounded"
		}
		order = append(order, key+" "+verdict)
		if len(curves) == 0 {
			continue
		}
		var csv strings.Builder
		csv.WriteString(strings.Join(header, ",") + "\n")
		for k := range steps {
			csv.WriteString(strconv.Itoa(k))
			for _, cv := range curves {
				csv.WriteString(",")
				if k < len(cv.Y) {
					csv.WriteString(strconv.FormatFloat(cv.Y[k], 'g', 17, 64))
				}
			}
			csv.WriteString("\n")
		}
		csvName := "series_" + name + ".csv"
		if err := writeFile(filepath.Join(out, csvName), func(b *bytes.Buffer) error { b.WriteString(csv.String()); return nil }); err != nil {
			return wrote, err
		}
		wrote = append(wrote, csvName)
		png := "divergence_" + name + ".png"
		title := fmt.Sprintf("%s (%s): per-step %s divergence between hosts", key, verdict, c.normName)
		err := atomicWrite(filepath.Join(out, png), func(tmp string) error {
			return cplot.Divergence(tmp, title, "recorded step", ylabel, curves, c.tol)
		})
		switch {
		case errors.Is(err, cplot.ErrNoData):
			fmt.Printf("every pair agrees exactly on %s: %s not written\n", key, png)
		case err != nil:
			return wrote, err
		default:
			wrote = append(wrote, png)
		}
	}
	if len(order) > 0 {
		fmt.Printf("keys plotted, failing first: %s\n", strings.Join(order, ", "))
	}
	return wrote, nil
}
