package experiment

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/crosscluster/crosscluster/matcher"
)

// LoadPublished reads the figures a published run reported, from dir laid
// out as ../shared/testdata/rainbow/<experiment>: reliabuild's
// results/scores.json and results/unmatched-summary.json, or
// spack-build's scores.csv (the published img/scores.csv). A published run
// is one seeded draw, so each level's figures are in Drawn and Expected is
// left zero; levels come in the experiment's order. UnmatchedAt and
// MaxPercentMatched hold the per-job values where the run published them
// (reliabuild) and are nil otherwise. A directory with neither layout is an
// error wrapping fs.ErrNotExist; a file of the wrong shape, a
// *matcher.ParseError.
func LoadPublished(dir string) (*Report, error) {
	scores := filepath.Join(dir, "results", "scores.json")
	if _, err := os.Stat(scores); err == nil {
		return loadPublishedVersions(dir, scores)
	}
	csvPath := filepath.Join(dir, "scores.csv")
	if _, err := os.Stat(csvPath); err == nil {
		return loadPublishedBuilds(csvPath)
	}
	return nil, fmt.Errorf("experiment: no published results in %s (neither results/scores.json nor scores.csv): %w", dir, fs.ErrNotExist)
}

func loadPublishedVersions(dir, path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type stat struct{ Mean, Std float64 }
	var doc map[string]struct {
		TotalJobs        struct{ Value int }     `json:"total_jobs"`
		Unmatched        struct{ Value int }     `json:"unmatched"`
		UnmatchedPercent struct{ Value float64 } `json:"unmatched_percent"`
		BuildSuccess     stat                    `json:"build_success"`
		MarginalScore    stat                    `json:"marginal_score"`
		VersionsInRange  struct {
			TotalCorrect  float64 `json:"total_correct"`
			TotalPossible int     `json:"total_possible"`
		} `json:"versions_in_range"`
		Matched    stat    `json:"matched_clusters_per_job"`
		Mismatched stat    `json:"mismatched_clusters_per_job"`
		Mean, Std  float64 // the top-level "unmatched_at" entry
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, parseError(path, "", 0, fmt.Errorf("%w: %v", matcher.ErrSchema, err))
	}
	rep := &Report{Experiment: "reliabuild", mode: Published, exclusive: true}
	for _, name := range []string{"none", "single-subsystem", "expanded-subsystems"} {
		l, ok := doc[name]
		if !ok {
			continue
		}
		s := Scores{Jobs: l.TotalJobs.Value, Unmatched: l.Unmatched.Value, UnmatchedPercent: l.UnmatchedPercent.Value,
			BuildSuccess: Stat{Mean: l.BuildSuccess.Mean, Std: l.BuildSuccess.Std}, MarginalScore: Stat{Mean: l.MarginalScore.Mean, Std: l.MarginalScore.Std},
			correct: Total{Value: l.VersionsInRange.TotalCorrect}, possible: l.VersionsInRange.TotalPossible,
			MatchedClusters: Stat{Mean: l.Matched.Mean, Std: l.Matched.Std}, MismatchedClusters: Stat{Mean: l.Mismatched.Mean, Std: l.Mismatched.Std},
			UnmatchedAt: Stat{Mean: math.NaN(), Std: math.NaN()}, maxPercentMatched: Stat{Mean: math.NaN(), Std: math.NaN()}}
		rep.Levels = append(rep.Levels, Level{Name: name, Drawn: s})
	}
	if len(rep.Levels) == 0 {
		return nil, parseError(path, "", 0, fmt.Errorf("%w: no level of the reliabuild experiment", matcher.ErrSchema))
	}
	sumPath := filepath.Join(dir, "results", "unmatched-summary.json")
	sb, err := os.ReadFile(sumPath)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	var summary []struct {
		Job               string  `json:"jobid"`
		UnmatchedAt       int     `json:"unmatched_at"`
		MaxPercentMatched float64 `json:"max_percent_matched"`
	}
	if err := json.Unmarshal(sb, &summary); err != nil {
		return nil, parseError(sumPath, "", 0, fmt.Errorf("%w: %v", matcher.ErrSchema, err))
	}
	rep.UnmatchedAt = make(map[string]int, len(summary))
	rep.MaxPercentMatched = make(map[string]float64, len(summary))
	var uat, mpm moments
	for _, u := range summary {
		rep.UnmatchedAt[u.Job] = u.UnmatchedAt
		rep.MaxPercentMatched[u.Job] = u.MaxPercentMatched
		a, p := float64(u.UnmatchedAt), u.MaxPercentMatched
		uat.add(a, a*a)
		mpm.add(p, p*p)
	}
	if l := rep.Level("expanded-subsystems"); l != nil {
		l.Drawn.unmatchedJobs = len(summary)
		l.Drawn.UnmatchedAt, l.Drawn.maxPercentMatched = uat.stat(), mpm.stat()
		l.Drawn.UnmatchedAt.SE, l.Drawn.maxPercentMatched.SE = 0, 0
	}
	return rep, nil
}

func loadPublishedBuilds(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, parseError(path, "", 0, fmt.Errorf("%w: %v", matcher.ErrSyntax, err))
	}
	if len(rows) < 2 {
		return nil, parseError(path, "", 0, fmt.Errorf("%w: no rows", matcher.ErrSchema))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	byName := map[string]Scores{}
	for r, row := range rows[1:] {
		line := r + 2
		num := func(key string) (float64, error) {
			i, ok := col[key]
			if !ok || i >= len(row) {
				return 0, parseError(path, key, line, fmt.Errorf("%w: no column %q", matcher.ErrSchema, key))
			}
			v, err := strconv.ParseFloat(row[i], 64)
			if err != nil {
				return 0, parseError(path, key, line, fmt.Errorf("%w: want a number, got %q", matcher.ErrSchema, row[i]))
			}
			return v, nil
		}
		var v [13]float64
		for k, key := range []string{"total_additional_runtime_seconds", "total_additional_cost", "unmatched_percent",
			"unmatched_count", "build_success_mean", "build_success_std", "points_scored_correct", "points_scored_possible",
			"matched_clusters_per_job_mean", "matched_clusters_per_job_std", "mismatched_clusters_per_job_mean",
			"mismatched_clusters_per_job_std", "total_jobs"} {
			if v[k], err = num(key); err != nil {
				return nil, err
			}
		}
		i, ok := col["experiment"]
		if !ok || i >= len(row) {
			return nil, parseError(path, "experiment", line, fmt.Errorf("%w: no column %q", matcher.ErrSchema, "experiment"))
		}
		nan := Stat{Mean: math.NaN(), Std: math.NaN()}
		byName[row[i]] = Scores{AdditionalRuntime: Total{Value: v[0]}, AdditionalCost: Total{Value: v[1]}, UnmatchedPercent: v[2],
			Unmatched: int(v[3]), BuildSuccess: Stat{Mean: v[4], Std: v[5]}, correct: Total{Value: v[6]}, possible: int(v[7]),
			MatchedClusters: Stat{Mean: v[8], Std: v[9]}, MismatchedClusters: Stat{Mean: v[10], Std: v[11]}, Jobs: int(v[12]),
			MarginalScore: nan, UnmatchedAt: nan, maxPercentMatched: nan, runtimePerJob: nan, costPerJob: nan}
	}
	rep := &Report{Experiment: "spack-build", mode: Published}
	for _, name := range buildLevels() {
		if s, ok := byName[name]; ok {
			rep.Levels = append(rep.Levels, Level{Name: name, Drawn: s})
		}
	}
	if len(rep.Levels) == 0 {
		return nil, parseError(path, "", 0, fmt.Errorf("%w: no level of the spack-build experiment (have %v)", matcher.ErrSchema, slices.Sorted(maps.Keys(byName))))
	}
	return rep, nil
}
