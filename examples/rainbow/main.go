// Command rainbow reproduces the rainbow scheduler's two simulation
// experiments (version ranges, "reliabuild", and spack builds) with packages
// matcher and matcher/experiment, on built-in synthetic worlds or on the
// published data, and writes per experiment scores.json, scores.csv, jobs.csv
// (one row per submission) and the published experiments' figures, drawn as
// their plot-results.py scripts drew them, with the published values beside
// ours when -data holds them.
//
//	go run ./examples/rainbow -out out/rainbow
//	go run ./examples/rainbow -data ../shared/testdata/rainbow -experiment spack-build -out out/sb
//
// With -experiment both (the default) each experiment writes into its own
// sub-directory of -out; with one experiment the files go straight into -out.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/matcher"
	"github.com/crosscluster/crosscluster/matcher/experiment"
)

// config is the command line, validated.
type config struct {
	out, data string
	exps      []string // the experiments to run, in order
	exclusive bool
	mode      experiment.Mode
	linear    bool
	seed      uint64
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rainbow:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, cfg)
	if ctx.Err() != nil {
		stop()
		fmt.Fprintln(os.Stderr, "rainbow: interrupted; no output was left half-written")
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rainbow:", err)
		os.Exit(1)
	}
}

// parseFlags reads and checks every flag before any work: a value out of
// its set, a stray argument or a -data directory without the experiment's
// data is an error and nothing is written.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("rainbow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "out/rainbow", "output directory (e.g. -out /tmp/rb)")
	data := fs.String("data", "", "directory laid out like shared/testdata/rainbow (reliabuild/, spack-build/); empty = built-in synthetic worlds (e.g. -data ../shared/testdata/rainbow)")
	which := fs.String("experiment", "both", "reliabuild, spack-build or both (e.g. -experiment reliabuild)")
	bounds := fs.String("bounds", "inclusive", "range bound rule in corrected mode: inclusive or exclusive (e.g. -bounds exclusive)")
	rules := fs.String("rules", "corrected", "corrected or published (reproduce the published drivers, bugs included) (e.g. -rules published)")
	seed := fs.Uint64("seed", 1, "seed for the synthetic worlds, the subsystem order and the seeded draws (e.g. -seed 7)")
	model := fs.String("model", "knn", "spack-build runtime model: knn (k=5, as published) or linear (OLS of duration on mean memory per package) (e.g. -model linear)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	cfg := config{out: *out, data: *data, seed: *seed}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q: every input is a flag (see -h)", fs.Arg(0))
	}
	if cfg.out == "" {
		return cfg, errors.New("-out is empty: give the output directory")
	}
	switch *model {
	case "knn":
	case "linear":
		cfg.linear = true
	default:
		return cfg, fmt.Errorf("unknown -model %q (want knn or linear)", *model)
	}
	switch *bounds {
	case "inclusive":
	case "exclusive":
		cfg.exclusive = true
	default:
		return cfg, fmt.Errorf("unknown -bounds %q (want inclusive or exclusive)", *bounds)
	}
	switch *rules {
	case "corrected":
		cfg.mode = experiment.Corrected
	case "published":
		cfg.mode = experiment.Published
	default:
		return cfg, fmt.Errorf("unknown -rules %q (want corrected or published)", *rules)
	}
	switch *which {
	case "both":
		cfg.exps = []string{"reliabuild", "spack-build"}
	case "reliabuild", "spack-build":
		cfg.exps = []string{*which}
	default:
		return cfg, fmt.Errorf("unknown -experiment %q (want reliabuild, spack-build or both)", *which)
	}
	// A -data directory without an experiment's directory is refused
	// before any work, naming what it should hold.
	for _, e := range cfg.exps {
		if cfg.data == "" {
			break
		}
		if st, err := os.Stat(filepath.Join(cfg.data, e)); err != nil || !st.IsDir() {
			return cfg, fmt.Errorf("-data %s has no %s/ directory: give the directory laid out like shared/testdata/rainbow (scripts/fetch-testdata.sh fetches it), or -experiment the other one", cfg.data, e)
		}
	}
	return cfg, nil
}

// run runs the experiments; on cancellation it stops between levels and
// leaves no output file half-written.
func run(ctx context.Context, cfg config) error {
	out, data, exps, mode, seed := cfg.out, cfg.data, cfg.exps, cfg.mode, cfg.seed
	for _, e := range exps {
		dir := out
		if len(exps) > 1 {
			dir = filepath.Join(out, e)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		start := time.Now()
		jb, err := newJobs(filepath.Join(dir, "jobs.csv"))
		if err != nil {
			return err
		}
		var rep *experiment.Report
		if e == "reliabuild" {
			rep, err = runVersions(ctx, dir, data, cfg.exclusive, mode, seed, jb.record)
		} else {
			rep, err = runBuilds(ctx, dir, data, cfg.exclusive, mode, cfg.linear, seed, jb.record)
		}
		if err == nil {
			err = ctx.Err()
		}
		if cerr := jb.close(err != nil); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d levels in %s\n", e, len(rep.Levels), time.Since(start).Round(time.Millisecond))
		var pub *experiment.Report
		if data != "" {
			pub, err = experiment.LoadPublished(filepath.Join(data, e))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if err := writeScores(dir, rep); err != nil {
			return err
		}
		if err := figures(dir, rep, pub, mode, jb); err != nil {
			return err
		}
		what := "ours"
		if pub != nil {
			what = "published beside ours"
		}
		fmt.Printf("%s: wrote scores.json, scores.csv, jobs.csv and the published experiment's figures (%s) to %s\n", e, what, dir)
	}
	return nil
}

func runVersions(ctx context.Context, out, data string, exclusive bool, mode experiment.Mode, seed uint64, record func(experiment.Submission)) (*experiment.Report, error) {
	cfg := experiment.VersionConfig{Mode: mode, Exclusive: exclusive, Seed: seed, Progress: os.Stderr, Record: record}
	var w *experiment.VersionWorld
	if data == "" {
		fmt.Println("reliabuild: generating a synthetic world (100 clusters, 219 subsystems, 1602 jobs)")
		w = versionWorld(synth.RainbowVersions(rand.New(rand.NewPCG(seed, 0)), synth.RainbowVersionConfig{}))
		var cs []matcher.Cluster
		for _, c := range w.Clusters[:1] {
			cs = append(cs, c.Cluster())
		}
		if err := writeWorld(out, func(f *os.File) error { return experiment.WriteVersionClusters(f, w.Clusters) }, cs); err != nil {
			return nil, err
		}
	} else {
		dir := filepath.Join(data, "reliabuild")
		fmt.Println("reliabuild: loading", dir)
		var err error
		if w, err = experiment.LoadVersionWorld(ctx, dir); err != nil {
			return nil, err
		}
		// Each job names its file; the published file order below regroups
		// them without a second read.
		var files []string
		byFile := map[string][]experiment.VersionJob{}
		for _, j := range w.Jobs {
			if _, ok := byFile[j.File]; !ok {
				files = append(files, j.File)
			}
			byFile[j.File] = append(byFile[j.File], j)
		}
		// The published run's effective subsystem order is the key order of
		// its subsystem-assignments.json; its values name the job the
		// single-subsystem loop scored every submission as.
		if order, scoreAs, err := publishedOrder(filepath.Join(dir, "results", "subsystem-assignments.json")); err == nil {
			cfg.Order, cfg.ScoreAs = order, scoreAs
			fmt.Printf("reliabuild: using the published subsystem order (%d subsystems)\n", len(order))
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if mode == experiment.Published {
			jobs, err := publishedJobOrder(dir, files, byFile)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			if jobs != nil {
				w.Jobs = jobs
				fmt.Println("reliabuild: jobspec files in the published driver's order")
			}
		}
	}
	return experiment.RunVersions(ctx, w, cfg)
}

func runBuilds(ctx context.Context, out, data string, exclusive bool, mode experiment.Mode, linear bool, seed uint64, record func(experiment.Submission)) (*experiment.Report, error) {
	var w *experiment.BuildWorld
	if data == "" {
		fmt.Println("spack-build: generating a synthetic world (100 clusters, 171 packages, 31622 builds)")
		w = buildWorld(synth.RainbowBuilds(rand.New(rand.NewPCG(seed, 0)), synth.RainbowBuildConfig{}))
		var cs []matcher.Cluster
		for _, c := range w.Clusters[:1] {
			cs = append(cs, c.Cluster())
		}
		if err := writeWorld(out, func(f *os.File) error { return experiment.WriteBuildClusters(f, w.Clusters) }, cs); err != nil {
			return nil, err
		}
	} else {
		dir := filepath.Join(data, "spack-build")
		fmt.Println("spack-build: loading", dir)
		var err error
		if w, err = experiment.LoadBuildWorld(ctx, dir); err != nil {
			return nil, err
		}
	}
	cfg := experiment.BuildConfig{Mode: mode, Exclusive: exclusive, Seed: seed, Progress: os.Stderr, Record: record}
	if linear {
		cfg.Linear = true
		fmt.Println("spack-build: runtime model: per-package OLS of duration on mean memory")
	}
	return experiment.RunBuilds(ctx, w, cfg)
}

func versionWorld(s synth.RainbowVersionWorld) *experiment.VersionWorld {
	w := &experiment.VersionWorld{}
	for _, c := range s.Clusters {
		w.Clusters = append(w.Clusters, experiment.VersionCluster{Name: c.Name, Versions: c.Versions})
	}
	for _, j := range s.Jobs {
		vj := experiment.VersionJob{Name: j.Name, Package: j.Package}
		for _, r := range j.Ranges {
			vj.Ranges = append(vj.Ranges, matcher.Requirement{Subsystem: r.Subsystem, Field: "version", Op: matcher.InRange, Min: r.Min, Max: r.Max})
		}
		w.Jobs = append(w.Jobs, vj)
	}
	return w
}

func buildWorld(s synth.RainbowBuildWorld) *experiment.BuildWorld {
	w := &experiment.BuildWorld{}
	for _, c := range s.Clusters {
		w.Clusters = append(w.Clusters, experiment.BuildCluster(c))
	}
	for _, j := range s.Jobs {
		w.Jobs = append(w.Jobs, matcher.BuildJob{Name: j.Name, Package: j.Package, Arch: j.Arch, Compiler: j.Compiler,
			CompilerVersion: j.CompilerVersion, MemMin: j.MemMin, MemMean: j.MemMean, MemMax: j.MemMax, Duration: j.Duration})
	}
	return w
}

// publishedOrder reads the key order of subsystem-assignments.json and the
// first job name in it.
func publishedOrder(path string) ([]string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	d := json.NewDecoder(f)
	if _, err := d.Token(); err != nil {
		return nil, "", err
	}
	var order []string
	scoreAs := ""
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, "", err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, "", fmt.Errorf("%s: unexpected token %v", path, tok)
		}
		order = append(order, key)
		var v map[string][]string
		if err := d.Decode(&v); err != nil {
			return nil, "", fmt.Errorf("%s: %s: %w", path, key, err)
		}
		for _, names := range v {
			if len(names) > 0 && scoreAs == "" {
				scoreAs = names[0]
			}
		}
	}
	return order, scoreAs, nil
}

// writeWorld writes a synthetic world's cluster-features.json and, for
// the given clusters, rainbow JGF files (jgf-sample/<cluster>/nodes.json and
// one <subsystem>-subsystem.json per subsystem), the layout of the
// published data.
func writeWorld(dir string, features func(*os.File) error, clusters []matcher.Cluster) error {
	if err := writeOut(filepath.Join(dir, "cluster-features.json"), features); err != nil {
		return err
	}
	for _, c := range clusters {
		cdir := filepath.Join(dir, "jgf-sample", "cluster-"+c.Name)
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return err
		}
		c.Name = "cluster-" + c.Name
		c.Nodes, c.Cores = 4, 8
		files := map[string]func(*os.File) error{"nodes.json": func(f *os.File) error { return matcher.WriteCluster(f, &c) }}
		for name, s := range c.Subsystems {
			// Attach every subsystem vertex to every node vertex, as the
			// published clusters did (node ids 2, 6, 10, 14 in WriteCluster's
			// numbering for 4 nodes with 2 cores each).
			sub := *s
			sub.Vertices = append([]matcher.Vertex(nil), s.Vertices...)
			for i := range sub.Vertices {
				sub.Vertices[i].Parents = []string{"2", "6", "10", "14"}
			}
			files[name+"-subsystem.json"] = func(f *os.File) error { return matcher.WriteSubsystem(f, &sub) }
		}
		for name, write := range files {
			if err := writeOut(filepath.Join(cdir, name), write); err != nil {
				return err
			}
		}
	}
	fmt.Printf("wrote the synthetic world's cluster-features.json and a JGF sample to %s\n", dir)
	return nil
}

// publishedJobOrder reads the jobspec files in the order the published
// driver did (os.listdir order, which decides which jobs its cross-job
// de-duplication skipped). unmatched-at-raw.json lists unmatched jobs in the
// order the driver met them, which reveals that file order.
func publishedJobOrder(dir string, files []string, byFile map[string][]experiment.VersionJob) ([]experiment.VersionJob, error) {
	raw, err := os.Open(filepath.Join(dir, "results", "unmatched-at-raw.json"))
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	fileOf := map[string]string{}
	for _, f := range files {
		for _, j := range byFile[f] {
			if _, ok := fileOf[j.Name]; !ok {
				fileOf[j.Name] = f
			}
		}
	}
	d := json.NewDecoder(raw)
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	var order []string
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		var n int
		if err := d.Decode(&n); err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		if f, ok := fileOf[name]; ok && !seen[f] {
			seen[f] = true
			order = append(order, f)
		}
	}
	if len(order) != len(files) {
		return nil, nil // the order is not fully determined; keep numeric order
	}
	var jobs []experiment.VersionJob
	for _, f := range order {
		jobs = append(jobs, byFile[f]...)
	}
	return jobs, nil
}

// writeScores writes scores.json and scores.csv.
func writeScores(dir string, rep *experiment.Report) error {
	if err := writeOut(filepath.Join(dir, "scores.json"), func(f *os.File) error { return rep.WriteJSON(f) }); err != nil {
		return err
	}
	return writeOut(filepath.Join(dir, "scores.csv"), func(f *os.File) error { return writeCSV(f, rep) })
}

func writeCSV(f io.Writer, rep *experiment.Report) error {
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "level,mode,jobs,unmatched,unmatched_percent,build_success_mean,build_success_std,marginal_score_mean,matched_clusters_mean,unmatched_at_mean,additional_runtime_seconds,additional_cost")
	for _, l := range rep.Levels {
		for _, m := range []struct {
			name string
			s    experiment.Scores
		}{{"expected", l.Expected}, {"draw", l.Drawn}} {
			s := m.s
			fmt.Fprintf(w, "%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s\n", l.Name, m.name, s.Jobs, s.Unmatched,
				g(s.UnmatchedPercent), g(s.BuildSuccess.Mean), g(s.BuildSuccess.Std), g(s.MarginalScore.Mean),
				g(s.MatchedClusters.Mean), g(s.UnmatchedAt.Mean), g(s.AdditionalRuntime.Value), g(s.AdditionalCost.Value))
		}
	}
	return w.Flush()
}

func g(f float64) string {
	if math.IsNaN(f) {
		return ""
	}
	return strconv.FormatFloat(f, 'g', 10, 64)
}
