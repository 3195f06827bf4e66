package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/overlap"
	"github.com/crosscluster/crosscluster/regime"
	"github.com/crosscluster/crosscluster/stats"
)

// manyCluster is one cluster of the many-cluster mode with its jobs.
type manyCluster struct {
	name string
	jobs []regime.Job
}

// runMany compares the clusters of -clusters pairwise (overlap.Pairwise):
// "synth" gives three synthetic clusters (Anvil-, Conte- and
// Stampede-like), anything else is a comma-separated list of job tables,
// each [name=]path. With -halves each cluster is split at the median
// submit time into its first and second half. It writes pairwise.csv (one
// row per ordered pair), pairwise.png (the AUC and coverage heatmaps) and
// pairwise.md (the same numbers as tables).
func runMany(ctx context.Context, o options, stdout io.Writer) error {
	start := time.Now()
	band, units, err := prepare(o)
	if err != nil {
		return err
	}
	want, err := regimeFlag(o.regime) // checked before any table is read
	if err != nil {
		return err
	}
	clusters, hw, err := loadMany(ctx, o, units, stdout)
	if err != nil {
		return err
	}
	if o.halves {
		clusters = splitHalves(clusters)
	}
	rules := regime.Rules{Hardware: hw, Strict: o.strict}
	if o.proxy {
		rules.Hardware = nil
	}
	jobs := make([][]regime.Job, len(clusters))
	names := make([]string, len(clusters))
	for i, c := range clusters {
		rules.LabelAll(c.jobs)
		if want != "" {
			c.jobs = slices.DeleteFunc(c.jobs, func(j regime.Job) bool { return j.Regime != want })
		}
		jobs[i], names[i] = c.jobs, c.name
		fmt.Fprintf(stdout, "  %-12s %7d jobs in regime %s\n", c.name, len(c.jobs), o.regime)
	}
	profiles := make([]*regime.FeatureProfile, len(jobs))
	for c, js := range jobs {
		profiles[c] = regime.NewFeatureProfile(nil)
		for i := range js {
			profiles[c].Add(&js[i])
		}
	}
	features := regime.ScreenProfiles(nil, names, profiles...).Features
	if o.features != "" {
		features = strings.Split(o.features, ",")
	}
	fmt.Fprintf(stdout, "features: %s\n", strings.Join(features, ", "))
	in := make([]overlap.Cluster, len(clusters))
	for i := range clusters {
		if len(jobs[i]) == 0 {
			return fmt.Errorf("%w: %s has no %s jobs", overlap.ErrEmptyDomain, names[i], o.regime)
		}
		x, err := regime.Matrix(jobs[i], features)
		if err != nil {
			return err
		}
		in[i] = overlap.Cluster{Name: names[i], X: x}
	}
	opts := []overlap.Option{overlap.WithFeatureNames(features...)}
	if o.balanced {
		opts = append(opts, overlap.WithClassWeight(stats.ClassWeightBalanced))
	}
	if o.impute {
		opts = append(opts, overlap.WithImpute())
	}
	fmt.Fprintf(stdout, "comparing %d clusters pairwise, band %v\n", len(in), band)
	m, err := overlap.Pairwise(ctx, in, band, opts...)
	if err != nil {
		return err
	}
	auth, proxy := regime.Bases(jobs...)
	meta := overlap.Meta{Regime: o.regime, LabelsAuthoritative: auth, LabelsProxy: proxy}
	var md bytes.Buffer
	writeManyMarkdown(&md, m, meta, features)
	stdout.Write(md.Bytes())
	// All three outputs move into place together (see staged).
	st, err := newStaged(o.out)
	if err != nil {
		return err
	}
	defer st.remove()
	if err := st.write("pairwise.csv", m.WriteCSV); err != nil {
		return err
	}
	if err := st.write("pairwise.md", func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
		return err
	}
	if err := cplot.Pairwise(st.path("pairwise.png"), m); err != nil {
		return err
	}
	if err := st.commit(nil); err != nil {
		return err
	}
	written := st.final()
	fmt.Fprintln(stdout, "\nwrote:")
	for _, p := range written {
		fmt.Fprintln(stdout, "  "+p)
	}
	fmt.Fprintf(stdout, "done in %s (%d fits)\n", time.Since(start).Round(time.Millisecond), m.Fits)
	return nil
}

// loadMany reads or generates the clusters of -clusters and returns a
// hardware table for them.
func loadMany(ctx context.Context, o options, units regime.Units, stdout io.Writer) ([]manyCluster, *regime.Hardware, error) {
	if o.clusters == "synth" {
		rng := rand.New(rand.NewPCG(o.seed, 7))
		hw := &regime.Hardware{Clusters: map[string]regime.Cluster{}}
		var out []manyCluster
		for _, p := range []synth.ClusterProfile{synth.AnvilLike(), synth.ConteLike(), synth.StampedeLike()} {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			fmt.Fprintf(stdout, "generating %d synthetic %s-like jobs\n", o.n, p.Name)
			jobs, err := synthJobs(synth.JobTable(p, o.n, rng), 0, p, nil)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, manyCluster{p.Name, jobs})
			hw.Clusters[p.Name] = hardwareOf(p)
		}
		return out, hw, nil
	}
	var out []manyCluster
	for _, item := range strings.Split(o.clusters, ",") {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		name, path, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			name, path = nameOr("", name), name
		}
		// Every job is kept (runMany labels and filters them itself), with
		// the metrics the features and the proxy rule read.
		sd := newSide(name, "cluster", regime.Rules{}, "", nil, true)
		if _, err := readJobs(stdout, path, sd, units, keptMetrics(o.features), func(w string) { fmt.Fprintln(stdout, "warning:", w) }); err != nil {
			return nil, nil, err
		}
		out = append(out, manyCluster{name, sd.jobs})
	}
	if len(out) < 2 {
		return nil, nil, fmt.Errorf("-clusters %q: give at least two job tables (or synth)", o.clusters)
	}
	return out, regime.KnownHardware(), nil
}

// splitHalves splits every cluster at its median submit time: the jobs
// submitted before it form name-1, the others name-2 (jobs without a
// submit time go to the second half).
func splitHalves(clusters []manyCluster) []manyCluster {
	var out []manyCluster
	for _, c := range clusters {
		var times []time.Time
		for _, j := range c.jobs {
			if !j.Submit.IsZero() {
				times = append(times, j.Submit)
			}
		}
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		var mid time.Time
		if len(times) > 0 {
			mid = times[len(times)/2]
		}
		var first, second []regime.Job
		for _, j := range c.jobs {
			if !j.Submit.IsZero() && j.Submit.Before(mid) {
				first = append(first, j)
			} else {
				second = append(second, j)
			}
		}
		out = append(out, manyCluster{c.name + "-1", first}, manyCluster{c.name + "-2", second})
	}
	return out
}

// writeManyMarkdown writes the regime definition (with the procedure's
// "proxy-only" and "not regime-matched" marks where they apply), the
// features, the AUC and coverage matrices as Markdown tables, rows the
// source cluster and columns the target, and each fit's notes.
func writeManyMarkdown(w io.Writer, m *overlap.PairMatrix, meta overlap.Meta, features []string) {
	fmt.Fprintf(w, "\n### Pairwise overlap of %d clusters, band %v\n\n", len(m.Names), m.Band)
	meta.WriteRegime(w)
	fmt.Fprintf(w, "- Features: %s\n", strings.Join(features, ", "))
	table := func(caption string, cell func(p *overlap.Pair) string) {
		fmt.Fprintf(w, "\n%s\n\n| source \\ target | %s |\n|---%s|\n", caption, strings.Join(m.Names, " | "), strings.Repeat("|---", len(m.Names)))
		for i, row := range m.Pairs {
			fmt.Fprintf(w, "| %s |", m.Names[i])
			for j, p := range row {
				if i == j {
					fmt.Fprint(w, " — |")
					continue
				}
				fmt.Fprintf(w, " %s |", cell(p))
			}
			fmt.Fprintln(w)
		}
	}
	table("Domain classifier AUC (in-sample) with DeLong 95% interval:", func(p *overlap.Pair) string {
		return fmt.Sprintf("%.4f [%.4f, %.4f]", p.AUC.AUC, p.AUC.Lo, p.AUC.Hi)
	})
	table("Share of the target's jobs in the band (n = in band of all):", func(p *overlap.Pair) string {
		return fmt.Sprintf("%.4f (n=%d of %d)", p.Coverage, p.NTargetInBand, p.NTarget)
	})
	// Each fit's notes once, in the direction it was fitted.
	first := true
	for _, p := range m.FittedPairs() {
		for _, n := range p.Notes {
			if first {
				fmt.Fprintln(w, "\nNotes (per fit, source → target):")
				first = false
			}
			fmt.Fprintf(w, "\n- %s → %s: %s\n", p.Source, p.Target, n)
		}
	}
}
