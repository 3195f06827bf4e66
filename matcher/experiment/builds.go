package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/crosscluster/crosscluster/matcher"
)

// compilerRule decides whether a build's compiler version is compatible
// with a cluster's (same compiler family).
type compilerRule int

const (
	// clusterAtLeastJob: the build succeeds when the cluster's compiler is
	// at least as new as the one the build used (the experiment README:
	// newer compilers can handle older builds).
	clusterAtLeastJob compilerRule = iota
	// jobAtLeastCluster: the build fails when its compiler is older than the
	// cluster's, the published code's (reversed) rule. The published 6.1%
	// build success for random assignment reproduces only under this rule.
	jobAtLeastCluster
)

func (r compilerRule) String() string {
	switch r {
	case clusterAtLeastJob:
		return "cluster-at-least-job"
	case jobAtLeastCluster:
		return "job-at-least-cluster"
	}
	return "CompilerRule(" + strconv.Itoa(int(r)) + ")"
}

// freeKey is the cluster state key of free nodes, as in rainbow.
const freeKey = "nodes_free"

// BuildConfig configures RunBuilds. The zero value runs the corrected
// experiment: inclusive memory bound, the README's compiler rule, KNN (k = 5)
// runtime models fitted on the world's builds, the fastest build as the
// optimum, 2 nodes per job, seed 0.
type BuildConfig struct {
	Mode Mode
	// Exclusive makes the memory requirement strict (cluster memory > the
	// build's peak memory instead of >=).
	Exclusive bool
	// Linear predicts build durations with a least-squares line of
	// duration on mean memory per package (with an intercept) instead of
	// the published k-nearest-neighbour regression (k = 5).
	Linear bool
	Seed   uint64
	// Progress, when set, receives one line per level.
	Progress io.Writer
	// Record, when set, is called with every submission's scores, in the
	// order of submission.
	Record func(Submission)

	// Knobs the tests vary; the zero values are the published run's.
	compiler    compilerRule // the compatibility rule in Corrected mode (Published always uses jobAtLeastCluster)
	model       runtimeModel // nil: fitted on the world's builds (Linear says how)
	baseline    baselineKind // the memory whose predicted runtime is the optimum
	nodesPerJob int          // each job's size; 0 means 2
}

// buildLevels returns the spack-build experiment's level names in order (a
// new slice each call; the package keeps no mutable globals).
func buildLevels() []string {
	return []string{"none", "arch-subsystem", "compiler-subsystem", "compiler-version-subsystem",
		"memory-subsystem", "arch", "arch-compiler", "arch-compiler-compiler-version",
		"arch-compiler-compiler-version-memory", "constraint-with-replacement", "constraint-without-replacement"}
}

// uniqueBuildJobs drops jobs whose resources (arch, compiler, compiler
// version, memory min/mean/max) repeat an earlier job's, keeping the first.
func uniqueBuildJobs(jobs []matcher.BuildJob) (unique []matcher.BuildJob, repeated int) {
	return uniqueBy(jobs, func(j matcher.BuildJob) (string, bool) {
		return strings.Join([]string{j.Arch, j.Compiler, j.CompilerVersion, strconvFormat(j.MemMin),
			strconvFormat(j.MemMean), strconvFormat(j.MemMax)}, "\x00"), true
	})
}

// Cluster returns c as a rainbow Cluster: subsystems "arch" (one vertex,
// value = arch), "compiler" (a "compiler" vertex with the family and a
// "compiler-version" vertex with the version, both in field "value") and
// "memory" (value = bytes as an integer); state "cost_per_node_hour" and
// "memory_per_node".
func (c BuildCluster) Cluster() matcher.Cluster {
	v := func(typ, val string) matcher.Vertex {
		return matcher.Vertex{ID: typ + "1", Type: typ, Fields: map[string]string{"value": val}}
	}
	comp, ver := v("compiler", c.Compiler), v("compiler-version", c.CompilerVersion)
	ver.ID = "compiler2"
	return matcher.Cluster{Name: c.Name,
		State: map[string]float64{"cost_per_node_hour": c.CostPerNodeHour, "memory_per_node": c.Memory},
		Subsystems: map[string]*matcher.Subsystem{
			"arch":     {Name: "arch", Vertices: []matcher.Vertex{v("arch", c.Arch)}},
			"compiler": {Name: "compiler", Vertices: []matcher.Vertex{comp, ver}},
			"memory":   {Name: "memory", Vertices: []matcher.Vertex{v("memory", strconv.FormatInt(int64(c.Memory), 10))}},
		}}
}

// requirements returns what the published driver submitted for j with the
// named subsystems: "arch" (value equal), "compiler" (family equal),
// "compiler-version" (family and version equal, on subsystem "compiler")
// and "memory" (value in range from the build's peak memory as an integer).
func requirements(j *matcher.BuildJob, subsystems ...string) []matcher.Requirement {
	var rs []matcher.Requirement
	for _, s := range subsystems {
		switch s {
		case "arch":
			rs = append(rs, matcher.Requirement{Subsystem: "arch", Field: "value", Op: matcher.Equal, Value: j.Arch})
		case "compiler":
			rs = append(rs, matcher.Requirement{Subsystem: "compiler", Field: "value", Op: matcher.Equal, Value: j.Compiler})
		case "compiler-version":
			rs = append(rs, matcher.Requirement{Subsystem: "compiler", Field: "value", Op: matcher.Equal, Value: j.Compiler},
				matcher.Requirement{Subsystem: "compiler", Field: "value", Op: matcher.Equal, Value: j.CompilerVersion})
		case "memory":
			rs = append(rs, matcher.Requirement{Subsystem: "memory", Field: "value", Op: matcher.InRange, Min: strconv.FormatInt(int64(j.MemMax), 10)})
		}
	}
	return rs
}

type reqKey struct {
	sub, field string
	op         matcher.Op
	value, min string
}

type bexp struct {
	cfg         BuildConfig
	nC          int
	clusters    []BuildCluster
	pool        *matcher.Pool // the clusters in name order, for bulk checks
	idx         []int
	masks       map[reqKey]bitset
	outcome     map[[3]string][]int8 // per (arch, compiler, version): per cluster 0 ok or a reason 1..4
	lastJob     *matcher.BuildJob
	lastOutcome []int8
	pred        map[string][]float64
	opt         map[string]float64
	rule        compilerRule
	checks      int64
	evaluated   int64
}

// reqMask returns the clusters meeting one requirement, cached.
func (x *bexp) reqMask(r matcher.Requirement) bitset {
	key := reqKey{r.Subsystem, r.Field, r.Op, r.Value, r.Min}
	b, ok := x.masks[key]
	if !ok {
		b = newBitset(x.nC)
		x.idx = x.pool.Satisfying(x.idx[:0], r)
		for _, c := range x.idx {
			b.set(c)
		}
		x.evaluated += int64(x.nC)
		x.masks[key] = b
	}
	return b
}

// jobMasks returns, per subsystem of the experiment's order, the clusters
// meeting that subsystem's requirements for j, and the requirement counts.
func (x *bexp) jobMasks(j *matcher.BuildJob, order []string) ([]bitset, []int) {
	ms := make([]bitset, len(order))
	ns := make([]int, len(order))
	for i, s := range order {
		m := fullBitset(x.nC)
		rs := requirements(j, s)
		for _, r := range rs {
			x.reqMask(r).and(m, m)
		}
		ms[i], ns[i] = m, len(rs)
	}
	return ms, ns
}

func (x *bexp) outcomes(j *matcher.BuildJob) []int8 {
	if j == x.lastJob {
		return x.lastOutcome
	}
	key := [3]string{j.Arch, j.Compiler, j.CompilerVersion}
	if o, ok := x.outcome[key]; ok {
		x.lastJob, x.lastOutcome = j, o
		return o
	}
	o := make([]int8, x.nC)
	jv, jerr := matcher.ParseVersion(j.CompilerVersion)
	for c, cl := range x.clusters {
		switch {
		case cl.Arch != j.Arch:
			o[c] = 1
		case cl.Compiler != j.Compiler:
			o[c] = 2
		default:
			cv, cerr := matcher.ParseVersion(cl.CompilerVersion)
			switch {
			case jerr != nil || cerr != nil:
				o[c] = 4
			case x.rule == jobAtLeastCluster && jv.Compare(cv) < 0,
				x.rule == clusterAtLeastJob && cv.Compare(jv) < 0:
				o[c] = 3
			}
		}
	}
	x.outcome[key] = o
	x.lastJob, x.lastOutcome = j, o
	return o
}

func (x *bexp) predictions(pkg string) ([]float64, float64, error) {
	if p, ok := x.pred[pkg]; ok {
		return p, x.opt[pkg], nil
	}
	p := make([]float64, x.nC)
	for c, cl := range x.clusters {
		d, err := x.cfg.model.Predict(pkg, cl.Memory)
		if err != nil {
			return nil, 0, err
		}
		p[c] = d
	}
	x.pred[pkg] = p
	return p, x.opt[pkg], nil
}

// submit scores job j assigned uniformly among m (expected and drawn), a
// request of subs subsystems and nreq requirements; with chosen >= 0 the
// assignment is that cluster in both modes.
func (x *bexp) submit(p *pair, j *matcher.BuildJob, m bitset, subs, nreq int, chosen int, draw func(int) int) (bool, error) {
	k := m.count()
	p.countStats(k, x.nC)
	p.e.jobs++
	p.d.jobs++
	x.checks += int64(nreq * x.nC)
	if k == 0 && chosen < 0 {
		x.unmatched(p, j, k, subs)
		return false, nil
	}
	o := x.outcomes(j)
	pred, opt, err := x.predictions(j.Package)
	if err != nil {
		return false, err
	}
	type obs struct{ ok, rt, cost float64 }
	one := func(c int) obs {
		rt := pred[c] - opt
		ok := 0.0
		if o[c] == 0 {
			ok = 1
		}
		return obs{ok, rt, rt / 3600 * x.clusters[c].CostPerNodeHour}
	}
	// add records one assignment's moments (mean and second moment of
	// success, runtime and cost over the choice) and weighted reasons.
	add := func(a *acc, reasons [5]float64, ok, ok2, rt, rt2, cost, cost2 float64) {
		a.reasons.WrongArch += reasons[1]
		a.reasons.MissingCompiler += reasons[2]
		a.reasons.CompilerTooOld += reasons[3]
		a.reasons.BadVersion += reasons[4]
		if a.rtPkg == nil {
			a.rtPkg, a.costPkg = map[string]float64{}, map[string]float64{}
		}
		a.rtPkg[j.Package] += rt
		a.costPkg[j.Package] += cost
		a.possible++
		a.bs.add(ok, ok2)
		a.correct.add(ok, ok2)
		a.runtime.add(rt, rt2)
		a.cost.add(cost, cost2)
		a.rtJob.add(rt, rt2)
		a.costJob.add(cost, cost2)
	}
	// single is one cluster's outcome as a degenerate distribution.
	single := func(a *acc, c int) obs {
		v := one(c)
		var r [5]float64
		r[o[c]] = 1
		add(a, r, v.ok, v.ok, v.rt, v.rt*v.rt, v.cost, v.cost*v.cost)
		return v
	}
	var d int
	var e obs
	if chosen >= 0 {
		d = chosen
		e = single(&p.e, d)
	} else {
		w := 1 / float64(k)
		var sok, srt, srt2, sc, sc2 float64
		var r [5]float64
		m.each(func(c int) {
			v := one(c)
			r[o[c]]++
			sok += v.ok
			srt += v.rt
			srt2 += v.rt * v.rt
			sc += v.cost
			sc2 += v.cost * v.cost
		})
		for i := range r {
			r[i] *= w
		}
		e = obs{sok * w, srt * w, sc * w}
		add(&p.e, r, e.ok, e.ok, e.rt, srt2*w, e.cost, sc2*w)
		d = m.nth(draw(k))
	}
	v := single(&p.d, d)
	if x.cfg.Record != nil {
		x.cfg.Record(Submission{Level: p.name, Job: j.Name, Package: j.Package, Subsystems: subs, JobSubsystems: 3,
			Matched: k, Clusters: x.nC, Cluster: x.clusters[d].Name,
			BuildSuccess: e.ok, DrawnBuildSuccess: v.ok, MarginalScore: math.NaN(), DrawnMarginalScore: math.NaN(),
			Runtime: e.rt, DrawnRuntime: v.rt, Cost: e.cost, DrawnCost: v.cost})
	}
	return true, nil
}

// unmatched records a submission that no cluster took (none matched, or
// none had capacity left), k clusters having matched its request.
func (x *bexp) unmatched(p *pair, j *matcher.BuildJob, k, subs int) {
	p.e.unmatched++
	p.d.unmatched++
	if x.cfg.Record != nil {
		nan := math.NaN()
		x.cfg.Record(Submission{Level: p.name, Job: j.Name, Package: j.Package, Subsystems: subs, JobSubsystems: 3,
			Matched: k, Clusters: x.nC, BuildSuccess: nan, DrawnBuildSuccess: nan, MarginalScore: nan,
			DrawnMarginalScore: nan, Runtime: nan, DrawnRuntime: nan, Cost: nan, DrawnCost: nan})
	}
}

// RunBuilds runs the spack-build experiment on w's unique jobs
// (UniqueBuildJobs): level "none" assigns each build to a uniformly random
// cluster; the four "-subsystem" levels submit one subsystem's metadata
// alone; "arch" through "arch-compiler-compiler-version-memory" add them in
// that order, a job stopping at its first no-match (unmatched_at counts the
// subsystems in the request: 1, 2, 2 or 3, as published); the two
// "constraint" levels submit the jobs that matched everything with all
// metadata, filter clusters by the priorities (nodes_free > 0) and pick the
// lowest predicted cost (CostAware), with capacity never consumed (with
// replacement) or consumed NodesPerJob per job (without; not in Published
// mode, whose state update sent the old value). Every cluster starts with
// nodes_free = ⌈jobs × NodesPerJob / clusters⌉ (633 for the published data),
// enough for all jobs if they spread evenly. A build succeeds when its
// cluster has its arch, its compiler family and a compatible compiler
// version (Compiler). Additional runtime is the model's prediction at the
// cluster's memory minus its prediction at the Baseline memory; additional
// cost is that in hours times the cluster's cost per node hour. On
// cancellation it returns the levels finished so far and ctx.Err().
func RunBuilds(ctx context.Context, w *BuildWorld, cfg BuildConfig) (*Report, error) {
	if len(w.Clusters) == 0 {
		return nil, matcher.ErrNoClusters
	}
	if cfg.nodesPerJob == 0 {
		cfg.nodesPerJob = 2
	}
	if cfg.model == nil {
		if cfg.Linear {
			lin, err := fitLinear(w.samples(), true)
			if err != nil {
				return nil, err
			}
			cfg.model = lin
		} else {
			cfg.model = fitKNN(w.samples(), 5)
		}
	}
	x := &bexp{cfg: cfg, nC: len(w.Clusters), masks: map[reqKey]bitset{},
		outcome: map[[3]string][]int8{}, pred: map[string][]float64{}, rule: cfg.compiler}
	if cfg.Mode == Published {
		x.rule = jobAtLeastCluster
	}
	x.clusters = slices.Clone(w.Clusters)
	slices.SortFunc(x.clusters, func(a, b BuildCluster) int { return strings.Compare(a.Name, b.Name) })
	cls := make([]matcher.Cluster, len(x.clusters))
	for i, c := range x.clusters {
		cls[i] = c.Cluster()
	}
	var err error
	if x.pool, err = matcher.NewPool(cls, matcher.Rules{Exclusive: cfg.Exclusive}); err != nil {
		return nil, err
	}
	x.opt = map[string]float64{}
	for pkg, mem := range fastestMemory(w.samples(), cfg.baseline) {
		d, err := cfg.model.Predict(pkg, mem)
		if err != nil {
			return nil, err
		}
		x.opt[pkg] = d
	}
	jobs, _ := uniqueBuildJobs(w.Jobs)
	rep := &Report{Experiment: "spack-build", mode: cfg.Mode, exclusive: cfg.Exclusive, seed: cfg.Seed,
		order: []string{"arch", "compiler", "compiler-version", "memory"}, UnmatchedAt: map[string]int{},
		MaxPercentMatched: map[string]float64{}}
	rng := newRand(cfg.Seed, 2)
	draw := func(k int) int { return rng.IntN(k) }
	finish := func(err error) (*Report, error) {
		rep.checks, rep.evaluated = x.checks, x.evaluated
		return rep, err
	}
	emit := func(p *pair) {
		l := p.level()
		rep.Levels = append(rep.Levels, l)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "spack-build %s: %-40s %6d submissions, build success %.4f, extra cost %.1f (expected)\n",
				cfg.Mode, l.Name, l.Expected.Jobs, l.Expected.BuildSuccess.Mean, l.Expected.AdditionalCost.Value)
		}
	}
	all := fullBitset(x.nC)

	none := pair{name: "none"}
	for i := range jobs {
		if _, err := x.submit(&none, &jobs[i], all, 0, 0, -1, draw); err != nil {
			return finish(err)
		}
	}
	emit(&none)
	masks := make([][]bitset, len(jobs))
	nreqs := make([][]int, len(jobs))
	for i := range jobs {
		masks[i], nreqs[i] = x.jobMasks(&jobs[i], rep.order)
	}
	for si, s := range rep.order {
		if err := ctx.Err(); err != nil {
			return finish(err)
		}
		p := pair{name: s + "-subsystem"}
		for i := range jobs {
			if _, err := x.submit(&p, &jobs[i], masks[i][si], 1, nreqs[i][si], -1, draw); err != nil {
				return finish(err)
			}
		}
		emit(&p)
	}

	// Expanding levels: each job moves on while it matches. subs counts
	// the subsystems of each level's request (compiler-version adds to the
	// compiler subsystem): 1, 2, 2, 3.
	levels := make([]pair, len(rep.order))
	subs := make([]int, len(rep.order))
	for li := range rep.order {
		subs[li] = subsystemCount(requirements(&matcher.BuildJob{}, rep.order[:li+1]...))
		levels[li].name = strings.Join(rep.order[:li+1], "-")
	}
	alive := make([]bool, len(jobs))
	cur := newBitset(x.nC)
	for i := range jobs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return finish(err)
			}
		}
		alive[i] = true
		copy(cur, all)
		nreq := 0
		for li := range rep.order {
			masks[i][li].and(cur, cur)
			nreq += nreqs[i][li]
			ok, err := x.submit(&levels[li], &jobs[i], cur, subs[li], nreq, -1, draw)
			if err != nil {
				return finish(err)
			}
			if !ok {
				at := subs[li]
				levels[li].stopped(at, 3)
				rep.UnmatchedAt[jobs[i].Name] = at
				rep.MaxPercentMatched[jobs[i].Name] = float64(at) / 3
				alive[i] = false
				break
			}
		}
	}
	for li := range levels {
		emit(&levels[li])
	}

	// Constraint levels: the published rainbow-config.yaml's one priority,
	// filter "nodes_free > 0", then the lowest predicted cost.
	nodesFree := float64((len(jobs)*cfg.nodesPerJob + x.nC - 1) / x.nC)
	for _, replacement := range []bool{true, false} {
		if err := ctx.Err(); err != nil {
			return finish(err)
		}
		cls := make([]*matcher.Cluster, x.nC)
		for c, bc := range x.clusters {
			cl := bc.Cluster()
			cl.State[freeKey] = nodesFree
			cls[c] = &cl
		}
		index := map[*matcher.Cluster]int{}
		for c, cl := range cls {
			index[cl] = c
		}
		consume := !replacement && cfg.Mode != Published
		p := pair{name: "constraint-with-replacement"}
		if !replacement {
			p.name = "constraint-without-replacement"
		}
		all4 := rep.order
		for i := range jobs {
			if !alive[i] {
				continue
			}
			j := &jobs[i]
			m := newBitset(x.nC)
			copy(m, all)
			nreq := 0
			for li := range all4 {
				masks[i][li].and(m, m)
				nreq += nreqs[i][li]
			}
			var cands []*matcher.Cluster
			m.each(func(c int) { cands = append(cands, cls[c]) })
			cands = slices.DeleteFunc(cands, func(c *matcher.Cluster) bool { return !(c.State[freeKey] > 0) })
			chosen, err := cheapest(cfg.model, j.Package, cands)
			if err != nil {
				return finish(err)
			}
			if chosen == nil {
				p.countStats(m.count(), x.nC)
				p.e.jobs++
				p.d.jobs++
				x.unmatched(&p, j, m.count(), subs[len(subs)-1])
				continue
			}
			c := index[chosen]
			if _, err := x.submit(&p, j, m, subs[len(subs)-1], nreq, c, draw); err != nil {
				return finish(err)
			}
			if consume {
				cls[c].State[freeKey] = max(0, cls[c].State[freeKey]-float64(cfg.nodesPerJob))
			}
		}
		emit(&p)
	}
	return finish(nil)
}

func subsystemCount(rs []matcher.Requirement) int {
	seen := map[string]bool{}
	for _, r := range rs {
		seen[r.Subsystem] = true
	}
	return len(seen)
}
