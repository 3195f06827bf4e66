package main

import (
	"bufio"
	"math"
	"strconv"

	"github.com/crosscluster/crosscluster/matcher/experiment"
)

// jobs writes every submission as a row of jobs.csv and keeps the seeded
// draw's per-job additional runtime and cost by level and by package for
// the figures.
type jobs struct {
	f   *outFile
	w   *bufio.Writer
	buf []byte
	// Drawn per-job additional runtime (seconds) and cost, by level and
	// by package (all levels pooled, as the published figures did).
	runtimeByLevel, costByLevel     map[string][]float64
	runtimeByPackage, costByPackage map[string][]float64
}

const jobsHeader = "level,job,package,subsystems,job_subsystems,matched,matched_clusters,clusters,matched_share,cluster," +
	"build_success,build_success_drawn,marginal_score,marginal_score_drawn," +
	"additional_runtime,additional_runtime_drawn,additional_cost,additional_cost_drawn\n"

func newJobs(path string) (*jobs, error) {
	f, err := createOut(path)
	if err != nil {
		return nil, err
	}
	j := &jobs{f: f, w: bufio.NewWriterSize(f, 1<<16),
		runtimeByLevel: map[string][]float64{}, costByLevel: map[string][]float64{},
		runtimeByPackage: map[string][]float64{}, costByPackage: map[string][]float64{}}
	j.w.WriteString(jobsHeader)
	return j, nil
}

// record is an experiment Config's Record.
func (j *jobs) record(s experiment.Submission) {
	b := j.buf[:0]
	b = append(b, s.Level...)
	b = append(b, ',')
	b = append(b, s.Job...)
	b = append(b, ',')
	b = append(b, s.Package...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.Subsystems), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.JobSubsystems), 10)
	b = append(b, ',')
	if s.Cluster != "" {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.Matched), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.Clusters), 10)
	b = append(b, ',')
	b = appendNum(b, float64(s.Matched)/float64(s.Clusters))
	b = append(b, ',')
	b = append(b, s.Cluster...)
	for _, v := range []float64{s.BuildSuccess, s.DrawnBuildSuccess, s.MarginalScore, s.DrawnMarginalScore,
		s.Runtime, s.DrawnRuntime, s.Cost, s.DrawnCost} {
		b = append(b, ',')
		b = appendNum(b, v)
	}
	b = append(b, '\n')
	j.w.Write(b)
	j.buf = b
	if s.Cluster != "" && !math.IsNaN(s.DrawnRuntime) {
		j.runtimeByLevel[s.Level] = append(j.runtimeByLevel[s.Level], s.DrawnRuntime)
		j.costByLevel[s.Level] = append(j.costByLevel[s.Level], s.DrawnCost)
		j.runtimeByPackage[s.Package] = append(j.runtimeByPackage[s.Package], s.DrawnRuntime)
		j.costByPackage[s.Package] = append(j.costByPackage[s.Package], s.DrawnCost)
	}
}

// appendNum appends v with 10 significant digits, or nothing for NaN (a
// score that does not apply).
func appendNum(b []byte, v float64) []byte {
	if math.IsNaN(v) {
		return b
	}
	return strconv.AppendFloat(b, v, 'g', 10, 64)
}

// close writes jobs.csv under its final name, or, when the run failed
// (failed true) or the flush fails, removes it.
func (j *jobs) close(failed bool) error {
	if failed {
		j.f.abort()
		return nil
	}
	if err := j.w.Flush(); err != nil {
		j.f.abort()
		return err
	}
	return j.f.commit()
}
