// Command tolerance runs the same chaotic simulation on several "boxes",
// collects each box's NumPy archive and reports the pairwise maximum
// divergence of every key, with pass/fail against a tolerance.
//
// By default the boxes are three local directories under -out, each running
// this program's simulation with a different but valid floating-point
// evaluation order (see sim.go); they are launched, polled and collected
// with divergence.Replicate exactly as real machines would be. With -hosts
// FILE the hosts registry names real machines (see divergence.Host) whose
// command writes an .npz with the keys to compare.
//
// Usage:
//
//	go run ./examples/tolerance -out DIR [-hosts FILE] [-sync REPO [-allow-dirty]] [-tol 1e-4] [-norm L2|Linf]
//
// Outputs in DIR: collected/<box>.npz (each box's archive), pairs.json and
// pairs.csv (one row per pair and key), series_z_b.csv and divergence_z_b.png
// (the per-step L2 divergence of z_b for each pair).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/divergence"
	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/crosscluster/crosscluster/internal/sh"
	cplot "github.com/crosscluster/crosscluster/plot"
)

func main() {
	out := flag.String("out", "out", "output directory (e.g. -out /tmp/tol)")
	hostsFile := flag.String("hosts", "", "hosts registry YAML; default: three local boxes (e.g. -hosts hosts.yaml)")
	stem := flag.String("stem", "tolerance", "run stem ({stem} in host commands) (e.g. -stem run42)")
	tol := flag.Float64("tol", 1e-4, "tolerance on every key's max divergence; negative: none (e.g. -tol 1e-3)")
	normName := flag.String("norm", "L2", "norm over the axes after the first: L2 or Linf (e.g. -norm Linf)")
	syncRepo := flag.String("sync", "", "before launching, Sync every host to this controller repository's HEAD (e.g. -sync .)")
	allowDirty := flag.Bool("allow-dirty", false, "with -sync, allow hosts with uncommitted changes (e.g. -allow-dirty)")
	steps := flag.Int("steps", 15000, "local boxes: RK4 steps of 1 ms (e.g. -steps 3000)")
	budget := flag.Duration("budget", 10*time.Minute, "poll budget for the runs (e.g. -budget 30m)")
	poll := flag.Duration("poll", 200*time.Millisecond, "poll interval (e.g. -poll 1s)")
	// Box mode: what a local box's command runs.
	boxVariant := flag.Int("box-variant", -1, "internal: run one box's simulation with this evaluation order")
	boxOut := flag.String("box-out", "", "internal: archive the box writes")
	flag.Parse()

	if *boxVariant >= 0 {
		if err := writeBox(*boxOut, *steps, 10, *boxVariant); err != nil {
			fmt.Fprintln(os.Stderr, "tolerance box:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *hostsFile, *stem, *tol, *normName, *syncRepo, *allowDirty, *steps, *budget, *poll); err != nil {
		fmt.Fprintln(os.Stderr, "tolerance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, hostsFile, stem string, tol float64, normName, syncRepo string, allowDirty bool, steps int, budget, poll time.Duration) error {
	var norm divergence.Norm
	switch normName {
	case "L2":
		norm = divergence.L2
	case "Linf":
		norm = divergence.LInf
	default:
		return fmt.Errorf("-norm %q: want L2 or Linf", normName)
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var hosts []divergence.Host
	if hostsFile != "" {
		f, err := os.Open(hostsFile)
		if err != nil {
			return err
		}
		hosts, err = divergence.LoadHosts(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", hostsFile, err)
		}
	} else {
		hosts, err = localBoxes(out, steps)
		if err != nil {
			return err
		}
	}
	if syncRepo != "" {
		head, err := divergence.Head(ctx, syncRepo)
		if err != nil {
			return err
		}
		fmt.Printf("syncing %d hosts to %s\n", len(hosts), head)
		synced, err := divergence.Sync(ctx, hosts, head, divergence.SyncOptions{AllowDirty: allowDirty})
		for _, s := range synced {
			fmt.Printf("  %s at %s (dirty %v)\n", s.Host, s.Commit, s.Dirty)
		}
		if err != nil {
			return err
		}
	}

	fmt.Printf("replicating %q on %d hosts\n", stem, len(hosts))
	start := time.Now()
	outcomes, err := divergence.Replicate(ctx, hosts, divergence.ReplicateConfig{
		Stem: stem, Dest: filepath.Join(out, "collected"), Poll: poll, Budget: budget, Progress: os.Stderr,
	})
	if err != nil && !errors.Is(err, divergence.ErrTooFew) {
		return err
	}
	fmt.Printf("replication took %s\n", time.Since(start).Round(time.Millisecond))
	if err != nil {
		return err
	}
	var runs []divergence.NamedRun
	for _, o := range outcomes {
		if o.Status == divergence.Finished {
			runs = append(runs, divergence.NamedRun{Name: o.Host, Path: o.Path})
		}
	}

	opt := divergence.Options{Norm: norm}
	if tol >= 0 {
		opt.Tolerance = map[string]float64{"*": tol}
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
	if err := seriesOutputs(out, runs, tol); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s/{pairs.json,pairs.csv,series_z_b.csv,divergence_z_b.png,collected/}\n", out)
	return verdict(rows)
}

// errFail is the verdict when a bounded row did not pass.
var errFail = errors.New("tolerance exceeded")

// verdict returns nil when every bounded row passes, else an error naming
// each failing pair and key (and the program exits 1). A row that could not
// be compared (missing key, shape mismatch, NaN) under a tolerance fails.
func verdict(rows []divergence.Row) error {
	var bad []string
	bounded := 0
	for _, r := range rows {
		if !r.Bounded {
			continue
		}
		bounded++
		if !r.Pass {
			why := fmt.Sprintf("max %.6e > tol %.6e", r.Max, r.Tolerance)
			if r.Warning != "" {
				why = r.Warning
			} else if math.IsNaN(r.Max) {
				why = "NaN in the data"
			}
			bad = append(bad, fmt.Sprintf("%s vs %s %s (%s)", r.A, r.B, r.Key, why))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d of %d rows FAIL: %s", errFail, len(bad), bounded, strings.Join(bad, "; "))
	}
	return nil
}

// localBoxes lays out three box directories whose command re-runs this
// program in box mode with evaluation order 0, 1 or 2.
func localBoxes(out string, steps int) ([]divergence.Host, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var hosts []divergence.Host
	for v, name := range []string{"box-textbook", "box-reordered", "box-fma"} {
		dir := filepath.Join(out, "boxes", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		cmd := fmt.Sprintf("%s -box-variant %d -steps %d -box-out out/{stem}.npz", sh.Quote(exe), v, steps)
		hosts = append(hosts, divergence.Host{Name: name, Repo: dir, Command: cmd, Output: "out"})
	}
	return hosts, nil
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

// seriesOutputs writes the per-step L2 divergence of z_b for every pair as
// CSV and as a log-scale plot.
func seriesOutputs(out string, runs []divergence.NamedRun, tol float64) error {
	opened := make([]*divergence.Run, len(runs))
	for i, r := range runs {
		o, err := divergence.Open(r.Path)
		if err != nil {
			return err
		}
		defer o.Close()
		opened[i] = o
	}
	var csv strings.Builder
	var curves []cplot.Curve
	header := []string{"step"}
	for i := range opened {
		for j := i + 1; j < len(opened); j++ {
			s, err := divergence.Series(opened[i], opened[j], "z_b", divergence.L2)
			if err != nil {
				fmt.Printf("no series for %s vs %s: %v\n", runs[i].Name, runs[j].Name, err)
				continue
			}
			header = append(header, runs[i].Name+" vs "+runs[j].Name)
			curves = append(curves, cplot.Curve{Name: header[len(header)-1], Y: s})
		}
	}
	if len(curves) == 0 {
		return nil
	}
	csv.WriteString(strings.Join(header, ",") + "\n")
	for k := range curves[0].Y {
		csv.WriteString(strconv.Itoa(k))
		for _, c := range curves {
			csv.WriteString("," + strconv.FormatFloat(c.Y[k], 'g', 17, 64))
		}
		csv.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(out, "series_z_b.csv"), []byte(csv.String()), 0o644); err != nil {
		return err
	}
	err := cplot.Divergence(filepath.Join(out, "divergence_z_b.png"), "z_b: per-step L2 divergence between boxes",
		"recorded step (10 ms)", "‖z_a(t) − z_b(t)‖", curves, tol)
	if errors.Is(err, cplot.ErrNoData) {
		fmt.Println("every pair agrees exactly on z_b: divergence_z_b.png not written")
		return nil
	}
	return err
}
