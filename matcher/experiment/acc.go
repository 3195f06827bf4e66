package experiment

import "math/rand/v2"

// acc accumulates one level's scores in one mode.
type acc struct {
	jobs, unmatched, possible, unmatchedJobs int
	bs, marg, matched, mismatched, uat, mpm  moments
	rtJob, costJob                           moments
	correct, runtime, cost                   total
	reasons                                  reasonCounts
	rtPkg, costPkg                           map[string]float64
}

func (a *acc) scores() Scores {
	s := Scores{
		Jobs: a.jobs, Unmatched: a.unmatched, possible: a.possible, unmatchedJobs: a.unmatchedJobs,
		BuildSuccess: a.bs.stat(), MarginalScore: a.marg.stat(),
		MatchedClusters: a.matched.stat(), MismatchedClusters: a.mismatched.stat(),
		UnmatchedAt: a.uat.stat(), maxPercentMatched: a.mpm.stat(),
		correct: a.correct.get(), AdditionalRuntime: a.runtime.get(), AdditionalCost: a.cost.get(),
		reasons: a.reasons, runtimeByPackage: a.rtPkg, costByPackage: a.costPkg,
		runtimePerJob: a.rtJob.stat(), costPerJob: a.costJob.stat(),
	}
	if a.jobs > 0 {
		s.UnmatchedPercent = float64(a.unmatched) / float64(a.jobs)
	}
	return s
}

// pair is the expected and drawn accumulators of one level.
type pair struct {
	name string
	e, d acc
}

func (p *pair) level() Level {
	return Level{Name: p.name, Expected: p.e.scores(), Drawn: p.d.scores()}
}

// countStats records a submission's matched and mismatched cluster counts,
// which do not depend on the random choice.
func (p *pair) countStats(k, n int) {
	kf, mf := float64(k), float64(n-k)
	for _, a := range []*acc{&p.e, &p.d} {
		a.matched.add(kf, kf*kf)
		a.mismatched.add(mf, mf*mf)
	}
}

// stopped records a job that stopped unmatched after l of its n subsystems.
func (p *pair) stopped(l, n int) {
	lf := float64(l)
	r := lf / float64(n)
	for _, a := range []*acc{&p.e, &p.d} {
		a.unmatchedJobs++
		a.uat.add(lf, lf*lf)
		a.mpm.add(r, r*r)
	}
}

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
