// Command overlap runs the cross-cluster overlap workflow end to end: it
// reads (or generates) two clusters' job tables, labels workload regimes,
// keeps one regime, picks the safe features, fits the source-vs-target
// domain classifier and writes the report.
//
// By default the two clusters are synthetic (internal/synth): an Anvil-like
// source and a Conte-like target with GPU and memory telemetry, so every
// regime occurs. With -source and -target it reads FRESCO-style telemetry
// tables (.csv or .parquet) or TACC Stampede accounting CSVs (recognised by
// a jobID column in their header, regime.IsStampede):
//
//	go run ./examples/overlap -out out/overlap
//	go run ./examples/overlap -out out/stampede -regime all \
//	    -source ../shared/testdata/fresco/stampede_feb_2018_job_accounting.csv \
//	    -target ../shared/testdata/fresco/stampede_mar_2018_job_accounting.csv
//
// The features are the safe set (no missing value in either cluster, not
// constant) unless -features names them; then -impute median-imputes their
// missing values. -units gives file tables' timelimit units per cluster
// (Stampede's minutes are known).
//
// It writes report.md, report.json, propensity_<source>.png and
// propensity_<target>.png (histograms with the band marked; _source and
// _target are appended when the two names coincide), density.png (both
// domains' propensity densities, the band shaded), balance.png (|SMD| per
// feature, all jobs and in band), bandwidth.png (coverage against band
// width), sweep.csv
// (coverage over the default bands), propensity.csv (every job's propensity
// and in-band flag, for the transfer evaluation), and appends its row to
// experiments.jsonl, rendered as experiments.md. The outputs are all or
// nothing: written into a staging directory inside -out, moved into place
// together once all are written, and the log row appended last (staged),
// so a run that fails leaves the previous run's outputs as they were.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/decompress"
	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/overlap"
	"github.com/crosscluster/crosscluster/regime"
	"github.com/crosscluster/crosscluster/stats"
)

type options struct {
	out, source, target, sourceName, targetName string
	regime, band, exp, featureSet, features     string
	units, clusters                             string
	n, crossfit                                 int
	seed                                        uint64
	balanced, proxy, strict, impute, transfer   bool
	halves                                      bool
}

// newFlags defines the flags on o.
func newFlags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("overlap", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "out/overlap", "output directory (e.g. -out /tmp/ov)")
	fs.StringVar(&o.source, "source", "", "source job table (.csv, .csv.gz, .parquet, or Stampede accounting .csv); default synthetic Anvil-like (e.g. -source anvil.parquet)")
	fs.StringVar(&o.target, "target", "", "target job table; default synthetic Conte-like (e.g. -target conte.csv)")
	fs.StringVar(&o.sourceName, "source-name", "", "source cluster name (default from the file or profile) (e.g. -source-name anvil)")
	fs.StringVar(&o.targetName, "target-name", "", "target cluster name (e.g. -target-name conte)")
	fs.StringVar(&o.regime, "regime", "cpu_standard", "workload regime to compare (cpu_standard, cpu_largemem, gpu_standard, gpu_largemem, unknown, or all) (e.g. -regime gpu_standard)")
	fs.StringVar(&o.band, "band", "0.2,0.8", "propensity band lo,hi (inclusive) (e.g. -band 0.1,0.9)")
	fs.StringVar(&o.exp, "exp", "", "experiment id for the log (default E<k> with k the next row) (e.g. -exp E7)")
	fs.StringVar(&o.featureSet, "feature-set", "", "feature set name in the report (default safe, or custom with -features) (e.g. -feature-set safe-v2)")
	fs.StringVar(&o.features, "features", "", "comma-separated features to fit instead of the safe set (NaN values then need -impute) (e.g. -features ncores,runtime_sec)")
	fs.StringVar(&o.units, "units", "", "timelimit units of file tables as cluster=seconds,... (added to stampede=60) (e.g. -units conte=60)")
	fs.IntVar(&o.n, "n", 20000, "jobs per synthetic cluster (e.g. -n 5000)")
	fs.IntVar(&o.crossfit, "crossfit", 5, "folds of the cross-fitted AUC (0: none) (e.g. -crossfit 10)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic clusters and the cross-fit folds (e.g. -seed 7)")
	fs.BoolVar(&o.balanced, "balanced", false, "class_weight=balanced instead of none (e.g. -balanced)")
	fs.BoolVar(&o.proxy, "proxy", false, "label regimes by the telemetry proxy rule only (ignore hardware tables) (e.g. -proxy)")
	fs.BoolVar(&o.strict, "strict", false, "proxy rule: all-missing GPU telemetry gives unknown (e.g. -strict)")
	fs.BoolVar(&o.impute, "impute", false, "median-impute non-finite feature values instead of failing (e.g. -impute)")
	fs.StringVar(&o.clusters, "clusters", "", "compare k clusters pairwise instead: synth (Anvil-, Conte- and Stampede-like) or job tables [name=]path,... (e.g. -clusters synth); writes pairwise.csv, pairwise.md, pairwise.png")
	fs.BoolVar(&o.halves, "halves", false, "with -clusters: split each cluster at its median submit time into name-1 and name-2 (e.g. two Stampede months as four periods) (e.g. -halves)")
	fs.BoolVar(&o.transfer, "transfer", false, "also evaluate a transfer model: a logistic model of \"ran over an hour\" (runtime_sec > 3600) from ncores, nhosts and timelimit_sec, fitted on the source and scored (ROC AUC) on all, in-band and out-of-band target jobs with bootstrap intervals (e.g. -transfer)")
	return fs
}

// command returns the flags that reproduce o (every setting, defaults
// included, so that the record does not depend on future defaults).
func (o options) command() []string {
	cmd := []string{"go", "run", "./examples/overlap"}
	var tmp options
	fs := newFlags(&tmp) // the flags point into tmp ...
	tmp = o              // ... which now holds o's values
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "out" || f.Name == "exp" {
			return
		}
		v := f.Value.String()
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v == "true" {
				cmd = append(cmd, "-"+f.Name)
			}
			return
		}
		if v != "" {
			cmd = append(cmd, "-"+f.Name, v)
		}
	})
	return cmd
}

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode runs the command with args and returns its exit status: 0 on
// success, 1 when the run fails, 2 for a usage error (a bad flag value or
// a stray argument, refused before any work, so nothing is written), 130
// when interrupted (SIGINT or SIGTERM): the run stops at its next
// checkpoint, removes its staged outputs and leaves every file of an
// earlier run as it was.
func mainCode(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := newFlags(&o)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "overlap: unexpected argument %q: the command takes flags only (see -h)\n", fs.Arg(0))
		return 2
	}
	if err := o.validate(); err != nil {
		fmt.Fprintln(stderr, "overlap: "+err.Error())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	do := run
	if o.clusters != "" {
		do = runMany
	}
	err := do(ctx, o, stdout)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "overlap: interrupted; no output was changed")
		return 130
	}
	if err != nil {
		fmt.Fprintln(stderr, errorLine(err))
		return 1
	}
	return 0
}

// validate checks every flag's value before any work, so that a refused
// run leaves nothing behind.
func (o options) validate() error {
	if _, err := parseBand(o.band); err != nil {
		return err
	}
	if _, err := parseUnits(o.units); err != nil {
		return err
	}
	if _, err := regimeFlag(o.regime); err != nil {
		return err
	}
	switch {
	case o.out == "":
		return errors.New("-out is empty: give an output directory")
	case o.n < 1:
		return fmt.Errorf("-n %d: want at least 1 job per synthetic cluster", o.n)
	case o.crossfit == 1 || o.crossfit < 0:
		return fmt.Errorf("-crossfit %d: want 0 (no cross-fitted AUC) or at least 2 folds", o.crossfit)
	case (o.source == "") != (o.target == ""):
		return errors.New("give both -source and -target, or neither")
	case o.halves && o.clusters == "":
		return errors.New("-halves splits the clusters of -clusters: give -clusters too")
	}
	if o.features != "" {
		for _, f := range strings.Split(o.features, ",") {
			if strings.TrimSpace(f) == "" {
				return fmt.Errorf("-features %q: empty feature name", o.features)
			}
		}
	}
	return nil
}

// errorLine is the message main prints for err: prefixed with the
// command's name once; the overlap package's errors already say
// "overlap: " (at the start, or after the context this command added).
func errorLine(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "overlap: ") {
		return msg
	}
	return "overlap: " + msg
}

// run does the work; everything it prints goes to stdout.
func run(ctx context.Context, o options, stdout io.Writer) error {
	start := time.Now()
	band, units, err := prepare(o)
	if err != nil {
		return err
	}
	if o.source == "" {
		o.sourceName, o.targetName = nameOr(o.sourceName, "anvil"), nameOr(o.targetName, "conte")
	} else {
		o.sourceName, o.targetName = nameOr(o.sourceName, o.source), nameOr(o.targetName, o.target)
	}
	var warnings []string
	warn := func(w string) {
		warnings = append(warnings, w)
		fmt.Fprintln(stdout, "warning:", w)
	}
	hw := hardware(o)
	if o.proxy {
		hw = nil
	}
	rules := regime.Rules{Hardware: hw, Strict: o.strict}
	want, err := regimeFlag(o.regime) // "" compares every regime
	if err != nil {
		return err
	}
	var features []string
	if o.features != "" {
		for _, f := range strings.Split(o.features, ",") {
			features = append(features, strings.TrimSpace(f))
		}
	}
	// The jobs are labelled and reduced to the candidate features as each
	// table is read (side.add), so no table's jobs are held at once.
	candidates := features
	if candidates == nil {
		candidates = regime.JobFeatures()
	}
	src := newSide(o.sourceName, "source", rules, want, candidates, o.transfer)
	tgt := newSide(o.targetName, "target", rules, want, candidates, o.transfer)
	inputs, err := load(ctx, o, units, stdout, warn, src, tgt)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if w := sameInputs(inputs, src.name, tgt.name); w != "" {
		warn(w)
	}
	fmt.Fprintf(stdout, "labelled regimes (%s rule)\n", map[bool]string{true: "proxy", false: "hardware table, proxy fallback"}[hw == nil])
	for _, sd := range []*side{src, tgt} {
		fmt.Fprintln(stdout, sd.labelLine())
	}
	for _, sd := range []*side{src, tgt} {
		if sd.total == 0 {
			return fmt.Errorf("%w: %s has no jobs; nothing was written to the experiment log", overlap.ErrEmptyDomain, sd.name)
		}
	}
	if want != "" {
		fmt.Fprintf(stdout, "keeping regime %s: %d source and %d target jobs\n", want, src.n(), tgt.n())
	}
	if src.n() == 0 || tgt.n() == 0 {
		// Nothing to compare: say so and leave the experiment log alone.
		return fmt.Errorf("%w: regime %s leaves %d %s jobs and %d %s jobs; nothing was written to the experiment log",
			overlap.ErrEmptyDomain, o.regime, src.n(), src.name, tgt.n(), tgt.name)
	}
	for _, sd := range []*side{src, tgt} {
		if sd.err != nil {
			return sd.err
		}
	}
	if w := noTelemetry(src, tgt); w != "" && !o.strict {
		warn(w)
	}
	if w := mixedClusters(src, tgt); w != "" {
		warn(w)
	}

	var dropped []overlap.DroppedFeature
	if features != nil {
		fmt.Fprintf(stdout, "features (from -features): %s\n", strings.Join(features, ", "))
		var bad []string
		for _, f := range features {
			if slices.Contains(regime.ForbiddenFeatures(), f) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			w := fmt.Sprintf("the feature set holds %s, which the procedure forbids (%s): the proxy regime rule reads them, so the comparison partly compares regime labels",
				strings.Join(bad, ", "), strings.Join(regime.ForbiddenFeatures(), ", "))
			warn(w)
		}
		if o.featureSet == "" {
			o.featureSet = "custom"
		}
	} else {
		sc := regime.ScreenProfiles(candidates, []string{src.name, tgt.name}, src.profile, tgt.profile)
		features = sc.Features
		for _, d := range sc.Dropped {
			fmt.Fprintf(stdout, "  dropping %s: %s\n", d.Name, d.Reason)
			dropped = append(dropped, overlap.DroppedFeature{Name: d.Name, Reason: d.Reason})
		}
		fmt.Fprintf(stdout, "safe features (the procedure's set: no missing value in either cluster, not constant): %s\n", strings.Join(features, ", "))
	}
	if o.featureSet == "" {
		o.featureSet = "safe"
	}

	x, y := stack(src, tgt, features)
	src.cols, tgt.cols = nil, nil // in x now
	nSrc, nTgt := src.n(), tgt.n()
	labelsAuth, labelsProxy := src.auth+tgt.auth, src.proxy+tgt.proxy
	opts := []overlap.Option{overlap.WithFeatureNames(features...)}
	if o.balanced {
		opts = append(opts, overlap.WithClassWeight(stats.ClassWeightBalanced))
	}
	if o.crossfit >= 2 {
		opts = append(opts, overlap.WithCrossFit(o.crossfit, o.seed))
	}
	if o.impute {
		opts = append(opts, overlap.WithImpute())
	}
	fmt.Fprintf(stdout, "fitting the domain classifier on %d jobs × %d features, band %v\n", len(y), len(features), band)
	res, err := overlap.Fit(x, y, band, opts...)
	if errors.Is(err, overlap.ErrFolds) {
		return fmt.Errorf("%w (-crossfit sets the folds, -crossfit 0 none)", err)
	}
	if err != nil {
		// No classifier, so no report and no log row.
		return err
	}
	if w := essWarning(res.ESS, res.NSource); w != "" {
		warn(w)
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	logPath := filepath.Join(o.out, "experiments.jsonl")
	log, err := readLog(logPath)
	if err != nil {
		return err
	}
	meta := overlap.Meta{Experiment: o.exp, Source: o.sourceName, Target: o.targetName,
		Regime: o.regime, FeatureSet: o.featureSet, Warnings: warnings, Dropped: dropped}
	meta.LabelsAuthoritative, meta.LabelsProxy = labelsAuth, labelsProxy
	meta.Command = o.command()
	for _, in := range inputs {
		in.Kept = nSrc
		if in.Role == "target" {
			in.Kept = nTgt
		}
		meta.Inputs = append(meta.Inputs, in)
	}
	if o.transfer {
		t, err := transferEval(ctx, src.jobs, tgt.jobs, res, o.seed)
		if err != nil {
			return fmt.Errorf("transfer evaluation: %w", err)
		}
		meta.Transfer, meta.TransferModel = t, transferModel
		fmt.Fprintf(stdout, "transfer (%s): %s all %.4f [%.4f, %.4f], in band %.4f [%.4f, %.4f], out of band %.4f\n",
			transferModel, t.Metric, t.All.Value, t.All.Lo, t.All.Hi, t.InBand.Value, t.InBand.Lo, t.InBand.Hi, t.OutOfBand.Value)
	}
	if meta.Experiment == "" {
		meta.Experiment = "E" + strconv.Itoa(len(log.Entries)+1)
	}

	// Diagnostics go before the report so that the report block has
	// exactly the reviewer's fields; report.json has them all.
	fmt.Fprintf(stdout, "cross-fitted AUC (%d folds): %.4f; source coverage %.4f (n=%d of %d); Kish ESS of source odds weights %.0f\n",
		res.CrossFitFolds, res.CrossFitAUC, res.SourceCoverage, res.NSourceInBand, res.NSource, res.ESS)
	fmt.Fprintf(stdout, "solver: %d Newton iterations, gradient norm %.2e, converged %v\n", res.Solver.Iterations, res.Solver.GradNorm, res.Solver.Converged)
	fmt.Fprintln(stdout)
	if err := res.WriteMarkdown(stdout, meta); err != nil {
		return err
	}
	fmt.Fprintln(stdout)

	// Every output goes into a staging directory first and moves into
	// place only when all are written; the log row is appended last.
	st, err := newStaged(o.out)
	if err != nil {
		return err
	}
	defer st.remove()
	if err := st.write("report.md", func(w io.Writer) error { return res.WriteMarkdown(w, meta) }); err != nil {
		return err
	}
	if err := st.write("report.json", func(w io.Writer) error { return res.WriteJSON(w, meta) }); err != nil {
		return err
	}
	srcPNG, tgtPNG := safeName(o.sourceName), safeName(o.targetName)
	if srcPNG == tgtPNG {
		// Same name (e.g. a/jobs.csv and b/jobs.csv): keep both plots.
		srcPNG, tgtPNG = srcPNG+"_source", tgtPNG+"_target"
	}
	for _, d := range []struct {
		dom        int
		name, file string
	}{{overlap.Source, o.sourceName, srcPNG}, {overlap.Target, o.targetName, tgtPNG}} {
		if err := cplot.Propensity(st.path("propensity_"+d.file+".png"), res, d.dom, d.name); err != nil {
			return err
		}
	}
	sweep, err := res.Sweep()
	if err != nil {
		return err
	}
	for _, fig := range []struct {
		name string
		draw func(string) error
	}{
		{"density.png", func(p string) error { return cplot.Densities(p, res, o.sourceName, o.targetName) }},
		{"balance.png", func(p string) error { return cplot.Balance(p, res) }},
		{"bandwidth.png", func(p string) error { return cplot.BandWidth(p, res, sweep, o.sourceName, o.targetName) }},
	} {
		if err := fig.draw(st.path(fig.name)); err != nil {
			return err
		}
	}
	if err := st.write("sweep.csv", func(w io.Writer) error { return writeSweep(w, sweep, features) }); err != nil {
		return err
	}
	if err := st.write("propensity.csv", func(w io.Writer) error { return writePropensity(w, res, src.refs, tgt.refs) }); err != nil {
		return err
	}
	var row bytes.Buffer // the log's new line; log.Entries has it too
	if err := log.append(&row, entryOf(res, meta)); err != nil {
		return err
	}
	if err := st.write("experiments.md", log.writeTable); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // the last point before anything moves into place
		return err
	}
	if err := st.commit(func() error { return appendFile(logPath, row.Bytes()) }); err != nil {
		return err
	}
	written := append(st.final(), logPath)
	fmt.Fprintln(stdout, "experiment log:")
	if err := log.writeTable(stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nwrote:")
	for _, p := range written {
		fmt.Fprintln(stdout, "  "+p)
	}
	rss := "n/a"
	if b, ok := cputime.PeakRSS(); ok {
		rss = fmt.Sprintf("%.0f MB", float64(b)/1e6)
	}
	fmt.Fprintf(stdout, "done in %s, peak RSS %s\n", time.Since(start).Round(time.Millisecond), rss)
	return nil
}

// writeFile writes path through f as a stream, into a temporary file
// renamed over path when complete, so that a failure leaves no
// half-written file.
func writeFile(path string, f func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := f(bw); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// prepare parses -band and -units and makes the output directory.
func prepare(o options) (overlap.Band, regime.Units, error) {
	band, err := parseBand(o.band)
	if err != nil {
		return band, nil, err
	}
	units, err := parseUnits(o.units)
	if err != nil {
		return band, nil, err
	}
	return band, units, os.MkdirAll(o.out, 0o755)
}

func parseBand(s string) (overlap.Band, error) {
	lo, hi, ok := strings.Cut(s, ",")
	if !ok {
		return overlap.Band{}, fmt.Errorf("-band %q: want lo,hi", s)
	}
	l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err := errors.Join(err1, err2); err != nil {
		return overlap.Band{}, fmt.Errorf("-band %q: %w", s, err)
	}
	b := overlap.Band{Lo: l, Hi: h}
	return b, b.Check()
}

// hardware returns the hardware table of the clusters compared: built
// from the synthetic profiles, or regime.KnownHardware for files.
func hardware(o options) *regime.Hardware {
	if o.source != "" {
		return regime.KnownHardware()
	}
	hw := &regime.Hardware{Clusters: map[string]regime.Cluster{}}
	for _, p := range []synth.ClusterProfile{synth.AnvilLike(), synth.ConteLike()} {
		hw.Clusters[p.Name] = hardwareOf(p)
	}
	return hw
}

// load reads (or generates) the two clusters' tables into the sides and
// returns the provenance of each input.
func load(ctx context.Context, o options, units regime.Units, stdout io.Writer, warn func(string), src, tgt *side) ([]overlap.Input, error) {
	if (o.source == "") != (o.target == "") {
		return nil, errors.New("give both -source and -target, or neither")
	}
	var inputs []overlap.Input
	if o.source == "" {
		rng := rand.New(rand.NewPCG(o.seed, 7))
		for _, g := range []struct {
			sd   *side
			p    synth.ClusterProfile
			kind string
		}{{src, synth.AnvilLike(), "AnvilLike"}, {tgt, synth.ConteLike(), "ConteLike"}} {
			fmt.Fprintf(stdout, "generating %d synthetic %s-like jobs\n", o.n, g.p.Name)
			// A chunk of jobs at a time (a job's rows are drawn together, so
			// every chunk holds whole jobs): the same draws as one call, in
			// the memory of a chunk's rows.
			const chunk = 2000
			nRows := 0
			for first := 0; first < o.n; first += chunk {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				rows := synth.JobTable(g.p, min(chunk, o.n-first), rng)
				nRows += len(rows)
				tab, err := synthJobs(rows, first, g.p, g.sd.add)
				if err != nil {
					return nil, err
				}
				g.sd.jobs = append(g.sd.jobs, tab...)
			}
			inputs = append(inputs, overlap.Input{Role: g.sd.role, Rows: g.sd.total, Samples: nRows,
				Name: fmt.Sprintf("synthetic %s (internal/synth %s, n=%d, seed %d)", g.sd.name, g.kind, o.n, o.seed)})
		}
		return inputs, nil
	}
	keep := keptMetrics(o.features)
	for _, f := range []struct {
		path string
		sd   *side
	}{{o.source, src}, {o.target, tgt}} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in, err := readJobs(stdout, f.path, f.sd, units, keep, warn)
		if err != nil {
			return nil, err
		}
		in.Role = f.sd.role
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// keptMetrics returns the metrics the jobs read from files keep: those the
// proxy rule reads (gpu, memused) and those -features names
// (value_<metric>_cnt, _sum or _max).
func keptMetrics(features string) []string {
	keep := []string{"gpu", "memused"}
	for _, f := range strings.Split(features, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		rest, ok := strings.CutPrefix(f, "value_") // a metric's feature, value_<metric>_{cnt,sum,max}
		if i := strings.LastIndexByte(rest, '_'); ok && i > 0 && !slices.Contains(keep, rest[:i]) {
			keep = append(keep, rest[:i])
		}
	}
	return keep
}

// parseUnits reads -units (cluster=seconds,...) on top of
// regime.DefaultUnits.
func parseUnits(s string) (regime.Units, error) {
	u := regime.DefaultUnits()
	if strings.TrimSpace(s) == "" {
		return u, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		sec, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || !(sec > 0) || math.IsInf(sec, 0) {
			return nil, fmt.Errorf("-units %q: want cluster=seconds with seconds > 0", s)
		}
		u[strings.TrimSpace(k)] = sec
	}
	return u, nil
}

// sameInputs warns when the two tables are one (same bytes: the report can
// then show nothing but the classifier's own noise) or when both clusters
// carry one name (the report could not tell them apart).
func sameInputs(inputs []overlap.Input, source, target string) string {
	var w []string
	if len(inputs) == 2 && inputs[0].SHA256 != "" && inputs[0].SHA256 == inputs[1].SHA256 {
		w = append(w, fmt.Sprintf("source and target are the same table (%s and %s, SHA-256 %.12s…): the comparison can show only the classifier's own noise",
			inputs[0].Name, inputs[1].Name, inputs[0].SHA256))
	}
	if source == target {
		w = append(w, fmt.Sprintf("source and target are both named %q: name them apart with -source-name and -target-name", source))
	}
	return strings.Join(w, "; ")
}

func nameOr(name, path string) string {
	if name != "" {
		return name
	}
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// readJobs reads one cluster's job table as a stream into sd, hashing
// the file as it goes: a Parquet or CSV telemetry table (aggregated to jobs
// row by row, only the metrics in keep), or a Stampede accounting CSV when
// the header has a jobID column (regime.IsStampede). warn receives a line
// for columns the reader does not know (ignored).
func readJobs(stdout io.Writer, path string, sd *side, units regime.Units, keep []string, warn func(string)) (overlap.Input, error) {
	fmt.Fprintf(stdout, "reading %s\n", path)
	in := overlap.Input{Name: path}
	f, err := os.Open(path)
	if err != nil {
		return in, err
	}
	defer f.Close()
	h := sha256.New()
	cfg := regime.ReadConfig{Cluster: sd.name, Units: units, Metrics: keep, Keep: sd.add}
	var t *regime.JobTable
	if strings.EqualFold(filepath.Ext(path), ".parquet") {
		size, err := io.Copy(h, f)
		if err != nil {
			return in, err
		}
		if t, err = regime.ReadJobsParquet(f, size, path, cfg); err != nil {
			return in, err
		}
	} else {
		br := bufio.NewReaderSize(io.TeeReader(f, h), 1<<16)
		// A gzip-compressed table (.csv.gz) is read through; the hash
		// stays the file's own.
		if br, err = decompress.Gzip(br, path, "table"); err != nil {
			return in, fmt.Errorf("%s: %w", path, err)
		}
		head, _ := br.Peek(br.Size()) // the header line, unless it is longer
		if regime.IsStampede(head) {
			jobs, err := regime.ReadStampede(br, path)
			if err != nil {
				return in, err
			}
			for i := range jobs {
				if sd.add(&jobs[i]) {
					sd.jobs = append(sd.jobs, jobs[i])
				}
			}
			fmt.Fprintf(stdout, "  %d jobs\n", len(jobs))
			in.SHA256, in.Rows, in.Samples = fmt.Sprintf("%x", h.Sum(nil)), len(jobs), len(jobs)
			return in, nil
		}
		if t, err = regime.ReadJobsCSV(br, path, cfg); err != nil {
			return in, err
		}
		// The reader stops at the end of the data; hash anything after it.
		if _, err := io.Copy(h, f); err != nil {
			return in, err
		}
	}
	if w := unknownColumns(t.Unknown); w != "" {
		warn(path + ": " + w)
	}
	sd.jobs = t.Jobs
	fmt.Fprintf(stdout, "  %d rows, %d jobs\n", t.Rows, sd.total)
	in.SHA256, in.Rows, in.Samples = fmt.Sprintf("%x", h.Sum(nil)), sd.total, t.Rows
	return in, nil
}

// regimeFlag reads -regime: a regime's label, or "" for all.
func regimeFlag(s string) (regime.Label, error) {
	if s == "all" {
		return "", nil
	}
	if l := regime.Label(s); l.Valid() {
		return l, nil
	}
	var names []string
	for _, l := range regime.Labels() {
		names = append(names, string(l))
	}
	return "", fmt.Errorf("-regime %q is not a regime: want one of %s, or all", s, strings.Join(names, ", "))
}

// unknownColumns says which columns a reader ignored (regime's
// Table.Unknown; "" for a column without a name, as Excel's trailing empty
// columns), or "" when none.
func unknownColumns(unknown []string) string {
	var named []string
	unnamed := 0
	for _, u := range unknown {
		switch from, derived := regime.FeatureColumns(u); {
		case u == "":
			unnamed++
		case derived:
			named = append(named, u+" (a derived feature: computed from "+from+")")
		default:
			named = append(named, u)
		}
	}
	var parts []string
	if len(named) > 0 {
		parts = append(parts, "columns ignored, not in the accepted schema (the job-table schema in docs/overlap.md): "+strings.Join(named, ", "))
	}
	if unnamed > 0 {
		parts = append(parts, fmt.Sprintf("%d column(s) without a name ignored", unnamed))
	}
	return strings.Join(parts, "; ")
}

// synthJobs reads synthetic rows as the job records a file of them would
// give (through the CSV reader, so that generated and file tables take one
// path), with the rows' job numbers (JobTable counts from 1) moved up by
// first, the jobs drawn before them. keep is regime.ReadConfig.Keep.
func synthJobs(rows []synth.JobsRow, first int, p synth.ClusterProfile, keep func(*regime.Job) bool) ([]regime.Job, error) {
	if first > 0 {
		for i := range rows {
			id := rows[i].JID
			k := strings.LastIndexByte(id, '-')
			num, _ := strconv.Atoi(id[k+1:])
			rows[i].JID = id[:k+1] + strconv.Itoa(first+num)
		}
	}
	var buf bytes.Buffer
	if err := synth.JobsWriteCSV(&buf, rows); err != nil {
		return nil, err
	}
	tab, err := regime.ReadJobsCSV(&buf, "synthetic "+p.Name, regime.ReadConfig{Units: regime.Units{p.Name: p.TimelimitUnitSec}, Keep: keep})
	if err != nil {
		return nil, err
	}
	return tab.Jobs, nil
}

// hardwareOf turns a synthetic profile into its hardware-table entry, so
// the synthetic jobs get authoritative labels. Anvil-like GPU nodes have
// exactly 512 GB and are marked gpu_standard, as regime.KnownHardware does.
func hardwareOf(p synth.ClusterProfile) regime.Cluster {
	c := regime.Cluster{Partitions: map[string]regime.Node{}}
	for _, pt := range p.Partitions {
		n := regime.Node{NodeType: pt.Name, NodeCores: pt.NodeCores, NodeMemoryGB: pt.NodeMemoryGB, GPUCountPerNode: pt.GPUs}
		if pt.GPUs > 0 && pt.NodeMemoryGB == regime.DefaultLargeMemGB {
			n.WorkloadRegime = regime.GPUStandard
		}
		c.Partitions[pt.Name] = n
	}
	return c
}

func readLog(path string) (*expLog, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &expLog{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readExpLog(bufio.NewReader(f))
}

func writeSweep(w io.Writer, rows []overlap.SweepRow, features []string) error {
	cw := csv.NewWriter(w)
	head := []string{"lo", "hi", "target_coverage", "n_target_in_band", "source_coverage", "n_source_in_band"}
	for _, f := range features {
		head = append(head, "ks_"+f)
	}
	cw.Write(head)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for _, r := range rows {
		rec := []string{g(r.Band.Lo), g(r.Band.Hi), g(r.Coverage), strconv.Itoa(r.NTargetInBand), g(r.SourceCoverage), strconv.Itoa(r.NSourceInBand)}
		for _, k := range r.KS {
			if math.IsNaN(k.Statistic) {
				rec = append(rec, "")
			} else {
				rec = append(rec, g(k.Statistic))
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// jobRef is what propensity.csv needs of a compared job.
type jobRef struct {
	id, cluster, domain string
	regime              regime.Label
}

// writePropensity writes every compared job's propensity, the source's
// jobs first, as in the fit.
func writePropensity(w io.Writer, res *overlap.Result, refs ...[]jobRef) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"job_id", "cluster", "domain", "regime", "propensity", "in_band"})
	i := 0
	for _, rs := range refs {
		for _, r := range rs {
			p := res.Propensity[i]
			cw.Write([]string{r.id, r.cluster, r.domain, string(r.regime), strconv.FormatFloat(p, 'g', 10, 64), strconv.FormatBool(res.InBand[i])})
			i++
		}
	}
	cw.Flush()
	return cw.Error()
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// transferFeatures are the allocation features the worked transfer model
// reads: what a job asks for, known at submission.
var transferFeatures = []string{"ncores", "nhosts", "timelimit_sec"}

// transferEval fits a logistic model of "ran over an hour" (runtime_sec >
// 3600) from the allocation features on the source jobs,
// applies it to the target jobs and scores it with EvaluateTransfer, the
// target rows' in-band flags from the domain classifier.
func transferEval(ctx context.Context, src, tgt []regime.Job, res *overlap.Result, seed uint64) (*overlap.TransferResult, error) {
	label := func(jobs []regime.Job) ([]float64, []int, error) {
		yf := make([]float64, len(jobs))
		yi := make([]int, len(jobs))
		for i := range jobs {
			v, _ := jobs[i].Feature("runtime_sec")
			if math.IsNaN(v) {
				return nil, nil, fmt.Errorf("job %s has no runtime_sec", jobs[i].ID)
			}
			if v > 3600 {
				yf[i], yi[i] = 1, 1
			}
		}
		return yf, yi, nil
	}
	xs, err := regime.Matrix(src, transferFeatures)
	if err != nil {
		return nil, err
	}
	xt, err := regime.Matrix(tgt, transferFeatures)
	if err != nil {
		return nil, err
	}
	_, ys, err := label(src)
	if err != nil {
		return nil, err
	}
	truth, _, err := label(tgt)
	if err != nil {
		return nil, err
	}
	std, err := stats.FitStandardizer(xs)
	if err != nil {
		return nil, err
	}
	zs := std.Transform(nil, xs)
	model, err := stats.LogisticRegression(zs, ys, stats.LogisticConfig{C: 1})
	if err != nil {
		return nil, err
	}
	pred := model.PredictProba(nil, std.Transform(nil, xt))
	// The target rows come after the source rows in the fitted result.
	inBand := res.InBand[len(src):]
	return overlap.EvaluateTransfer(ctx, truth, pred, inBand, overlap.AUCMetric, transferResamples, transferLevel, seed)
}

// The transfer evaluation's bootstrap: resamples and interval level.
const (
	transferResamples = 1000
	transferLevel     = 0.95
)

// transferModel describes transferEval's model in the reports.
var transferModel = "logistic model of runtime_sec > 3600 from " + strings.Join(transferFeatures, ", ") + ", fitted on the source"

// essShare is the share of the source's jobs below which the Kish
// effective sample size of its odds weights gets a warning: reweighting
// the source to look like the target then rests on a few jobs.
const essShare = 0.01

// essWarning returns the warning for a Kish ESS of ess among n source jobs,
// or "" when the weights are spread well enough.
func essWarning(ess float64, n int) string {
	if n == 0 || !(ess < essShare*float64(n)) {
		return ""
	}
	return fmt.Sprintf("the Kish effective sample size of the source's odds weights is %.1f of %d jobs (%.2g%%): "+
		"a few source jobs carry almost all the weight, so any estimate reweighted to the target rests on them", ess, n, 100*ess/float64(n))
}
