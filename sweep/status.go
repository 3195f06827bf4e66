package sweep

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Alert thresholds.
const (
	// failureAlertRate raises an alert when more than this fraction of the
	// finished runs failed.
	failureAlertRate = 0.10
	// stuckFactor raises an alert for a run running longer than this many
	// times the mean completed duration (and at least stuckMin).
	stuckFactor = 3
	// stuckMin is the shortest time after which a run can be called stuck.
	stuckMin = time.Minute
)

// Status is a snapshot of a ledger: the runs by state, and for Line and
// WriteTable the percentage completed, the mean duration of a completed
// run, the estimated time to finish, the queued runs that already had an
// attempt, and alerts.
type Status struct {
	Counts map[State]int
	Total  int

	percent  float64       // completed / total × 100
	meanRun  time.Duration // mean duration of completed runs
	eta      time.Duration // remaining / parallel × meanRun; 0 when unknown
	alerts   []string
	retrying int // queued runs that already had an attempt
}

// Status counts runs by state, estimates the time to finish from the mean
// completed duration and parallel, and raises alerts for a failure rate
// over failureAlertRate and for stuck runs.
func (l *Ledger) Status(ctx context.Context, parallel int) (Status, error) {
	st := Status{Counts: map[State]int{}}
	ctx, err := hold(ctx)
	if err != nil {
		return st, fmt.Errorf("sweep: status %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT state, count(*), sum(attempt > 0), avg(CASE WHEN state='completed' THEN finished_at - started_at END) FROM runs GROUP BY state`)
	if err != nil {
		return st, fmt.Errorf("sweep: status %s: %w", l.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n, retried int
		var mean *float64
		if err := rows.Scan(&s, &n, &retried, &mean); err != nil {
			return st, fmt.Errorf("sweep: status %s: %w", l.path, err)
		}
		st.Counts[State(s)] = n
		st.Total += n
		if State(s) == Queued {
			st.retrying = retried
		}
		if mean != nil {
			st.meanRun = time.Duration(*mean)
		}
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("sweep: status %s: %w", l.path, err)
	}
	if st.Total > 0 {
		st.percent = 100 * float64(st.Counts[Completed]) / float64(st.Total)
	}
	remaining := st.Counts[Queued] + st.Counts[Running]
	if st.meanRun > 0 && remaining > 0 {
		st.eta = time.Duration(float64(st.meanRun) * float64(remaining) / float64(max(parallel, 1)))
	}
	finished := st.Counts[Completed] + st.Counts[Failed]
	if finished > 0 {
		if rate := float64(st.Counts[Failed]) / float64(finished); rate > failureAlertRate {
			st.alerts = append(st.alerts, fmt.Sprintf("failure rate %.1f%% exceeds %.0f%%", 100*rate, 100*failureAlertRate))
		}
	}
	if st.meanRun > 0 && st.Counts[Running] > 0 {
		limit := max(time.Duration(stuckFactor)*st.meanRun, stuckMin)
		cut := l.now().Add(-limit).UnixNano()
		var stuck int
		if err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE state='running' AND started_at < ?`, cut).Scan(&stuck); err != nil {
			return st, fmt.Errorf("sweep: status %s: %w", l.path, err)
		}
		if stuck > 0 {
			st.alerts = append(st.alerts, fmt.Sprintf("%d run(s) running longer than %v", stuck, limit.Round(time.Second)))
		}
	}
	return st, nil
}

// Line is a one-line summary with a progress bar.
func (s Status) Line() string {
	const width = 30
	done := 0
	if s.Total > 0 {
		done = width * (s.Counts[Completed] + s.Counts[Failed] + s.Counts[Pruned] + s.Counts[Cancelled]) / s.Total
	}
	line := fmt.Sprintf("[%s%s] %d/%d completed, %d running, %d queued, %d failed",
		strings.Repeat("#", done), strings.Repeat(".", width-done),
		s.Counts[Completed], s.Total, s.Counts[Running], s.Counts[Queued], s.Counts[Failed])
	if n := s.Counts[Pruned]; n > 0 {
		line += fmt.Sprintf(", %d pruned", n)
	}
	if s.eta > 0 {
		line += ", ETA " + s.eta.Round(time.Second).String()
	}
	return line
}

// WriteTable writes the counts by state with percentages, the ETA and the
// alerts.
func (s Status) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %7s %7s\n", "state", "runs", "%")
	for _, k := range States() {
		pct := 0.0
		if s.Total > 0 {
			pct = 100 * float64(s.Counts[k]) / float64(s.Total)
		}
		fmt.Fprintf(&b, "%-10s %7d %6.1f%%\n", k, s.Counts[k], pct)
	}
	fmt.Fprintf(&b, "%-10s %7d\n", "total", s.Total)
	if s.eta > 0 {
		fmt.Fprintf(&b, "ETA %v (mean run %v)\n", s.eta.Round(time.Second), s.meanRun.Round(time.Millisecond))
	}
	for _, a := range s.alerts {
		fmt.Fprintf(&b, "ALERT: %s\n", a)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFailed lists the failed runs with their error class and text and the
// last lines of the log of their last attempt (from the work directory the
// controller recorded), and returns how many there are.
func (l *Ledger) WriteFailed(ctx context.Context, w io.Writer, lines int) (int, error) {
	rs, err := l.Runs(ctx, Failed)
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s %s attempt %d [%s] %s\n", r.ID, r.Slug, r.Attempt, r.ErrorClass, r.ErrorText)
		tail, err := l.logTail(ctx, r.ID, lines)
		if err != nil {
			return 0, err
		}
		if tail != "" {
			for _, ln := range strings.Split(tail, "\n") {
				fmt.Fprintf(&b, "    | %s\n", ln)
			}
		}
	}
	_, err = io.WriteString(w, b.String())
	return len(rs), err
}
