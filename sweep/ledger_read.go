package sweep

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"
)

// metricRow is one streamed value of one attempt, as the controller
// ingests it.
type metricRow struct {
	runID   string
	attempt int
	p       metricPoint
}

// sqlFloat stores NaN as NULL (SQLite has no NaN); ±Inf are stored as is.
func sqlFloat(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}

func fromSQL(x sql.NullFloat64) float64 {
	if !x.Valid {
		return math.NaN()
	}
	return x.Float64
}

// addMetrics records streamed values in one transaction. Recording a value
// again (a controller that restarted reads the logs from the start) keeps
// one row per run, attempt, series and step.
func (l *Ledger) addMetrics(ctx context.Context, rows []metricRow) error {
	if err := l.writable(); err != nil {
		return err
	}
	ctx, err := hold(ctx)
	if err != nil {
		return fmt.Errorf("sweep: metrics: %w", err)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sweep: metrics: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO metrics(run_id, attempt, series, step, value, time) VALUES(?,?,?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("sweep: metrics: %w", err)
	}
	defer st.Close()
	for _, r := range rows {
		if _, err := st.ExecContext(ctx, r.runID, r.attempt, r.p.Series, float64(r.p.Step), sqlFloat(float64(r.p.Value)), r.p.Time); err != nil {
			return fmt.Errorf("sweep: metrics of run %s: %w", r.runID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sweep: metrics: %w", err)
	}
	return nil
}

// addResult records a completed attempt's scalar metrics, and the series of
// its result that its metric log did not stream.
func (l *Ledger) addResult(ctx context.Context, id string, attempt int, res *Result) error {
	if err := l.writable(); err != nil {
		return err
	}
	ctx, err := hold(ctx)
	if err != nil {
		return fmt.Errorf("sweep: run %s: %w", id, err)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sweep: run %s: %w", id, err)
	}
	defer tx.Rollback()
	for k, v := range res.Metrics {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO scalars(run_id, attempt, name, value) VALUES(?,?,?,?)`, id, attempt, k, sqlFloat(v)); err != nil {
			return fmt.Errorf("sweep: run %s: %w", id, err)
		}
	}
	for k, s := range res.Series {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM metrics WHERE run_id=? AND attempt=? AND series=?`, id, attempt, k).Scan(&n); err != nil {
			return fmt.Errorf("sweep: run %s: %w", id, err)
		}
		if n > 0 {
			continue
		}
		for i := range s.Step {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO metrics(run_id, attempt, series, step, value) VALUES(?,?,?,?,?)`, id, attempt, k, s.Step[i], sqlFloat(s.Value[i])); err != nil {
				return fmt.Errorf("sweep: run %s: %w", id, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sweep: run %s: %w", id, err)
	}
	return nil
}

func (l *Ledger) runIDs(ctx context.Context) (map[string]bool, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT id FROM runs`)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// RunSummary is a run with its latest metrics: the read API's row for a
// runs table or a dashboard.
type RunSummary struct {
	Run
	// Latest maps each series the current attempt streamed to its last
	// value (NaN is a NaN the run logged), LatestStep to that value's
	// step.
	Latest, LatestStep map[string]float64
	// Metrics are the scalar metrics of a completed run's result.
	Metrics map[string]float64
}

// Summaries returns the runs in the given states (all when none), in sweep
// order, each with the last value of every series its current attempt has
// streamed so far and, once completed, its scalar metrics. It reads the
// ledger only (what the controller has ingested, at most one poll interval
// behind the workers), so it works on a ledger opened read-only while a
// controller runs.
func (l *Ledger) Summaries(ctx context.Context, states ...State) ([]RunSummary, error) {
	// out is read in id order, the order of the tables below, merged with
	// them, then put in sweep order.
	var out []RunSummary
	err := l.scanByID(ctx, states, func(n int) { out = make([]RunSummary, 0, n) }, func() *Run {
		out = append(out, RunSummary{Latest: map[string]float64{}, LatestStep: map[string]float64{}, Metrics: map[string]float64{}})
		return &out[len(out)-1].Run
	})
	if err != nil {
		return nil, err
	}
	hctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	// The latest table holds each series' last step, as a trigger keeps it;
	// a ledger written before it existed, opened read-only, has none: there
	// SQLite returns the other columns of the row that holds max(step).
	// Both are read in primary-key order, which needs no sort, and merged
	// with the runs in Go; rows of other attempts than a run's current one
	// are skipped.
	q := `SELECT run_id, attempt, series, step, value FROM latest ORDER BY run_id, attempt, series`
	if !l.hasLatest(hctx) {
		q = `SELECT run_id, attempt, series, max(step), value FROM metrics GROUP BY run_id, attempt, series ORDER BY run_id, attempt, series`
	}
	err = l.mergeRows(hctx, q, out, func(s *RunSummary, name string, step, v float64) {
		s.Latest[name], s.LatestStep[name] = v, step
	})
	if err != nil {
		return nil, err
	}
	err = l.mergeRows(hctx, `SELECT run_id, attempt, name, 0, value FROM scalars ORDER BY run_id, attempt, name`, out,
		func(s *RunSummary, name string, _, v float64) { s.Metrics[name] = v })
	if err != nil {
		return nil, err
	}
	permute(out, sweepPerm(len(out), func(i int) (int, string) { return out[i].seq, out[i].ID }))
	return out, nil
}

// mergeRows runs q, whose rows are (run id, attempt, name, step, value) in
// run id order, and calls add for each row of a run's current attempt,
// walking byID (sorted by id) alongside. A NULL value is NaN.
func (l *Ledger) mergeRows(ctx context.Context, q string, byID []RunSummary, add func(s *RunSummary, name string, step, v float64)) error {
	rows, err := l.db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	var (
		id, name string
		attempt  int
		step, v  float64
		i        int
	)
	dest := []any{&id, intCol{&attempt}, &name, realCol{&step}, realCol{&v}}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		for i < len(byID) && byID[i].ID < id {
			i++
		}
		if i == len(byID) {
			break
		}
		if s := &byID[i]; s.ID == id && s.Attempt == attempt {
			add(s, name, step, v)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return nil
}

// Series returns the series run id's current attempt has streamed so far,
// each in step order, as the controller ingested them (at most one poll
// interval behind the worker).
func (l *Ledger) Series(ctx context.Context, id string) (map[string]Series, error) {
	r, err := l.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.attemptSeries(ctx, id, r.Attempt)
}

func (l *Ledger) attemptSeries(ctx context.Context, id string, attempt int) (map[string]Series, error) {
	hctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(hctx, `SELECT series, step, value FROM metrics WHERE run_id=? AND attempt=? ORDER BY series, step`, id, attempt)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	out := map[string]Series{}
	for rows.Next() {
		var name string
		var step float64
		var v sql.NullFloat64
		if err := rows.Scan(&name, &step, &v); err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		s := out[name]
		s.Step, s.Value = append(s.Step, step), append(s.Value, fromSQL(v))
		out[name] = s
	}
	return out, rows.Err()
}

// logTail returns the last lines of the log of run id's current attempt,
// read from the work directory the controller recorded. A run that has not
// started, or a ledger no controller has run, is an error.
func (l *Ledger) logTail(ctx context.Context, id string, lines int) (string, error) {
	r, err := l.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if r.Attempt == 0 {
		return "", fmt.Errorf("sweep: run %s has not started", id)
	}
	wd, err := l.WorkDir(ctx)
	if err != nil {
		return "", err
	}
	if wd == "" {
		return "", errors.New("sweep: ledger " + l.path + " has no work directory recorded (no controller has run it)")
	}
	return logTail(filepath.Join(AttemptDir(wd, id, r.Attempt), "log"), lines), nil
}

// prunerView reads what a Pruner judges from: every value of series
// logged by the runs' current attempts, ordered by the worker's clock, then
// run id, then step, and every run's state and start.
func (l *Ledger) prunerView(ctx context.Context, series string) (*pruneView, error) {
	hctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	v := &pruneView{state: map[string]State{}, lastIndex: map[string]int{}, pruned: map[string]string{}, readAt: l.metricsReadAt}
	if v.readAt.IsZero() {
		v.readAt = time.Now()
	}
	rows, err := l.db.QueryContext(hctx, `SELECT m.run_id, m.step, m.value, m.time
		FROM metrics m JOIN runs r ON r.id = m.run_id AND r.attempt = m.attempt
		WHERE m.series = ? ORDER BY m.time, m.run_id, m.step`, series)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	for rows.Next() {
		var e metricEvent
		var val sql.NullFloat64
		if err := rows.Scan(&e.run, &e.step, &val, &e.time); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		e.value = math.NaN()
		if val.Valid {
			e.value = val.Float64
		}
		v.lastIndex[e.run] = len(v.events)
		v.events = append(v.events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err = l.db.QueryContext(hctx, `SELECT id, state FROM runs WHERE state != 'queued'`)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var st State
		if err := rows.Scan(&id, &st); err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		v.state[id] = st
	}
	return v, rows.Err()
}

// hasLatest reports whether the ledger keeps the latest table filled (a
// ledger a controller of this version has opened).
func (l *Ledger) hasLatest(ctx context.Context) bool {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = 'latest'`).Scan(&n)
	return err == nil && n > 0
}
