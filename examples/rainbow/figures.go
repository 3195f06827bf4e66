package main

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"

	cplot "github.com/crosscluster/crosscluster/internal/plot"
	"github.com/crosscluster/crosscluster/matcher/experiment"
)

// spackOrder is the level order of the published spack-build figures
// (plot-results.py's order list).
var spackOrder = []string{"none", "compiler-version-subsystem", "compiler-subsystem", "arch-subsystem", "memory-subsystem",
	"arch", "arch-compiler", "arch-compiler-compiler-version", "arch-compiler-compiler-version-memory",
	"constraint-with-replacement", "constraint-without-replacement"}

// figures writes the figures the published plot-results.py scripts drew,
// drawn the same way (point plots by level, per-job histograms, box plots
// by package), with the published values beside ours where pub holds them
// (nil on synthetic data): ours as the expectation over the random choice
// of cluster with ±1 standard error of a single draw, and as one seeded
// draw, the way the published run was made.
func figures(dir string, rep, pub *experiment.Report, mode experiment.Mode, j *jobs) error {
	levels := make([]string, 0, len(rep.Levels))
	if rep.Experiment == "spack-build" {
		for _, name := range spackOrder {
			if rep.Level(name) != nil {
				levels = append(levels, name)
			}
		}
	} else {
		for _, l := range rep.Levels {
			levels = append(levels, l.Name)
		}
	}
	ours := " (" + mode.String() + " rules)"
	// byLevel builds the published, expected ± SE and drawn series of one
	// figure from a level's scores.
	byLevel := func(val func(s *experiment.Scores) (v, se float64)) []cplot.BarSeries {
		var out []cplot.BarSeries
		if pub != nil {
			p := cplot.BarSeries{Name: "published (one draw)", Values: make([]float64, len(levels))}
			for i, name := range levels {
				p.Values[i] = math.NaN()
				if l := pub.Level(name); l != nil {
					p.Values[i], _ = val(&l.Drawn)
				}
			}
			out = append(out, p)
		}
		e := cplot.BarSeries{Name: "ours: expected ±1 SE of a draw", Values: make([]float64, len(levels)), Err: make([]float64, len(levels))}
		d := cplot.BarSeries{Name: "ours: one seeded draw", Values: make([]float64, len(levels))}
		for i, name := range levels {
			l := rep.Level(name)
			e.Values[i], e.Err[i] = val(&l.Expected)
			d.Values[i], _ = val(&l.Drawn)
		}
		return append(out, e, d)
	}
	points := func(file, title, y string, series []cplot.BarSeries) error {
		return cplot.Points(filepath.Join(dir, file), rep.Experiment+": "+title+ours, y, levels, series, false)
	}
	buildSuccess := func(s *experiment.Scores) (float64, float64) { return s.BuildSuccess.Mean, s.BuildSuccess.SE }
	if rep.Experiment == "reliabuild" {
		if err := points("build-success.png", "mean build success", "share of builds that would succeed", byLevel(buildSuccess)); err != nil {
			return err
		}
		if err := points("marginal-score.png", "marginal score", "share of version ranges met", byLevel(func(s *experiment.Scores) (float64, float64) {
			return s.MarginalScore.Mean, s.MarginalScore.SE
		})); err != nil {
			return err
		}
		if err := unmatchedFigures(dir, rep, pub, ours); err != nil {
			return err
		}
		return nil
	}

	// spack-build. The published build-success figure also shows the share
	// of clusters matched.
	matchedShare := func(s *experiment.Scores) (float64, float64) {
		n := s.MatchedClusters.Mean + s.MismatchedClusters.Mean
		return s.MatchedClusters.Mean / n, 0
	}
	bs, ms := byLevel(buildSuccess), byLevel(matchedShare)
	var tradeoff []cplot.BarSeries
	for _, s := range bs[:len(bs)-1] { // published and expected
		s.Name = "build success: " + s.Name
		tradeoff = append(tradeoff, s)
	}
	for i, s := range ms[:len(ms)-1] {
		s.Name, s.Err = "clusters matched: published", nil
		if i == len(ms)-2 {
			s.Name = "clusters matched: ours (the same in every draw)"
		}
		tradeoff = append(tradeoff, s)
	}
	if err := points("build-success.png", "build success and clusters matched", "share", tradeoff); err != nil {
		return err
	}
	matched := byLevel(func(s *experiment.Scores) (float64, float64) { return s.MatchedClusters.Mean, 0 })
	mismatched := byLevel(func(s *experiment.Scores) (float64, float64) { return s.MismatchedClusters.Mean, 0 })
	var cm []cplot.BarSeries
	for i := range len(matched) - 1 { // the counts do not depend on the draw
		m, mm := matched[i], mismatched[i]
		who := "published"
		if i == len(matched)-2 {
			who = "ours"
		}
		m.Name, m.Err = "matched: "+who, nil
		mm.Name, mm.Err = "mismatched: "+who, nil
		cm = append(cm, m, mm)
	}
	if err := points("clusters-matched.png", "mean matched and mismatched clusters per job", "clusters", cm); err != nil {
		return err
	}
	if err := points("additional-runtime.png", "additional runtime", "10⁶ seconds (total)", byLevel(func(s *experiment.Scores) (float64, float64) {
		return s.AdditionalRuntime.Value / 1e6, s.AdditionalRuntime.SE / 1e6
	})); err != nil {
		return err
	}
	if err := points("additional-cost.png", "additional cost", "dollars (total)", byLevel(func(s *experiment.Scores) (float64, float64) {
		return s.AdditionalCost.Value, s.AdditionalCost.SE
	})); err != nil {
		return err
	}
	if err := points("additional-cost-per-job.png", "additional cost per job", "dollars per job", byLevel(func(s *experiment.Scores) (float64, float64) {
		n := float64(s.Jobs)
		return s.AdditionalCost.Value / n, s.AdditionalCost.SE / n
	})); err != nil {
		return err
	}
	if err := unmatchedFigures(dir, rep, pub, ours); err != nil {
		return err
	}
	var rt, cost []cplot.Panel
	for _, name := range levels {
		rt = append(rt, cplot.Panel{Title: name, Values: j.runtimeByLevel[name]})
		cost = append(cost, cplot.Panel{Title: name, Values: j.costByLevel[name]})
	}
	if err := cplot.HistogramPanels(filepath.Join(dir, "additional-runtime-hists.png"),
		"spack-build: additional runtime per job by level, one seeded draw"+ours, "seconds", rt, 3, 60); err != nil {
		return err
	}
	if err := cplot.HistogramPanels(filepath.Join(dir, "additional-cost-hists.png"),
		"spack-build: additional cost per job by level, one seeded draw"+ours, "dollars", cost, 3, 60); err != nil {
		return err
	}
	pkgs := slices.Sorted(maps.Keys(j.runtimeByPackage))
	rtBox, costBox := make([]cplot.BoxGroup, len(pkgs)), make([]cplot.BoxGroup, len(pkgs))
	for i, p := range pkgs {
		rtBox[i] = cplot.BoxGroup{Name: p, Values: j.runtimeByPackage[p]}
		costBox[i] = cplot.BoxGroup{Name: p, Values: j.costByPackage[p]}
	}
	const boxes = " by package, every level pooled, one seeded draw" + "\n(box: quartiles and median; whiskers: 5th–95th percentile; ×: min and max)"
	if err := cplot.Boxes(filepath.Join(dir, "runtimes-by-package.png"), "spack-build: additional runtime per job"+boxes, "seconds", rtBox); err != nil {
		return err
	}
	return cplot.Boxes(filepath.Join(dir, "costs-by-package.png"), "spack-build: additional cost per job"+boxes, "dollars", costBox)
}

// unmatchedFigures writes the per-job figures of the jobs that became
// unmatched in the expanding levels: a count of their unmatched_at (both
// experiments) and a histogram of the share of their subsystems matched
// before (reliabuild), published beside ours.
func unmatchedFigures(dir string, rep, pub *experiment.Report, ours string) error {
	pubAt := map[int]float64{}
	var pubShare []float64
	switch {
	case pub != nil && pub.UnmatchedAt != nil:
		for _, v := range pub.UnmatchedAt {
			pubAt[v]++
		}
		pubShare = slices.Collect(maps.Values(pub.MaxPercentMatched))
	case pub != nil:
		// spack-build published no per-job file in the data; its unmatched
		// counts per expanding level are the counts per unmatched_at, the
		// number of subsystems in the request: 1, 2, 2 and 3.
		for i, name := range []string{"arch", "arch-compiler", "arch-compiler-compiler-version", "arch-compiler-compiler-version-memory"} {
			if l := pub.Level(name); l != nil {
				pubAt[[]int{1, 2, 2, 3}[i]] += float64(l.Drawn.Unmatched)
			}
		}
	}
	var ourAt, pubAtValues []float64
	for _, v := range rep.UnmatchedAt {
		ourAt = append(ourAt, float64(v))
	}
	for v, n := range pubAt {
		for range int(n) {
			pubAtValues = append(pubAtValues, float64(v))
		}
	}
	series := []cplot.HistSeries{{Name: "ours", Values: ourAt}}
	if pub != nil {
		series = []cplot.HistSeries{{Name: "published", Values: pubAtValues}, series[0]}
	}
	title := fmt.Sprintf("%s: subsystems requested at the first no-match%s", rep.Experiment, ours)
	if err := cplot.Counts(filepath.Join(dir, "count-unmatched.png"), title, "subsystems (unmatched_at)", "unmatched jobs", series); err != nil {
		return err
	}
	if rep.Experiment != "reliabuild" {
		return nil
	}
	edges := make([]float64, 21)
	for i := range edges {
		edges[i] = float64(i) / 20
	}
	hs := []cplot.HistSeries{{Name: "ours", Values: slices.Collect(maps.Values(rep.MaxPercentMatched))}}
	if pubShare != nil {
		hs = []cplot.HistSeries{{Name: "published", Values: pubShare}, hs[0]}
	}
	return cplot.Histogram(filepath.Join(dir, "percent-matched.png"), rep.Experiment+": share of subsystems matched before the job became unmatched"+ours,
		"share of the job's subsystems", "unmatched jobs", "%.2f", edges, hs)
}
