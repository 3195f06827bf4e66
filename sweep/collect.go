package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"time"
)

// completeness compares a sweep's expected grid with what completed.
type completeness struct {
	expected  int
	complete  []string // slugs completed with finite metrics
	missing   []string // expected runs not completed (queued, running, cancelled, absent)
	failed    []string // failed runs, and completed runs whose result cannot be read
	pruned    []string // stopped early by a Pruner (not failures)
	nonFinite []string // completed but with a NaN or Inf metric
}

// done reports whether every expected run completed with finite metrics,
// or was pruned.
func (c *completeness) done() bool {
	return len(c.complete)+len(c.pruned) == c.expected
}

// String is e.g. "214/216 runs completed (1 failed, 1 missing, 0 pruned, 0 non-finite)".
func (c *completeness) String() string {
	return fmt.Sprintf("%d/%d runs completed (%d failed, %d missing, %d pruned, %d non-finite)",
		len(c.complete), c.expected, len(c.failed), len(c.missing), len(c.pruned), len(c.nonFinite))
}

// CheckCompleteness compares the expected points with the runs completed
// with finite metrics, reading each completed run's result from workDir
// (expected is usually a spec's Points). done reports whether every
// expected run completed with finite metrics or was pruned; report says how
// far, e.g. "214/216 runs completed (1 failed, 1 missing, 0 pruned, 0
// non-finite)".
func (l *Ledger) CheckCompleteness(ctx context.Context, workDir string, expected iter.Seq[Point]) (report string, done bool, err error) {
	c, err := l.completeness(ctx, workDir, expected)
	if c == nil {
		return "", false, err
	}
	return c.String(), c.done(), err
}

func (l *Ledger) completeness(ctx context.Context, workDir string, expected iter.Seq[Point]) (*completeness, error) {
	rs, err := l.Runs(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*Run, len(rs))
	for i := range rs {
		byID[rs[i].ID] = &rs[i]
	}
	c := &completeness{}
	for p := range expected {
		c.expected++
		r, ok := byID[p.ID]
		switch {
		case !ok:
			c.missing = append(c.missing, p.Slug)
		case r.State == Failed:
			c.failed = append(c.failed, p.Slug)
		case r.State == Pruned:
			c.pruned = append(c.pruned, p.Slug)
		case r.State != Completed:
			c.missing = append(c.missing, p.Slug)
		default:
			res, err := ReadResult(AttemptDir(workDir, r.ID, r.Attempt))
			if err != nil {
				c.failed = append(c.failed, p.Slug)
				continue
			}
			finite := true
			for _, v := range res.Metrics {
				finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
			}
			if finite {
				c.complete = append(c.complete, p.Slug)
			} else {
				c.nonFinite = append(c.nonFinite, p.Slug)
			}
		}
	}
	return c, ctx.Err()
}

// manifestEntry is one archived file.
type manifestEntry struct {
	RunID   string `json:"run_id"`
	Slug    string `json:"slug"`
	Attempt int    `json:"attempt"`
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
	Bytes   int    `json:"bytes"`
}

// manifest lists an archive's files with their checksums.
type manifest struct {
	Created string          `json:"created"`
	Runs    []manifestEntry `json:"runs"`
	Skipped []Problem       `json:"skipped,omitempty"`
}

// manifestFile is the manifest's name inside an archive directory.
const manifestFile = "manifest.json"

// Problem is a run left out of a collection or export, and why.
type Problem struct {
	RunID string `json:"run_id"`
	Slug  string `json:"slug"`
	Err   string `json:"error"`
}

// Collect copies the result file (runs/<id>.json) and the metric log
// (runs/<id>.metrics.jsonl), if any, of every completed and pruned run into
// archiveDir, writes manifest.json (the date, each file with its run,
// SHA-256 and size, the runs skipped) and returns the results by run id,
// each with its Series filled from the metric log where the result has
// none. A run whose files cannot be read is left out, returned in skipped
// with the reason (and listed in the manifest), and does not stop the
// others: one damaged file does not cost the export. The error is for the
// archive itself (and ctx).
func (l *Ledger) Collect(ctx context.Context, workDir, archiveDir string) (results map[string]*Result, skipped []Problem, err error) {
	rs, err := l.Runs(ctx, Completed, Pruned)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Join(archiveDir, "runs"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("sweep: collect: %w", err)
	}
	m := &manifest{Created: time.Now().UTC().Format(time.RFC3339)}
	results = make(map[string]*Result, len(rs))
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return results, m.Skipped, err
		}
		dir := AttemptDir(workDir, r.ID, r.Attempt)
		res, files, err := readRun(dir, r)
		if err != nil {
			m.Skipped = append(m.Skipped, Problem{RunID: r.ID, Slug: r.Slug, Err: err.Error()})
			continue
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f.src))
			if err != nil {
				return nil, nil, fmt.Errorf("sweep: collect run %s: %w", r.Slug, err)
			}
			if err := writeAtomic(filepath.Join(archiveDir, f.dst), b); err != nil {
				return nil, nil, err
			}
			sum := sha256.Sum256(b)
			m.Runs = append(m.Runs, manifestEntry{RunID: r.ID, Slug: r.Slug, Attempt: r.Attempt, File: f.dst, SHA256: hex.EncodeToString(sum[:]), Bytes: len(b)})
		}
		results[r.ID] = res
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if err := writeAtomic(filepath.Join(archiveDir, manifestFile), append(b, '\n')); err != nil {
		return nil, nil, err
	}
	return results, m.Skipped, nil
}

type archived struct{ src, dst string }

// readRun reads a run's result (for a pruned run, one built from its
// metric log) and says which files to archive.
func readRun(dir string, r Run) (*Result, []archived, error) {
	var files []archived
	var res *Result
	if r.State == Completed {
		var err error
		if res, err = ReadResult(dir); err != nil {
			return nil, nil, err
		}
		if res.RunID != r.ID {
			return nil, nil, fmt.Errorf("%w: %s holds run %s", ErrCorrupt, filepath.Join(dir, ResultFile), res.RunID)
		}
		files = append(files, archived{ResultFile, filepath.Join("runs", r.ID+".json")})
	} else {
		res = &Result{RunID: r.ID, Attempt: r.Attempt, Metrics: map[string]float64{}}
	}
	logged, err := readMetricLog(dir)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, MetricFile)); err == nil {
		files = append(files, archived{MetricFile, filepath.Join("runs", r.ID+".metrics.jsonl")})
	}
	for k, s := range logged {
		if _, ok := res.Series[k]; !ok {
			if res.Series == nil {
				res.Series = map[string]Series{}
			}
			res.Series[k] = s
		}
	}
	return res, files, nil
}

// VerifyArchive re-reads every file listed in archiveDir/manifest.json and
// checks its SHA-256; the error names every bad or missing file. It
// returns the number of files listed. Cancelling ctx stops it with
// ctx.Err().
func VerifyArchive(ctx context.Context, archiveDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(archiveDir, manifestFile))
	if err != nil {
		return 0, fmt.Errorf("sweep: verify: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, fmt.Errorf("sweep: verify %s: %w", manifestFile, err)
	}
	var errs []error
	for _, e := range m.Runs {
		if err := ctx.Err(); err != nil {
			return len(m.Runs), fmt.Errorf("sweep: verify: %w", err)
		}
		fb, err := os.ReadFile(filepath.Join(archiveDir, e.File))
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep: verify run %s: %w", e.Slug, err))
			continue
		}
		sum := sha256.Sum256(fb)
		if hex.EncodeToString(sum[:]) != e.SHA256 {
			errs = append(errs, fmt.Errorf("sweep: %w: %s (run %s)", ErrChecksum, e.File, e.Slug))
		}
	}
	return len(m.Runs), errors.Join(errs...)
}
