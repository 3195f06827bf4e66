package experiment

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/crosscluster/crosscluster/matcher"
)

// VersionConfig configures RunVersions. The zero value runs the corrected
// experiment with inclusive bounds, a subsystem order shuffled from seed 0.
type VersionConfig struct {
	Mode Mode
	// Bounds is the one rule for matching and scoring in Corrected mode.
	// Published mode ignores it: it matched inclusively (rainbow since
	// 2024-03-31) and scored strictly (min < v < max).
	Exclusive bool
	// Order is the order the expanding level adds subsystems in. Nil means
	// every subsystem, sorted, then shuffled with Seed. (The published order
	// was an unseeded shuffle; its effective order is the key order of the
	// published subsystem-assignments.json.)
	Order []string
	// Seed seeds the draws (and the order when Order is nil).
	Seed uint64
	// ScoreAs, in Published mode, names the job every single-subsystem
	// submission is scored as: the published loop reused the last job the
	// driver had iterated. Empty means the last job of the world that has
	// any dependency.
	ScoreAs string
	// Progress, when set, receives one line per level.
	Progress io.Writer
	// Record, when set, is called with every submission's scores, in the
	// order of submission.
	Record func(Submission)
}

// uniqueVersionJobs drops jobs without dependencies and jobs whose set of
// ranges repeats an earlier job's (keeping the first), as the published
// driver did. It returns the kept jobs and how many repeats were dropped.
func uniqueVersionJobs(jobs []VersionJob) (unique []VersionJob, repeated int) {
	return uniqueBy(jobs, func(j VersionJob) (string, bool) {
		if len(j.Ranges) == 0 {
			return "", false
		}
		var b strings.Builder
		for _, r := range j.Ranges {
			b.WriteString(r.Subsystem + "\x00" + r.Min + "\x00" + r.Max + "\x00")
		}
		return b.String(), true
	})
}

// uniqueBy keeps the items whose key is new, in order, dropping those
// without a key; repeated counts the items dropped for a repeated key.
func uniqueBy[T any](items []T, key func(T) (string, bool)) (unique []T, repeated int) {
	seen := map[string]bool{}
	for _, it := range items {
		k, ok := key(it)
		switch {
		case !ok:
		case seen[k]:
			repeated++
		default:
			seen[k] = true
			unique = append(unique, it)
		}
	}
	return unique, repeated
}

// Cluster returns c as a rainbow Cluster: one subsystem per dependency with
// one "package" vertex whose "version" field is the cluster's version.
func (c VersionCluster) Cluster() matcher.Cluster {
	out := matcher.Cluster{Name: c.Name, Subsystems: make(map[string]*matcher.Subsystem, len(c.Versions))}
	for sub, v := range c.Versions {
		out.Subsystems[sub] = &matcher.Subsystem{Name: sub, Vertices: []matcher.Vertex{{
			ID: sub + "1", Type: "package", Fields: map[string]string{"version": v}}}}
	}
	return out
}

// job returns j as a rainbow job with one InRange requirement on the
// "version" field per dependency, as the published driver submitted it.
func (j VersionJob) job() matcher.Job {
	out := matcher.Job{Name: j.Name, Nodes: 2, Cores: 8}
	out.Requires = slices.Clone(j.Ranges)
	return out
}

type vjob struct {
	job *VersionJob
	rid []int32 // per global subsystem index: range id or -1
	n   int
	pts []int32 // per cluster: dependencies in range under the score rule
}

type vexp struct {
	cfg       VersionConfig
	nC        int
	matchP    *matcher.Pool // the clusters in name order under the match rule
	scoreP    *matcher.Pool // and under the score rule
	idx       []int
	subIdx    map[string]int
	subs      []string
	rids      map[matcher.Requirement]int32
	match     []bitset
	score     []bitset
	matchX    bool     // exclusive bounds when matching
	scoreX    bool     // and when scoring
	names     []string // cluster names, in index order
	checks    int64
	evaluated int64
}

func (x *vexp) rangeID(dr matcher.Requirement) int32 {
	if id, ok := x.rids[dr]; ok {
		return id
	}
	q := matcher.Requirement{Subsystem: dr.Subsystem, Field: "version", Op: matcher.InRange, Min: dr.Min, Max: dr.Max}
	m, s := newBitset(x.nC), newBitset(x.nC)
	x.idx = x.matchP.Satisfying(x.idx[:0], q)
	for _, c := range x.idx {
		m.set(c)
	}
	x.idx = x.scoreP.Satisfying(x.idx[:0], q)
	for _, c := range x.idx {
		s.set(c)
	}
	x.evaluated += 2 * int64(x.nC)
	id := int32(len(x.match))
	x.rids[dr] = id
	x.match = append(x.match, m)
	x.score = append(x.score, s)
	return id
}

func (x *vexp) prepare(j *VersionJob) *vjob {
	v := &vjob{job: j, rid: make([]int32, len(x.subs)), n: len(j.Ranges), pts: make([]int32, x.nC)}
	for i := range v.rid {
		v.rid[i] = -1
	}
	for _, r := range j.Ranges {
		id := x.rangeID(r)
		if si, ok := x.subIdx[r.Subsystem]; ok {
			v.rid[si] = id
		}
		x.score[id].each(func(c int) { v.pts[c]++ })
	}
	x.checks += int64(v.n * x.nC)
	return v
}

// submit scores one submission whose matched clusters are m, as job sj, in
// both modes, with nreq subsystems in the request. It reports whether any
// cluster matched.
func (x *vexp) submit(p *pair, sj *vjob, m bitset, nreq int, stats bool, draw func(int) int) bool {
	k := m.count()
	p.e.jobs++
	p.d.jobs++
	x.checks += int64(nreq * x.nC)
	if stats {
		p.countStats(k, x.nC)
	}
	rec := Submission{Level: p.name, Job: sj.job.Name, Package: sj.job.Package, Subsystems: nreq, JobSubsystems: sj.n,
		Matched: k, Clusters: x.nC, BuildSuccess: math.NaN(), DrawnBuildSuccess: math.NaN(), MarginalScore: math.NaN(),
		DrawnMarginalScore: math.NaN(), Runtime: math.NaN(), DrawnRuntime: math.NaN(), Cost: math.NaN(), DrawnCost: math.NaN()}
	if k == 0 {
		p.e.unmatched++
		p.d.unmatched++
		if x.cfg.Record != nil {
			x.cfg.Record(rec)
		}
		return false
	}
	n := int32(sj.n)
	nf := float64(n)
	var sb, sm, sm2, sp, sp2 float64
	m.each(func(c int) {
		pt := sj.pts[c]
		if pt == n {
			sb++
		}
		pf := float64(pt)
		sm += pf / nf
		sm2 += (pf / nf) * (pf / nf)
		sp += pf
		sp2 += pf * pf
	})
	kf := float64(k)
	p.e.possible += sj.n
	p.e.bs.add(sb/kf, sb/kf)
	p.e.marg.add(sm/kf, sm2/kf)
	p.e.correct.add(sp/kf, sp2/kf)
	x.checks += int64(sj.n * k)

	c := m.nth(draw(k))
	pf := float64(sj.pts[c])
	b := 0.0
	if sj.pts[c] == n {
		b = 1
	}
	p.d.possible += sj.n
	p.d.bs.add(b, b)
	p.d.marg.add(pf/nf, pf*pf/(nf*nf))
	p.d.correct.add(pf, pf*pf)
	if x.cfg.Record != nil {
		rec.Cluster = x.names[c]
		rec.BuildSuccess, rec.DrawnBuildSuccess = sb/kf, b
		rec.MarginalScore, rec.DrawnMarginalScore = sm/kf, pf/nf
		x.cfg.Record(rec)
	}
	return true
}

// RunVersions runs the version-range (reliabuild) experiment: levels
// "none" (no metadata: any cluster), "single-subsystem" (each subsystem's
// range alone) and "expanded-subsystems" (ranges added one subsystem at a
// time in Order until no cluster matches). A job's score is whether its
// assigned cluster has every dependency in range (build success), the share
// in range (marginal score) and the count in range (versions in range).
// Jobs are first de-duplicated by UniqueVersionJobs. A dependency no cluster
// provides matches nothing and scores no point. On cancellation it returns
// the levels finished so far and ctx.Err().
func RunVersions(ctx context.Context, w *VersionWorld, cfg VersionConfig) (*Report, error) {
	if len(w.Clusters) == 0 {
		return nil, matcher.ErrNoClusters
	}
	x := &vexp{cfg: cfg, nC: len(w.Clusters), subIdx: map[string]int{}, rids: map[matcher.Requirement]int32{},
		matchX: cfg.Exclusive, scoreX: cfg.Exclusive}
	if cfg.Mode == Published {
		x.matchX, x.scoreX = false, true
	}
	clusters := slices.Clone(w.Clusters)
	slices.SortFunc(clusters, func(a, b VersionCluster) int { return strings.Compare(a.Name, b.Name) })
	subset := map[string]bool{}
	cls := make([]matcher.Cluster, len(clusters))
	for i, c := range clusters {
		cls[i] = c.Cluster()
		x.names = append(x.names, c.Name)
		for s := range c.Versions {
			subset[s] = true
		}
	}
	var err error
	if x.matchP, err = matcher.NewPool(cls, matcher.Rules{Exclusive: x.matchX}); err != nil {
		return nil, err
	}
	x.scoreP = x.matchP
	if x.scoreX != x.matchX {
		if x.scoreP, err = matcher.NewPool(cls, matcher.Rules{Exclusive: x.scoreX}); err != nil {
			return nil, err
		}
	}
	uniq, _ := uniqueVersionJobs(w.Jobs)
	for _, j := range uniq {
		for _, r := range j.Ranges {
			subset[r.Subsystem] = true
		}
	}
	x.subs = slices.Sorted(maps.Keys(subset))
	for i, s := range x.subs {
		x.subIdx[s] = i
	}
	order := cfg.Order
	if order == nil {
		order = slices.Clone(x.subs)
		r := newRand(cfg.Seed, 1)
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	rep := &Report{Experiment: "reliabuild", mode: cfg.Mode, exclusive: x.scoreX, seed: cfg.Seed, order: order,
		UnmatchedAt: map[string]int{}, MaxPercentMatched: map[string]float64{}}
	if cfg.Mode == Published {
		rep.exclusive = true
	}
	jobs := make([]*vjob, len(uniq))
	for i := range uniq {
		jobs[i] = x.prepare(&uniq[i])
	}
	rng := newRand(cfg.Seed, 2)
	draw := func(k int) int { return rng.IntN(k) }
	progress := func(l Level) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "reliabuild %s: %-20s %5d submissions, build success %.4f (expected)\n",
				cfg.Mode, l.Name, l.Expected.Jobs, l.Expected.BuildSuccess.Mean)
		}
	}
	finish := func(err error) (*Report, error) {
		rep.checks, rep.evaluated = x.checks, x.evaluated
		return rep, err
	}

	// Level none: no metadata, every cluster matches.
	none := pair{name: "none"}
	all := fullBitset(x.nC)
	for _, j := range jobs {
		none.countStats(x.nC, x.nC)
		x.submit(&none, j, all, 0, false, draw)
	}
	rep.Levels = append(rep.Levels, none.level())
	progress(rep.Levels[len(rep.Levels)-1])
	if err := ctx.Err(); err != nil {
		return finish(err)
	}

	// Level single-subsystem.
	single := pair{name: "single-subsystem"}
	if cfg.Mode == Published {
		scoreAs, err := x.scoreAsJob(w, cfg.ScoreAs)
		if err != nil {
			return finish(err)
		}
		for oi, s := range order {
			si, ok := x.subIdx[s]
			if !ok {
				continue
			}
			last := oi == len(order)-1
			seen := map[int32]bool{}
			for _, j := range jobs {
				id := j.rid[si]
				if id < 0 || seen[id] {
					continue
				}
				seen[id] = true
				x.submit(&single, scoreAs, x.match[id], 1, last, draw)
			}
		}
	} else {
		for _, s := range order {
			si, ok := x.subIdx[s]
			if !ok {
				continue
			}
			for _, j := range jobs {
				if id := j.rid[si]; id >= 0 {
					m := x.match[id]
					single.countStats(m.count(), x.nC)
					x.submit(&single, j, m, 1, false, draw)
				}
			}
		}
	}
	rep.Levels = append(rep.Levels, single.level())
	progress(rep.Levels[len(rep.Levels)-1])
	if err := ctx.Err(); err != nil {
		return finish(err)
	}

	// Level expanded-subsystems.
	exp := pair{name: "expanded-subsystems"}
	type edge struct{ parent, rid int32 }
	trie := map[edge]int32{}
	var seenNode []bool
	cur := newBitset(x.nC)
	for ji, j := range jobs {
		if ji%256 == 0 {
			if err := ctx.Err(); err != nil {
				return finish(err)
			}
		}
		copy(cur, all)
		node, added := int32(-1), 0
		for _, s := range order {
			si, ok := x.subIdx[s]
			if !ok || j.rid[si] < 0 {
				continue
			}
			id := j.rid[si]
			added++
			x.match[id].and(cur, cur)
			if cfg.Mode == Published {
				e := edge{node, id}
				next, ok := trie[e]
				if !ok {
					next = int32(len(seenNode))
					trie[e] = next
					seenNode = append(seenNode, false)
				}
				node = next
				if seenNode[node] {
					continue
				}
				seenNode[node] = true
			}
			k := cur.count()
			exp.countStats(k, x.nC)
			if !x.submit(&exp, j, cur, added, false, draw) {
				exp.stopped(added, j.n)
				rep.UnmatchedAt[j.job.Name] = added
				rep.MaxPercentMatched[j.job.Name] = float64(added) / float64(j.n)
				break
			}
		}
	}
	rep.Levels = append(rep.Levels, exp.level())
	progress(rep.Levels[len(rep.Levels)-1])
	return finish(nil)
}

func (x *vexp) scoreAsJob(w *VersionWorld, name string) (*vjob, error) {
	for i := len(w.Jobs) - 1; i >= 0; i-- {
		j := &w.Jobs[i]
		if len(j.Ranges) == 0 {
			continue
		}
		if name == "" || j.Name == name {
			return x.prepare(j), nil
		}
	}
	return nil, fmt.Errorf("matcher: ScoreAs job %q not found", name)
}
