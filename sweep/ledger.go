package sweep

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// State is a run's state in the ledger.
type State string

// The run states. Transitions: Queued→Running→Completed|Failed,
// Failed→Queued (a retry, a new attempt), Queued|Running→Cancelled.
const (
	Queued    State = "queued"
	Running   State = "running"
	Completed State = "completed"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// States lists the states in display order.
var States = [...]State{Queued, Running, Completed, Failed, Cancelled}

// Run is one row of the ledger.
type Run struct {
	ID, Slug, Variant string
	Seq               int
	Config            map[string]Value // the spec's parameters
	Overrides         map[string]Value // set by retry adjusters
	State             State
	Attempt           int // attempts started so far
	BackendID         string
	QueuedAt          time.Time
	StartedAt         time.Time
	FinishedAt        time.Time
	HeartbeatAt       time.Time
	ErrorClass        Class
	ErrorText         string
	Completions       int // times the run entered Completed; 1 at most
}

// Params returns Config with Overrides applied.
func (r *Run) Params() map[string]Value {
	out := make(map[string]Value, len(r.Config)+len(r.Overrides))
	for k, v := range r.Config {
		out[k] = v
	}
	for k, v := range r.Overrides {
		out[k] = v
	}
	return out
}

// Attempt is one try of a run.
type Attempt struct {
	RunID      string
	N          int
	State      State
	BackendID  string
	Overrides  map[string]Value
	StartedAt  time.Time
	FinishedAt time.Time
	ErrorClass Class
	ErrorText  string
}

// ErrLocked is returned by OpenLedger when another controller holds the
// ledger.
var ErrLocked = errors.New("sweep: ledger is in use by another controller")

// ErrNoRun is returned for an unknown run id.
var ErrNoRun = errors.New("sweep: no such run")

// TransitionError reports a state change that the run's current state does
// not allow.
type TransitionError struct {
	ID       string
	From, To State
	Actual   State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("sweep: run %s: cannot go %s→%s, run is %s", e.ID, e.From, e.To, e.Actual)
}

// Ledger is the durable record of a sweep: one SQLite file in WAL mode.
// Every transition is one transaction. A Ledger opened with OpenLedger
// holds an exclusive lock (flock on <path>.lock) that the kernel releases
// if the controller dies, so a second controller is refused while the first
// lives and a restarted one takes over at once.
type Ledger struct {
	db       *sql.DB
	lock     *os.File
	path     string
	readOnly bool
	stmts    map[string]*sql.Stmt
	now      func() time.Time
}

const schema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
	id TEXT PRIMARY KEY,
	seq INTEGER NOT NULL,
	slug TEXT NOT NULL,
	variant TEXT NOT NULL,
	config TEXT NOT NULL,
	overrides TEXT NOT NULL DEFAULT '{}',
	priority INTEGER NOT NULL DEFAULT 0,
	tags TEXT NOT NULL DEFAULT '',
	state TEXT NOT NULL,
	attempt INTEGER NOT NULL DEFAULT 0,
	backend_id TEXT NOT NULL DEFAULT '',
	queued_at INTEGER NOT NULL DEFAULT 0,
	started_at INTEGER NOT NULL DEFAULT 0,
	finished_at INTEGER NOT NULL DEFAULT 0,
	heartbeat_at INTEGER NOT NULL DEFAULT 0,
	error_class TEXT NOT NULL DEFAULT '',
	error_text TEXT NOT NULL DEFAULT '',
	completions INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_queued ON runs(seq) WHERE state = 'queued';
CREATE TABLE IF NOT EXISTS attempts(
	run_id TEXT NOT NULL,
	n INTEGER NOT NULL,
	state TEXT NOT NULL,
	backend_id TEXT NOT NULL DEFAULT '',
	overrides TEXT NOT NULL DEFAULT '{}',
	started_at INTEGER NOT NULL DEFAULT 0,
	finished_at INTEGER NOT NULL DEFAULT 0,
	error_class TEXT NOT NULL DEFAULT '',
	error_text TEXT NOT NULL DEFAULT '',
	PRIMARY KEY(run_id, n)
) WITHOUT ROWID;
DROP TRIGGER IF EXISTS attempt_start;
DROP TRIGGER IF EXISTS attempt_unstart;
DROP TRIGGER IF EXISTS attempt_backend;
DROP TRIGGER IF EXISTS attempt_end;
CREATE TRIGGER IF NOT EXISTS attempt_close AFTER UPDATE OF queued_at ON runs WHEN OLD.state = 'failed' AND NEW.state = 'queued' BEGIN
	INSERT OR REPLACE INTO attempts(run_id, n, state, backend_id, overrides, started_at, finished_at, error_class, error_text)
	VALUES(OLD.id, OLD.attempt, OLD.state, OLD.backend_id, OLD.overrides, OLD.started_at, OLD.finished_at, OLD.error_class, OLD.error_text);
END;
`

// qInsert is prepared when the ledger opens.
const qInsert = `INSERT OR IGNORE INTO runs(id, seq, slug, variant, config, priority, tags, state, queued_at) VALUES(?,?,?,?,?,?,?,?,?)`

var hotQueries = []string{qInsert}

func dsn(path string, readOnly bool) string {
	q := "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	if readOnly {
		q = "?mode=ro&_pragma=busy_timeout(10000)"
	}
	return "file:" + path + q
}

// OpenLedger opens or creates the ledger at path for a controller. It
// returns an error wrapping ErrLocked, naming the holder's pid, when another
// live process holds it.
func OpenLedger(path string) (*Ledger, error) {
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	waitUntil := time.Now().Add(deadHolderWait)
	for {
		err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		holder, _ := os.ReadFile(path + ".lock")
		if errors.Is(err, syscall.EWOULDBLOCK) && holderGone(string(holder), host) && time.Now().Before(waitUntil) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		lf.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (held by %s)", ErrLocked, path, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, err)
	}
	_ = lf.Truncate(0)
	_, _ = lf.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+" on "+host+"\n"), 0)
	l, err := open(path, false)
	if err != nil {
		lf.Close()
		return nil, err
	}
	l.lock = lf
	return l, nil
}

// deadHolderWait bounds how long OpenLedger waits for a lock whose recorded
// holder, a controller on this host, has exited. The lock can outlive its
// holder for a moment: a child the controller was forking when it was
// killed holds a copy of the descriptor until its exec closes it.
const deadHolderWait = 10 * time.Second

// holderGone reports whether the lock file's text ("pid N on HOST") names a
// process on this host that no longer exists.
func holderGone(text, host string) bool {
	var pid int
	var on, h string
	if _, err := fmt.Sscanf(strings.TrimSpace(text), "pid %d %s %s", &pid, &on, &h); err != nil || on != "on" || h != host || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// OpenLedgerReadOnly opens an existing ledger for monitoring without taking
// the controller lock; the transition methods return errors.
func OpenLedgerReadOnly(path string) (*Ledger, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	return open(path, true)
}

func open(path string, readOnly bool) (*Ledger, error) {
	db, err := sql.Open("sqlite", dsn(path, readOnly))
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	l := &Ledger{db: db, path: path, readOnly: readOnly, now: time.Now, stmts: map[string]*sql.Stmt{}}
	if !readOnly {
		if _, err := db.Exec(schema); err != nil {
			db.Close()
			return nil, fmt.Errorf("sweep: ledger %s: creating schema: %w", path, err)
		}
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	if !readOnly {
		if err := l.prepare(context.Background(), hotQueries...); err != nil {
			db.Close()
			return nil, err
		}
	}
	return l, nil
}

// Path returns the ledger's file name.
func (l *Ledger) Path() string { return l.path }

// Close closes the database and releases the controller lock.
func (l *Ledger) Close() error {
	for _, s := range l.stmts {
		s.Close()
	}
	err := l.db.Close()
	if l.lock != nil {
		l.lock.Close()
	}
	return err
}

// prepare caches the statements of the hot paths.
func (l *Ledger) prepare(ctx context.Context, qs ...string) error {
	for _, q := range qs {
		if _, ok := l.stmts[q]; ok {
			continue
		}
		s, err := l.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		l.stmts[q] = s
	}
	return nil
}

func (l *Ledger) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	// With one connection, preparing on l.db while tx holds it would
	// deadlock: statements are prepared before the transaction (prepare)
	// or, failing that, on the transaction itself.
	if s, ok := l.stmts[q]; ok {
		return tx.StmtContext(ctx, s), nil
	}
	return tx.PrepareContext(ctx, q)
}

func (l *Ledger) writable() error {
	if l.readOnly {
		return errors.New("sweep: ledger opened read-only")
	}
	return nil
}

// Enqueue adds the points that are not in the ledger yet, as queued runs,
// in one transaction, and returns how many were new. Resubmitting a spec is
// idempotent: runs already present keep their state.
func (l *Ledger) Enqueue(ctx context.Context, spec *Spec, pts []Point) (added int, err error) {
	if err := l.writable(); err != nil {
		return 0, err
	}
	caller := ctx
	ctx, err = hold(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep: enqueue: %w", err)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sweep: enqueue: %w", err)
	}
	defer tx.Rollback()
	ins, err := l.stmt(ctx, tx, qInsert)
	if err != nil {
		return 0, fmt.Errorf("sweep: enqueue: %w", err)
	}
	now := l.now().UnixNano()
	prio, tags := 0, ""
	if spec != nil {
		prio, tags = spec.Priority, strings.Join(spec.Tags, ",")
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES('name', ?)`, spec.Name); err != nil {
			return 0, fmt.Errorf("sweep: enqueue: %w", err)
		}
	}
	for i, p := range pts {
		if i%enqueueCheck == 0 {
			if err := caller.Err(); err != nil {
				return 0, fmt.Errorf("sweep: enqueue: %w", err)
			}
		}
		res, err := ins.ExecContext(ctx, p.ID, p.Index, p.Slug, p.Variant, string(EncodeConfig(p.Params)), prio, tags, string(Queued), now)
		if err != nil {
			return 0, fmt.Errorf("sweep: enqueue run %s: %w", p.ID, err)
		}
		n, _ := res.RowsAffected()
		added += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sweep: enqueue: %w", err)
	}
	return added, nil
}

// enqueueCheck is how many rows Enqueue inserts between checks of its
// context.
const enqueueCheck = 4096

// transition runs one state change as a single UPDATE statement, hence
// one transaction. The runs row holds the current attempt; the attempts
// table holds the attempts before it, archived by the attempt_close trigger
// in the same statement that requeues a failed run (Requeue is the only way
// to a new attempt). Keeping triggers off the hot transitions halves their
// cost: SQLite compiles a table's triggers into every UPDATE that touches
// their columns. q must end with "WHERE id=? AND state ..."
// and "RETURNING attempt". When no row changes, the run's state is read to
// report why.
func (l *Ledger) transition(ctx context.Context, id string, from []State, to State, q string, args ...any) (int, error) {
	if err := l.writable(); err != nil {
		return 0, err
	}
	ctx, err := hold(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep: run %s: →%s: %w", id, to, err)
	}
	var attempt int
	err = l.db.QueryRowContext(ctx, q, args...).Scan(&attempt)
	if err == nil {
		return attempt, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("sweep: run %s: →%s: %w", id, to, err)
	}
	var cur State
	if err := l.db.QueryRowContext(ctx, `SELECT state FROM runs WHERE id = ?`, id).Scan(&cur); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("%w: %s", ErrNoRun, id)
		}
		return 0, fmt.Errorf("sweep: run %s: %w", id, err)
	}
	return 0, &TransitionError{ID: id, From: from[0], To: to, Actual: cur}
}

// Start moves a queued run to running, opening a new attempt. backendID may
// be empty and set later with SetBackendID (a controller records the start
// before submitting, so a crash in between is recoverable).
func (l *Ledger) Start(ctx context.Context, id, backendID string) (attempt int, err error) {
	now := l.now().UnixNano()
	return l.transition(ctx, id, []State{Queued}, Running,
		`UPDATE runs SET state='running', attempt=attempt+1, backend_id=?, started_at=?, heartbeat_at=?, finished_at=0, error_class='', error_text='' WHERE id=? AND state='queued' RETURNING attempt`,
		backendID, now, now, id)
}

// SetBackendID records the backend's id for a running run's attempt.
func (l *Ledger) SetBackendID(ctx context.Context, id, backendID string) error {
	_, err := l.transition(ctx, id, []State{Running}, Running,
		`UPDATE runs SET backend_id=? WHERE id=? AND state='running' RETURNING attempt`, backendID, id)
	return err
}

// Heartbeat records that a running run was seen alive at t.
func (l *Ledger) Heartbeat(ctx context.Context, id string, t time.Time) error {
	_, err := l.transition(ctx, id, []State{Running}, Running,
		`UPDATE runs SET heartbeat_at=? WHERE id=? AND state='running' RETURNING attempt`, t.UnixNano(), id)
	return err
}

// Complete moves a running run to completed.
func (l *Ledger) Complete(ctx context.Context, id string) error {
	_, err := l.transition(ctx, id, []State{Running}, Completed,
		`UPDATE runs SET state='completed', finished_at=?, completions=completions+1 WHERE id=? AND state='running' RETURNING attempt`,
		l.now().UnixNano(), id)
	return err
}

// Fail moves a running run to failed with an error class and text.
func (l *Ledger) Fail(ctx context.Context, id string, class Class, text string) error {
	_, err := l.transition(ctx, id, []State{Running}, Failed,
		`UPDATE runs SET state='failed', finished_at=?, error_class=?, error_text=? WHERE id=? AND state='running' RETURNING attempt`,
		l.now().UnixNano(), string(class), text, id)
	return err
}

// Requeue moves a failed run back to queued for another attempt, replacing
// its parameter overrides when overrides is non-nil.
func (l *Ledger) Requeue(ctx context.Context, id string, overrides map[string]Value) error {
	var ov any
	if overrides != nil {
		ov = string(EncodeConfig(overrides))
	}
	_, err := l.transition(ctx, id, []State{Failed}, Queued,
		`UPDATE runs SET state='queued', queued_at=?, backend_id='', overrides=coalesce(?, overrides) WHERE id=? AND state='failed' RETURNING attempt`,
		l.now().UnixNano(), ov, id)
	return err
}

// Unstart moves a running run whose attempt never reached the backend back
// to queued, dropping that attempt (used by recovery after a crash between
// Start and submission).
func (l *Ledger) Unstart(ctx context.Context, id string) error {
	_, err := l.transition(ctx, id, []State{Running}, Queued,
		`UPDATE runs SET state='queued', attempt=attempt-1, backend_id='' WHERE id=? AND state='running' RETURNING attempt`, id)
	return err
}

// Cancel moves a queued or running run to cancelled.
func (l *Ledger) Cancel(ctx context.Context, id, reason string) error {
	_, err := l.transition(ctx, id, []State{Queued, Running}, Cancelled,
		`UPDATE runs SET state='cancelled', finished_at=?, error_class='cancelled', error_text=? WHERE id=? AND state IN ('queued', 'running') RETURNING attempt`,
		l.now().UnixNano(), reason, id)
	return err
}

const runCols = `id, slug, variant, seq, config, overrides, state, attempt, backend_id, queued_at, started_at, finished_at, heartbeat_at, error_class, error_text, completions`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var cfg, ov string
	var q, s, f, h int64
	var cls string
	if err := sc.Scan(&r.ID, &r.Slug, &r.Variant, &r.Seq, &cfg, &ov, &r.State, &r.Attempt, &r.BackendID, &q, &s, &f, &h, &cls, &r.ErrorText, &r.Completions); err != nil {
		return r, err
	}
	r.ErrorClass = Class(cls)
	var err error
	if r.Config, err = DecodeConfig([]byte(cfg)); err != nil {
		return r, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if r.Overrides, err = DecodeConfig([]byte(ov)); err != nil {
		return r, fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.QueuedAt, r.StartedAt, r.FinishedAt, r.HeartbeatAt = ts(q), ts(s), ts(f), ts(h)
	return r, nil
}

func ts(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Runs returns the runs in the given states (all when none), in sweep order.
func (l *Ledger) Runs(ctx context.Context, states ...State) ([]Run, error) {
	q := `SELECT ` + runCols + ` FROM runs`
	args := []any{}
	if len(states) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(",?", len(states)-1) + `)`
		for _, s := range states {
			args = append(args, string(s))
		}
	}
	q += ` ORDER BY seq, id`
	return l.query(ctx, q, args...)
}

// NextQueued returns up to n queued runs in sweep order.
func (l *Ledger) NextQueued(ctx context.Context, n int) ([]Run, error) {
	return l.query(ctx, `SELECT `+runCols+` FROM runs WHERE state='queued' ORDER BY seq, id LIMIT ?`, n)
}

// Get returns one run.
func (l *Ledger) Get(ctx context.Context, id string) (Run, error) {
	rs, err := l.query(ctx, `SELECT `+runCols+` FROM runs WHERE id=?`, id)
	if err != nil {
		return Run{}, err
	}
	if len(rs) == 0 {
		return Run{}, fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	return rs[0], nil
}

func (l *Ledger) query(ctx context.Context, q string, args ...any) ([]Run, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return out, nil
}

// Attempts returns every attempt of a run, oldest first: the archived ones
// and the current one.
func (l *Ledger) Attempts(ctx context.Context, id string) ([]Attempt, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT run_id, n, state, backend_id, overrides, started_at, finished_at, error_class, error_text FROM attempts WHERE run_id=? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		var a Attempt
		var ov, cls string
		var s, f int64
		if err := rows.Scan(&a.RunID, &a.N, &a.State, &a.BackendID, &ov, &s, &f, &cls, &a.ErrorText); err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		a.Overrides, _ = DecodeConfig([]byte(ov))
		a.StartedAt, a.FinishedAt, a.ErrorClass = ts(s), ts(f), Class(cls)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	r, err := l.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	// The current attempt lives in the runs row, unless it was archived
	// (a requeued run that has not started again) or never started.
	if r.Attempt > 0 && r.State != Queued && (len(out) == 0 || out[len(out)-1].N < r.Attempt) {
		out = append(out, Attempt{RunID: r.ID, N: r.Attempt, State: r.State, BackendID: r.BackendID, Overrides: r.Overrides,
			StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, ErrorClass: r.ErrorClass, ErrorText: r.ErrorText})
	}
	return out, nil
}

// hold returns a context for one database call: ctx's values without its
// cancellation, or ctx.Err() when ctx has already ended. The ledger never
// lets a context interrupt a statement half-way: with the pure-Go driver an
// interrupted statement has been seen to leave the database locked for the
// next writer ("database is locked" ten seconds later). Each statement is
// short; ctx is checked before it starts, and between rows of a long
// Enqueue.
func hold(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return ctx, err
	}
	return context.WithoutCancel(ctx), nil
}

// Name returns the sweep name recorded by Enqueue ("" before).
func (l *Ledger) Name(ctx context.Context) (string, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return "", fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	var n string
	err = l.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='name'`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return n, err
}
