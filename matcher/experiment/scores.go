package experiment

import (
	"encoding/json"
	"io"
	"math"
	"math/bits"
)

// Stat is a mean and population standard deviation (numpy.std's ddof=0, as
// the published scores used). In expected mode Mean is the exact expectation
// over the random choice of cluster, Std is the square root of the expected
// population variance, and SE is the standard deviation of a single seeded
// draw's Mean around the expected Mean (zero when nothing is random). In a
// seeded draw SE is zero.
type Stat struct {
	Mean, Std, SE float64
}

// Total is a sum over submissions with the standard deviation of a single
// draw's sum around it (SE; zero in a draw or when nothing is random).
type Total struct {
	Value, SE float64
}

// reasonCounts counts failed builds by cause (spack-build experiment). In
// expected mode the counts are expectations and may be fractional.
type reasonCounts struct {
	WrongArch       float64 // the cluster's arch differs from the build's
	MissingCompiler float64 // same arch, different compiler family
	CompilerTooOld  float64 // right compiler, version incompatible under the CompilerRule
	BadVersion      float64 // a compiler version that does not parse
}

// Scores are one level's figures, named as in the published results.
type Scores struct {
	Jobs             int // submissions in the level (published total_jobs)
	Unmatched        int // submissions no cluster matched
	UnmatchedPercent float64
	BuildSuccess     Stat // 1 when the assigned cluster has everything the build needs
	MarginalScore    Stat // share of the build's dependency ranges met (version experiment)
	// correct and Possible are the published versions_in_range (version
	// experiment: one point per dependency in range) or points_scored
	// (spack-build: one point per successful build).
	correct  Total
	possible int
	// MatchedClusters and MismatchedClusters are per submission, over all
	// submissions of the level.
	MatchedClusters    Stat
	MismatchedClusters Stat
	// UnmatchedAt is over jobs that stopped at this level: the number of
	// subsystems in the request that first matched no cluster, the failing
	// one included (the published convention). MaxPercentMatched is
	// UnmatchedAt divided by the job's number of subsystems, as the published
	// unmatched-summary.json computed it.
	UnmatchedAt       Stat
	unmatchedJobs     int
	maxPercentMatched Stat
	// Spack-build only.
	reasons           reasonCounts
	AdditionalRuntime Total // seconds, predicted minus optimal, summed
	AdditionalCost    Total // AdditionalRuntime in hours × cost per node hour, summed
	runtimePerJob     Stat  // additional runtime per assigned job, seconds
	costPerJob        Stat  // additional cost per assigned job
	runtimeByPackage  map[string]float64
	costByPackage     map[string]float64
}

// Submission is one submission of a level, scored both ways: the per-job
// data behind a level's figures. Scores that do not apply (nothing matched;
// the marginal score of a spack build, the runtime of a version job) are
// NaN.
type Submission struct {
	Level   string
	Job     string // the job scored (the published single-subsystem loop scored every submission as one job)
	Package string
	// Subsystems is how many subsystems the request named; JobSubsystems
	// how many the job has in all (its dependencies, or 3 for a spack
	// build: arch, compiler, memory). For a job that stopped unmatched,
	// Subsystems is its unmatched_at and Subsystems/JobSubsystems its
	// max_percent_matched.
	Subsystems, JobSubsystems int
	Matched, Clusters         int    // clusters that matched the request, and in the world
	Cluster                   string // the seeded draw's choice; "" when nothing matched
	// Expected over the random choice of cluster, and the seeded draw's.
	BuildSuccess, DrawnBuildSuccess   float64
	MarginalScore, DrawnMarginalScore float64
	Runtime, DrawnRuntime             float64 // additional runtime, seconds
	Cost, DrawnCost                   float64 // additional cost
}

// Level is one level of an experiment scored both ways.
type Level struct {
	Name     string
	Expected Scores // exact expectation over the random choice of cluster
	Drawn    Scores // one seeded draw, as the published driver did
}

// Report is an experiment's result.
type Report struct {
	Experiment string // "reliabuild" or "spack-build"
	mode       Mode
	exclusive  bool
	seed       uint64
	order      []string // subsystems in the order the expanding level added them
	Levels     []Level
	// UnmatchedAt maps each job that stopped unmatched in the expanding
	// levels to its unmatched_at (the published unmatched-at-raw.json), and
	// MaxPercentMatched to unmatched_at over the job's subsystems (the
	// published unmatched-summary.json).
	UnmatchedAt       map[string]int
	MaxPercentMatched map[string]float64
	// checks is the number of requirement-against-cluster checks the
	// experiment answers (every submission's requirements against every
	// cluster, and every scored dependency); they are served from a cache
	// of distinct requirements, so far fewer are evaluated.
	checks int64
	// evaluated is how many checks were actually evaluated.
	evaluated int64
}

// Level returns the level named name, or nil.
func (r *Report) Level(name string) *Level {
	for i := range r.Levels {
		if r.Levels[i].Name == name {
			return &r.Levels[i]
		}
	}
	return nil
}

// WriteJSON writes the report as scores.json:
//
//	{"experiment": ..., "mode": ..., "bounds": ..., "seed": ..., "order": [...],
//	 "levels": [{"name": ..., "jobs": ..., "build_success_mean": ..., ...,
//	             "draw": {"jobs": ..., "build_success_mean": ..., ...}}]}
//
// The flat keys of a level are the expected-mode figures; "draw" holds the
// seeded draw's.
func (r *Report) WriteJSON(w io.Writer) error {
	type out struct {
		Experiment string           `json:"experiment"`
		Mode       string           `json:"mode"`
		Bounds     string           `json:"bounds"`
		Seed       uint64           `json:"seed"`
		Order      []string         `json:"order,omitempty"`
		Levels     []map[string]any `json:"levels"`
	}
	o := out{Experiment: r.Experiment, Mode: r.mode.String(), Bounds: boundsName(r.exclusive), Seed: r.seed, Order: r.order}
	for _, l := range r.Levels {
		m := scoreMap(&l.Expected, true)
		m["name"] = l.Name
		m["draw"] = scoreMap(&l.Drawn, false)
		o.Levels = append(o.Levels, m)
	}
	return writeJSON(w, o)
}

func scoreMap(s *Scores, expected bool) map[string]any {
	m := map[string]any{
		"jobs":                     s.Jobs,
		"unmatched":                s.Unmatched,
		"unmatched_percent":        s.UnmatchedPercent,
		"build_success_mean":       jnum(s.BuildSuccess.Mean),
		"build_success_std":        jnum(s.BuildSuccess.Std),
		"marginal_score_mean":      jnum(s.MarginalScore.Mean),
		"marginal_score_std":       jnum(s.MarginalScore.Std),
		"correct":                  s.correct.Value,
		"possible":                 s.possible,
		"matched_clusters_mean":    s.MatchedClusters.Mean,
		"matched_clusters_std":     s.MatchedClusters.Std,
		"mismatched_clusters_mean": s.MismatchedClusters.Mean,
		"mismatched_clusters_std":  s.MismatchedClusters.Std,
		"unmatched_jobs":           s.unmatchedJobs,
		"unmatched_at_mean":        jnum(s.UnmatchedAt.Mean),
		"unmatched_at_std":         jnum(s.UnmatchedAt.Std),
		"max_percent_matched_mean": jnum(s.maxPercentMatched.Mean),
		"reasons": map[string]float64{"wrong_arch": s.reasons.WrongArch, "missing_compiler": s.reasons.MissingCompiler,
			"compiler_too_old": s.reasons.CompilerTooOld, "bad_version": s.reasons.BadVersion},
		"additional_runtime_seconds":      s.AdditionalRuntime.Value,
		"additional_cost":                 s.AdditionalCost.Value,
		"additional_runtime_per_job_mean": jnum(s.runtimePerJob.Mean),
		"additional_cost_per_job_mean":    jnum(s.costPerJob.Mean),
	}
	if expected {
		m["build_success_se"] = s.BuildSuccess.SE
		m["marginal_score_se"] = s.MarginalScore.SE
		m["correct_se"] = s.correct.SE
		m["additional_runtime_se"] = s.AdditionalRuntime.SE
		m["additional_cost_se"] = s.AdditionalCost.SE
	}
	return m
}

// jnum maps NaN (an empty level's mean) to JSON null.
func jnum(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return json.Number(formatFloat(f))
}

// moments accumulates, per observation, the mean mu and second moment s of
// its distribution over the random choice (a drawn value x has mu = x,
// s = x², no variance).
type moments struct {
	n           int
	mu, s, var_ float64
}

func (a *moments) add(mu, s float64) {
	a.n++
	a.mu += mu
	a.s += s
	a.var_ += max(0, s-mu*mu)
}

// stat returns the expected mean, the square root of the expected
// population variance, E[(1/n)Σx²] − E[x̄²] = (1/n)Σs − mean² − (1/n²)Σvar,
// and the standard error sqrt(Σvar)/n of a draw's mean.
func (a *moments) stat() Stat {
	if a.n == 0 {
		return Stat{Mean: math.NaN(), Std: math.NaN()}
	}
	n := float64(a.n)
	mean := a.mu / n
	v := a.s/n - mean*mean - a.var_/(n*n)
	return Stat{Mean: mean, Std: math.Sqrt(max(0, v)), SE: math.Sqrt(a.var_) / n}
}

// total accumulates a sum and its variance.
type total struct{ sum, v float64 }

func (t *total) add(mu, s float64) {
	t.sum += mu
	t.v += max(0, s-mu*mu)
}

func (t total) get() Total { return Total{Value: t.sum, SE: math.Sqrt(t.v)} }

// bitset is a set of cluster indices.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func fullBitset(n int) bitset {
	b := newBitset(n)
	for i := 0; i < n; i++ {
		b.set(i)
	}
	return b
}

func (b bitset) set(i int) { b[i/64] |= 1 << (uint(i) % 64) }

func (b bitset) count() int {
	c := 0
	for _, w := range b {
		c += bits.OnesCount64(w)
	}
	return c
}

func (b bitset) and(dst, o bitset) bitset {
	for i := range b {
		dst[i] = b[i] & o[i]
	}
	return dst
}

// each calls f for every member in increasing order.
func (b bitset) each(f func(int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi*64 + t)
			w &= w - 1
		}
	}
}

// nth returns the k-th member (0-based) in increasing order.
func (b bitset) nth(k int) int {
	for wi, w := range b {
		c := bits.OnesCount64(w)
		if k >= c {
			k -= c
			continue
		}
		for ; k > 0; k-- {
			w &= w - 1
		}
		return wi*64 + bits.TrailingZeros64(w)
	}
	return -1
}

func formatFloat(f float64) string { return strconvFormat(f) }

// boundsName names a bound rule as scores.json does.
func boundsName(exclusive bool) string {
	if exclusive {
		return "exclusive"
	}
	return "inclusive"
}
