package sweep

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// State is a run's state in the ledger.
type State string

// The run states. Transitions: Queued→Running→Completed|Failed|Pruned,
// Failed→Queued (a retry, a new attempt), Queued|Running→Cancelled, and by
// the user's Requeue, Failed|Cancelled|Pruned→Queued.
const (
	Queued    State = "queued"
	Running   State = "running"
	Completed State = "completed"
	Failed    State = "failed"
	Cancelled State = "cancelled"
	Pruned    State = "pruned" // stopped early by a Pruner; ErrorText says why
)

// States returns the states in display order.
func States() []State { return []State{Queued, Running, Completed, Failed, Pruned, Cancelled} }

// Run is one row of the ledger.
type Run struct {
	ID, Slug, Variant string
	seq               int
	Config            map[string]Value // the spec's parameters
	overrides         map[string]Value // set by retry adjusters
	resources         Resources        // what the run asks its scheduler for
	State             State
	Attempt           int // attempts started so far
	BackendID         string
	queuedAt          time.Time
	StartedAt         time.Time
	FinishedAt        time.Time
	heartbeatAt       time.Time
	ErrorClass        Class
	ErrorText         string
	Completions       int // times the run entered Completed; 1 at most

	// stop is the controller's request to stop the current attempt,
	// recorded before it asks the backend ("prune:", "cancel:" or
	// "stale:" and the reason), so that a controller that dies in between
	// leaves the next one enough to record the attempt as it was meant.
	stop string
}

// Params returns Config with the changes a retry policy made for the
// current attempt.
func (r *Run) Params() map[string]Value {
	out := make(map[string]Value, len(r.Config)+len(r.overrides))
	maps.Copy(out, r.Config)
	maps.Copy(out, r.overrides)
	return out
}

// TransitionError reports a state change that the run's current state does
// not allow.
type TransitionError struct {
	id       string
	from, to State
	actual   State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("sweep: run %s: cannot go %s→%s, run is %s", e.id, e.from, e.to, e.actual)
}

// InputsError is Enqueue's error when the spec's Inputs differ from those
// the ledger recorded: the runs already in the ledger were computed from
// other inputs.
type InputsError struct {
	ledger  string
	changed []string // "key: recorded → now"
}

func (e *InputsError) Error() string {
	return "sweep: ledger " + e.ledger + " holds runs computed from other inputs (" + strings.Join(e.changed, "; ") +
		"); use a new ledger and work directory, or Ledger.AcceptInputs to record the new ones"
}

// Ledger is the durable record of a sweep: one SQLite file in WAL mode.
// Every transition is one transaction. A Ledger opened with OpenLedger
// holds an exclusive lock (flock on <path>.lock) that the kernel releases
// if the controller dies, so a second controller is refused while the first
// lives and a restarted one takes over at once.
//
// A Ledger opened with OpenLedgerReadOnly serves the read API (Status,
// Runs, Get, Attempts, Summaries, Series, WriteFailed) while a controller
// writes: a dashboard or a status command opens it that way.
type Ledger struct {
	db       *sql.DB
	unlock   func()
	path     string
	readOnly bool
	stmts    map[string]*sql.Stmt
	now      func() time.Time
	// metricsReadAt is when the controller last began reading the
	// metric logs (see Pruner).
	metricsReadAt time.Time
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
CREATE TABLE IF NOT EXISTS metrics(
	run_id TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	series TEXT NOT NULL,
	step REAL NOT NULL,
	value REAL,
	time REAL NOT NULL DEFAULT 0,
	PRIMARY KEY(run_id, attempt, series, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS latest(
	run_id TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	series TEXT NOT NULL,
	step REAL NOT NULL,
	value REAL,
	PRIMARY KEY(run_id, attempt, series)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS metrics_latest AFTER INSERT ON metrics BEGIN
	INSERT INTO latest(run_id, attempt, series, step, value) VALUES(NEW.run_id, NEW.attempt, NEW.series, NEW.step, NEW.value)
	ON CONFLICT(run_id, attempt, series) DO UPDATE SET step = excluded.step, value = excluded.value WHERE excluded.step >= latest.step;
END;
CREATE TABLE IF NOT EXISTS scalars(
	run_id TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	name TEXT NOT NULL,
	value REAL,
	PRIMARY KEY(run_id, attempt, name)
) WITHOUT ROWID;
DROP TRIGGER IF EXISTS attempt_start;
DROP TRIGGER IF EXISTS attempt_unstart;
DROP TRIGGER IF EXISTS attempt_backend;
DROP TRIGGER IF EXISTS attempt_end;
DROP TRIGGER IF EXISTS attempt_close;
CREATE TRIGGER attempt_close AFTER UPDATE OF queued_at ON runs
WHEN OLD.state IN ('failed', 'cancelled', 'pruned', 'completed') AND NEW.state = 'queued' AND OLD.attempt > 0 BEGIN
	INSERT OR REPLACE INTO attempts(run_id, n, state, backend_id, overrides, started_at, finished_at, error_class, error_text)
	VALUES(OLD.id, OLD.attempt, OLD.state, OLD.backend_id, OLD.overrides, OLD.started_at, OLD.finished_at, OLD.error_class, OLD.error_text);
END;
`

// migrations add what older ledgers lack; "duplicate column" errors mean
// it is there already.
var migrations = []string{
	`ALTER TABLE runs ADD COLUMN resources TEXT NOT NULL DEFAULT '{}'`,
	`ALTER TABLE runs ADD COLUMN stop_request TEXT NOT NULL DEFAULT ''`,
	// latest (each series' value at its last step, kept by the trigger)
	// for a ledger written before the table existed, once.
	`INSERT INTO latest(run_id, attempt, series, step, value)
		SELECT run_id, attempt, series, max(step), value FROM metrics
		WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'latest') GROUP BY run_id, attempt, series`,
	`INSERT OR IGNORE INTO meta(key, value) VALUES('latest', '1')`,
}

// qInsert is prepared when the ledger opens.
const qInsert = `INSERT OR IGNORE INTO runs(id, seq, slug, variant, config, resources, state, queued_at) VALUES(?,?,?,?,?,?,?,?)`

var hotQueries = []string{qInsert}

// dsn builds the driver's URI with net/url, so that '#', '?', '%', spaces
// and quotes in a path are escaped rather than read as URI syntax (an
// unescaped "dir#1/ledger.db" would open "dir").
func dsn(path string, readOnly, immutable bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path, C:/x
	}
	q := url.Values{"_pragma": {"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)"}}
	if readOnly {
		q = url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(10000)"}}
	}
	if immutable {
		q = url.Values{"mode": {"ro"}, "immutable": {"1"}}
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String(), nil
}

// OpenLedger opens or creates the ledger at path for a controller. It
// returns an error wrapping ErrLocked, naming the holder (pid, host, since
// when), when another live controller holds it, and one wrapping ErrAlias
// for a path that is a symbolic link or a file with more than one hard
// link: a second controller reaching the ledger under another name would
// otherwise not be refused.
func OpenLedger(path string) (*Ledger, error) {
	if err := checkLedgerFile(path, true); err != nil {
		return nil, err
	}
	unlock, err := lockLedger(path)
	if err != nil {
		return nil, err
	}
	l, err := open(path, false)
	if err != nil {
		unlock()
		return nil, err
	}
	l.unlock = unlock
	return l, nil
}

// OpenLedgerReadOnly opens an existing ledger for monitoring without taking
// the controller lock; the transition methods return errors wrapping
// ErrReadOnly.
func OpenLedgerReadOnly(path string) (*Ledger, error) {
	if err := checkLedgerFile(path, false); err != nil {
		return nil, err
	}
	l, err := open(path, true)
	if err == nil || !finished(path) {
		return l, err
	}
	// SQLite's read-only mode still needs to create the -shm file of a WAL
	// database, which a user who cannot write the directory cannot: a
	// finished ledger (no -wal file with content) is read as immutable.
	l, ierr := openImmutable(path)
	if ierr != nil {
		return nil, err
	}
	return l, nil
}

// finished reports whether path has no write-ahead log with content, as a
// ledger whose controller closed it.
func finished(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() == 0
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkLedgerFile refuses what path must not be: a directory, an empty
// file, a file that is not an SQLite database, and, for a controller
// (create), a symbolic link or a file with several hard links. A missing
// file is fine when create is set.
func checkLedgerFile(path string, create bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) && create {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if create {
			target, _ := os.Readlink(path)
			return fmt.Errorf("sweep: %w: ledger %s is a symbolic link (to %s); open the file itself", ErrAlias, path, target)
		}
		if fi, err = os.Stat(path); err != nil {
			return fmt.Errorf("sweep: ledger %s: %w", path, err)
		}
	}
	switch {
	case fi.IsDir():
		return fmt.Errorf("sweep: ledger %s is a directory, not a ledger file", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("sweep: ledger %s is not a regular file", path)
	case fi.Size() == 0:
		return fmt.Errorf("sweep: ledger %s is an empty file, not a ledger; remove it or choose another path", path)
	case create && links(fi) > 1:
		return fmt.Errorf("sweep: %w: ledger %s has %d hard links; a controller needs the only name of its ledger", ErrAlias, path, links(fi))
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != sqliteMagic {
		return fmt.Errorf("sweep: ledger %s is not a sweep ledger (not an SQLite database)", path)
	}
	return nil
}

func open(path string, readOnly bool) (*Ledger, error) { return openDSN(path, readOnly, false) }

func openImmutable(path string) (*Ledger, error) { return openDSN(path, true, true) }

func openDSN(path string, readOnly, immutable bool) (*Ledger, error) {
	name, err := dsn(path, readOnly, immutable)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", name)
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
		for _, m := range migrations {
			if _, err := db.Exec(m); err != nil && !strings.Contains(err.Error(), "duplicate column") {
				db.Close()
				return nil, fmt.Errorf("sweep: ledger %s: migrating: %w", path, err)
			}
		}
		// A ledger's id ties it to its work directory (see Controller.Run).
		if _, err := db.Exec(`INSERT OR IGNORE INTO meta(key, value) VALUES('id', ?)`, newLedgerID()); err != nil {
			db.Close()
			return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
		}
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
	}
	if readOnly {
		// Opening is lazy: read once, so that a ledger this process cannot
		// read fails here.
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM meta`).Scan(&n); err != nil {
			db.Close()
			return nil, fmt.Errorf("sweep: ledger %s: %w", path, err)
		}
	}
	if !readOnly {
		if err := l.prepare(context.Background(), hotQueries...); err != nil {
			db.Close()
			return nil, err
		}
	}
	return l, nil
}

// newLedgerID names a new ledger: its host, the process and the time, which
// no other ledger shares.
func newLedgerID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%d", slugText(host), os.Getpid(), time.Now().UnixNano())
}

// Path returns the ledger's file name.
func (l *Ledger) Path() string { return l.path }

// Close closes the database and releases the controller lock.
func (l *Ledger) Close() error {
	for _, s := range l.stmts {
		s.Close()
	}
	err := l.db.Close()
	if l.unlock != nil {
		l.unlock()
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
		return fmt.Errorf("sweep: ledger %s: %w", l.path, ErrReadOnly)
	}
	return nil
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

func (l *Ledger) meta(ctx context.Context, key string) (string, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return "", fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	var v string
	err = l.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return v, nil
}

func (l *Ledger) setMeta(ctx context.Context, key, value string) error {
	if err := l.writable(); err != nil {
		return err
	}
	ctx, err := hold(ctx)
	if err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	if _, err := l.db.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, key, value); err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return nil
}

// ID returns the ledger's id, created with the file: the work directory of
// a sweep records it (see Controller.Run), so that a work directory is
// never silently reused by a new ledger.
func (l *Ledger) id(ctx context.Context) (string, error) { return l.meta(ctx, "id") }

// Name returns the sweep name recorded by Enqueue ("" before).
func (l *Ledger) Name(ctx context.Context) (string, error) { return l.meta(ctx, "name") }

// WorkDir returns the work directory the controller recorded (absolute),
// or "" before the first Controller.Run.
func (l *Ledger) WorkDir(ctx context.Context) (string, error) { return l.meta(ctx, "work_dir") }

// inputs returns the inputs recorded by the first Enqueue (see
// Spec.Inputs).
func (l *Ledger) inputs(ctx context.Context) (map[string]string, error) {
	s, err := l.meta(ctx, "inputs")
	if err != nil || s == "" {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: inputs: %w", l.path, err)
	}
	return m, nil
}

// AcceptInputs records new inputs, so that the next Enqueue of a spec with
// them is accepted. The runs already in the ledger keep their results;
// requeue them (Requeue) to recompute them with the new inputs.
func (l *Ledger) AcceptInputs(ctx context.Context, inputs map[string]string) error {
	b, _ := json.Marshal(inputs)
	return l.setMeta(ctx, "inputs", string(b))
}

func (l *Ledger) checkInputs(ctx context.Context, tx *sql.Tx, spec *Spec) error {
	var rec string
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='inputs'`).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil {
			return err
		}
		if n > 0 && len(spec.Inputs) > 0 {
			return &InputsError{ledger: l.path, changed: []string{"no inputs recorded with the existing runs"}}
		}
		b, _ := json.Marshal(spec.Inputs)
		_, err = tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('inputs', ?)`, string(b))
		return err
	}
	if err != nil {
		return err
	}
	var old map[string]string
	if err := json.Unmarshal([]byte(rec), &old); err != nil {
		return fmt.Errorf("inputs: %w", err)
	}
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if v, ok := spec.Inputs[k]; !ok || v != old[k] {
			changed = append(changed, fmt.Sprintf("%s: %q → %q", k, old[k], spec.Inputs[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Inputs)) {
		if _, ok := old[k]; !ok {
			changed = append(changed, fmt.Sprintf("%s: not recorded → %q", k, spec.Inputs[k]))
		}
	}
	if len(changed) > 0 {
		return &InputsError{ledger: l.path, changed: changed}
	}
	return nil
}

// Enqueue adds the points that are not in the ledger yet, as queued runs,
// in one transaction, and returns how many were new. Resubmitting a spec is
// idempotent: runs already present keep their state. spec may be nil;
// otherwise its name and Inputs are recorded, and different Inputs than
// those recorded are an *InputsError. pts is a stream (slices.Values of
// Spec.Expand's points, or Spec.Points), committed in batches of 50,000:
// memory stays bounded whatever the sweep's size, and ctx is checked
// between batches.
func (l *Ledger) Enqueue(ctx context.Context, spec *Spec, pts iter.Seq[Point]) (added int, err error) {
	return l.enqueue(ctx, spec, pts)
}

// enqueueBatch is how many rows Enqueue commits per transaction: a
// sweep of maxRuns points streams in bounded memory, and an interrupted
// enqueue leaves whole batches, which a second call completes.
const enqueueBatch = 50_000

func (l *Ledger) enqueue(ctx context.Context, spec *Spec, pts iter.Seq[Point]) (added int, err error) {
	if err := l.writable(); err != nil {
		return 0, err
	}
	caller := ctx
	ctx, err = hold(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep: enqueue: %w", err)
	}
	var tx *sql.Tx
	var ins *sql.Stmt
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	begin := func() error {
		var err error
		if tx, err = l.db.BeginTx(ctx, nil); err != nil {
			return err
		}
		ins, err = l.stmt(ctx, tx, qInsert)
		return err
	}
	if err := begin(); err != nil {
		return 0, fmt.Errorf("sweep: enqueue: %w", err)
	}
	now := l.now().UnixNano()
	if spec != nil {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES('name', ?)`, spec.Name); err != nil {
			return 0, fmt.Errorf("sweep: enqueue: %w", err)
		}
		if err := l.checkInputs(ctx, tx, spec); err != nil {
			var ie *InputsError
			if errors.As(err, &ie) {
				return 0, err
			}
			return 0, fmt.Errorf("sweep: enqueue: %w", err)
		}
	}
	n := 0
	for p := range pts {
		if n > 0 && n%enqueueBatch == 0 {
			if err := tx.Commit(); err != nil {
				tx = nil
				return added, fmt.Errorf("sweep: enqueue: %w", err)
			}
			tx = nil
			if err := caller.Err(); err != nil {
				return added, fmt.Errorf("sweep: enqueue: %w", err)
			}
			if err := begin(); err != nil {
				return added, fmt.Errorf("sweep: enqueue: %w", err)
			}
		}
		n++
		if n > maxRuns {
			return added, fmt.Errorf("sweep: enqueue: %w: more than %d runs (maxRuns)", ErrTooLarge, maxRuns)
		}
		res, err := ins.ExecContext(ctx, p.ID, p.index, p.Slug, p.Params["variant"].Lit, string(encodeConfig(p.Params)), encodeResources(p.resources), string(Queued), now)
		if err != nil {
			return added, fmt.Errorf("sweep: enqueue run %s: %w", p.ID, err)
		}
		k, _ := res.RowsAffected()
		added += int(k)
	}
	if err := tx.Commit(); err != nil {
		tx = nil
		return added, fmt.Errorf("sweep: enqueue: %w", err)
	}
	tx = nil
	return added, nil
}

// transition runs one state change as a single UPDATE statement, hence
// one transaction. The runs row holds the current attempt; the attempts
// table holds the attempts before it, archived by the attempt_close trigger
// in the same statement that requeues a run (Requeue is the only way to a
// new attempt). Keeping triggers off the hot transitions halves their
// cost: SQLite compiles a table's triggers into every UPDATE that touches
// their columns. q must end with "WHERE id=? AND state ..." and
// "RETURNING attempt". When no row changes, the run's state is read to
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
	return 0, l.whyNot(ctx, id, from[0], to)
}

// whyNot explains a transition that changed no row: the run does not
// exist, or is in another state.
func (l *Ledger) whyNot(ctx context.Context, id string, from, to State) error {
	var cur State
	if err := l.db.QueryRowContext(ctx, `SELECT state FROM runs WHERE id = ?`, id).Scan(&cur); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sweep: %w: %s", ErrNoRun, id)
		}
		return fmt.Errorf("sweep: run %s: %w", id, err)
	}
	return &TransitionError{id: id, from: from, to: to, actual: cur}
}

// Start moves a queued run to running, opening a new attempt. backendID may
// be empty and set later with SetBackendID (a controller records the start
// before submitting, so a crash in between is recoverable).
func (l *Ledger) start(ctx context.Context, id, backendID string) (attempt int, err error) {
	now := l.now().UnixNano()
	return l.transition(ctx, id, []State{Queued}, Running,
		`UPDATE runs SET state='running', attempt=attempt+1, backend_id=?, started_at=?, heartbeat_at=?, finished_at=0, error_class='', error_text='', stop_request='' WHERE id=? AND state='queued' RETURNING attempt`,
		backendID, now, now, id)
}

// SetBackendID records the backend's id for a running run's attempt.
func (l *Ledger) setBackendID(ctx context.Context, id, backendID string) error {
	_, err := l.transition(ctx, id, []State{Running}, Running,
		`UPDATE runs SET backend_id=? WHERE id=? AND state='running' RETURNING attempt`, backendID, id)
	return err
}

// requestStop records why the controller is about to stop a running run's
// attempt (kind "prune", "cancel" or "stale").
func (l *Ledger) requestStop(ctx context.Context, id, kind, reason string) error {
	_, err := l.transition(ctx, id, []State{Running}, Running,
		`UPDATE runs SET stop_request=? WHERE id=? AND state='running' RETURNING attempt`, kind+":"+reason, id)
	return err
}

// Heartbeat records that a running run was seen alive at t.
func (l *Ledger) heartbeat(ctx context.Context, id string, t time.Time) error {
	_, err := l.transition(ctx, id, []State{Running}, Running,
		`UPDATE runs SET heartbeat_at=? WHERE id=? AND state='running' RETURNING attempt`, t.UnixNano(), id)
	return err
}

// Complete moves a running run to completed.
func (l *Ledger) complete(ctx context.Context, id string) error {
	_, err := l.transition(ctx, id, []State{Running}, Completed,
		`UPDATE runs SET state='completed', finished_at=?, completions=completions+1 WHERE id=? AND state='running' RETURNING attempt`,
		l.now().UnixNano(), id)
	return err
}

// Fail moves a running run to failed with an error class and text.
func (l *Ledger) fail(ctx context.Context, id string, class Class, text string) error {
	_, err := l.transition(ctx, id, []State{Running}, Failed,
		`UPDATE runs SET state='failed', finished_at=?, error_class=?, error_text=? WHERE id=? AND state='running' RETURNING attempt`,
		l.now().UnixNano(), string(class), text, id)
	return err
}

// failRetry records a failed attempt and queues the run for the next one
// in one transaction, so that a crash cannot leave a run failed that its
// retry budget would have retried. overrides replaces the run's overrides
// when non-nil.
func (l *Ledger) failRetry(ctx context.Context, id string, class Class, text string, overrides map[string]Value) error {
	if err := l.writable(); err != nil {
		return err
	}
	hctx, err := hold(ctx)
	if err != nil {
		return fmt.Errorf("sweep: run %s: retry: %w", id, err)
	}
	tx, err := l.db.BeginTx(hctx, nil)
	if err != nil {
		return fmt.Errorf("sweep: run %s: retry: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(hctx, `UPDATE runs SET state='failed', finished_at=?, error_class=?, error_text=? WHERE id=? AND state='running'`,
		l.now().UnixNano(), string(class), text, id)
	if err != nil {
		return fmt.Errorf("sweep: run %s: retry: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		tx.Rollback()
		return l.whyNot(hctx, id, Running, Failed)
	}
	var ov any
	if overrides != nil {
		ov = string(encodeConfig(overrides))
	}
	if _, err := tx.ExecContext(hctx, `UPDATE runs SET state='queued', queued_at=?, backend_id='', overrides=coalesce(?, overrides) WHERE id=? AND state='failed'`,
		l.now().UnixNano(), ov, id); err != nil {
		return fmt.Errorf("sweep: run %s: retry: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sweep: run %s: retry: %w", id, err)
	}
	return nil
}

// Prune moves a running run to pruned (stopped early because it could not
// win), with the reason.
func (l *Ledger) prune(ctx context.Context, id, reason string) error {
	_, err := l.transition(ctx, id, []State{Running}, Pruned,
		`UPDATE runs SET state='pruned', finished_at=?, error_class='pruned', error_text=? WHERE id=? AND state='running' RETURNING attempt`,
		l.now().UnixNano(), reason, id)
	return err
}

// Retry moves a failed run back to queued for another attempt, replacing
// its parameter overrides when overrides is non-nil. The controller calls
// it within the retry budget; Requeue is the user's version.
func (l *Ledger) retry(ctx context.Context, id string, overrides map[string]Value) error {
	var ov any
	if overrides != nil {
		ov = string(encodeConfig(overrides))
	}
	_, err := l.transition(ctx, id, []State{Failed}, Queued,
		`UPDATE runs SET state='queued', queued_at=?, backend_id='', overrides=coalesce(?, overrides) WHERE id=? AND state='failed' RETURNING attempt`,
		l.now().UnixNano(), ov, id)
	return err
}

// Requeue puts finished runs back in the queue for a new attempt, keeping
// their earlier attempts in the history: the runs with the given ids, or,
// with no ids, every run in one of states. Failed, cancelled and pruned
// runs can be requeued; completed ones only when states or ids name them
// and force is set (their result is kept in the attempt history but is no
// longer the run's). It returns the ids requeued. Requeue needs the
// controller's lock (a Ledger from OpenLedger), so it cannot race a
// running controller.
func (l *Ledger) Requeue(ctx context.Context, ids []string, states []State, force bool) ([]string, error) {
	if err := l.writable(); err != nil {
		return nil, err
	}
	allowed := []State{Failed, Cancelled, Pruned}
	if force {
		allowed = append(allowed, Completed)
	}
	var targets []Run
	if len(ids) > 0 {
		for _, id := range ids {
			r, err := l.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			targets = append(targets, r)
		}
	} else {
		for _, s := range states {
			if !slices.Contains(allowed, s) {
				return nil, fmt.Errorf("sweep: requeue: runs in state %s cannot be requeued (%v)", s, allowed)
			}
		}
		rs, err := l.Runs(ctx, states...)
		if err != nil {
			return nil, err
		}
		targets = rs
	}
	var done []string
	for _, r := range targets {
		if !slices.Contains(allowed, r.State) {
			return done, &TransitionError{id: r.ID, from: r.State, to: Queued, actual: r.State}
		}
		_, err := l.transition(ctx, r.ID, []State{r.State}, Queued,
			`UPDATE runs SET state='queued', queued_at=?, backend_id='', finished_at=0, completions=0 WHERE id=? AND state=? RETURNING attempt`,
			l.now().UnixNano(), r.ID, string(r.State))
		if err != nil {
			return done, err
		}
		done = append(done, r.ID)
	}
	return done, nil
}

// Unstart moves a running run whose attempt never reached the backend back
// to queued, dropping that attempt (used by recovery after a crash between
// Start and submission).
func (l *Ledger) unstart(ctx context.Context, id string) error {
	_, err := l.transition(ctx, id, []State{Running}, Queued,
		`UPDATE runs SET state='queued', attempt=attempt-1, backend_id='' WHERE id=? AND state='running' RETURNING attempt`, id)
	return err
}

// Cancel moves a queued or running run to cancelled. A controller calls it
// for a running run only once the backend has confirmed the cancel
// (Controller.Cancel); a user cancels queued runs directly.
func (l *Ledger) cancel(ctx context.Context, id, reason string) error {
	_, err := l.transition(ctx, id, []State{Queued, Running}, Cancelled,
		`UPDATE runs SET state='cancelled', finished_at=?, error_class='cancelled', error_text=? WHERE id=? AND state IN ('queued', 'running') RETURNING attempt`,
		l.now().UnixNano(), reason, id)
	return err
}

const runCols = `id, slug, variant, seq, config, overrides, resources, state, attempt, backend_id, queued_at, started_at, finished_at, heartbeat_at, error_class, error_text, completions, stop_request`

// runScanner scans rows of runCols into Runs, reusing its destinations
// so that a row costs no allocations beyond the Run's own values.
type runScanner struct {
	cfg, ov, res, cls, state string
	q, s, f, h               int64
	seq, attempt, done       int
	dest                     []any
}

func newRunScanner() *runScanner {
	sc := &runScanner{}
	sc.dest = []any{nil, nil, nil, intCol{&sc.seq}, &sc.cfg, &sc.ov, &sc.res, &sc.state, intCol{&sc.attempt}, nil,
		int64Col{&sc.q}, int64Col{&sc.s}, int64Col{&sc.f}, int64Col{&sc.h}, &sc.cls, nil, intCol{&sc.done}, nil}
	return sc
}

// scan reads the current row into r.
func (sc *runScanner) scan(rows *sql.Rows, r *Run) error {
	d := sc.dest
	d[0], d[1], d[2], d[9], d[15], d[17] = &r.ID, &r.Slug, &r.Variant, &r.BackendID, &r.ErrorText, &r.stop
	if err := rows.Scan(d...); err != nil {
		return err
	}
	r.seq, r.State, r.Attempt, r.Completions, r.ErrorClass = sc.seq, State(sc.state), sc.attempt, sc.done, Class(sc.cls)
	var err error
	if r.Config, err = decodeConfig(sc.cfg); err != nil {
		return fmt.Errorf("run %s: %w", r.ID, err)
	}
	if sc.ov != "{}" { // the usual case: no retry changed the parameters
		if r.overrides, err = decodeConfig(sc.ov); err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
	}
	if r.resources, err = decodeResources(sc.res); err != nil {
		return fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.queuedAt, r.StartedAt, r.FinishedAt, r.heartbeatAt = ts(sc.q), ts(sc.s), ts(sc.f), ts(sc.h)
	return nil
}

// intCol, int64Col and realCol scan a column straight into a Go value:
// database/sql would otherwise take its reflection path (for an int, by way
// of the number's text) for every row.
type (
	intCol   struct{ p *int }
	int64Col struct{ p *int64 }
	realCol  struct{ p *float64 } // NULL is NaN
)

func (c intCol) Scan(src any) error {
	var n int64
	err := int64Col{&n}.Scan(src)
	*c.p = int(n)
	return err
}

func (c int64Col) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*c.p = v
		return nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		*c.p = n
		return err
	case []byte:
		n, err := strconv.ParseInt(string(v), 10, 64)
		*c.p = n
		return err
	}
	return fmt.Errorf("column holds %T, not an integer", src)
}

func (c realCol) Scan(src any) error {
	switch v := src.(type) {
	case float64:
		*c.p = v
		return nil
	case int64:
		*c.p = float64(v)
		return nil
	case nil:
		*c.p = math.NaN()
		return nil
	}
	return fmt.Errorf("column holds %T, not a number", src)
}

func ts(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Runs returns the runs in the given states (all when none), in sweep order.
func (l *Ledger) Runs(ctx context.Context, states ...State) ([]Run, error) {
	var rs []Run
	err := l.scanByID(ctx, states, func(n int) { rs = make([]Run, 0, n) }, func() *Run {
		rs = append(rs, Run{})
		return &rs[len(rs)-1]
	})
	if err != nil {
		return nil, err
	}
	permute(rs, sweepPerm(len(rs), func(i int) (int, string) { return rs[i].seq, rs[i].ID }))
	return rs, nil
}

// scanByID reads the runs in the given states (all when none) in the order
// of their ids, the table's own: sorting in SQLite would copy every row into
// its sorter, which at 10⁵ runs took longer than reading them. It calls
// start with the number of runs, then scans each run into next's Run.
func (l *Ledger) scanByID(ctx context.Context, states []State, start func(n int), next func() *Run) error {
	where := ""
	args := []any{}
	if len(states) > 0 {
		where = ` WHERE state IN (?` + strings.Repeat(",?", len(states)-1) + `)`
		for _, s := range states {
			args = append(args, string(s))
		}
	}
	n, err := l.count(ctx, `SELECT count(*) FROM runs`+where, args...)
	if err != nil {
		return err
	}
	start(n)
	ctx, err = hold(ctx)
	if err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT `+runCols+` FROM runs`+where+` ORDER BY id`, args...)
	if err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	sc := newRunScanner()
	for rows.Next() {
		if err := sc.scan(rows, next()); err != nil {
			return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return nil
}

// sweepPerm returns the indices of n runs in sweep order, (seq, id), the
// order runs are queued in; key gives run i's seq and id. It sorts compact
// keys rather than reaching into the large Run values at every comparison.
func sweepPerm(n int, key func(i int) (seq int, id string)) []int32 {
	type k struct {
		seq int
		id  string
		i   int32
	}
	keys := make([]k, n)
	for i := range keys {
		seq, id := key(i)
		keys[i] = k{seq, id, int32(i)}
	}
	slices.SortFunc(keys, func(a, b k) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), strings.Compare(a.id, b.id))
	})
	idx := make([]int32, n)
	for i, x := range keys {
		idx[i] = x.i
	}
	return idx
}

// permute reorders s in place so that s[k] becomes the old s[idx[k]],
// following idx's cycles: each value moves once, and no second slice of
// the large values is needed.
func permute[T any](s []T, idx []int32) {
	done := make([]bool, len(s))
	for k := range s {
		if done[k] || int(idx[k]) == k {
			continue
		}
		tmp := s[k]
		j := k
		for {
			done[j] = true
			next := int(idx[j])
			if next == k {
				s[j] = tmp
				break
			}
			s[j] = s[next]
			j = next
		}
	}
}

func (l *Ledger) count(ctx context.Context, q string, args ...any) (int, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	var n int
	if err := l.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return n, nil
}

// NextQueued returns up to n queued runs in sweep order.
func (l *Ledger) nextQueued(ctx context.Context, n int) ([]Run, error) {
	return l.query(ctx, `SELECT `+runCols+` FROM runs WHERE state='queued' ORDER BY seq, id LIMIT ?`, n)
}

// Get returns one run.
func (l *Ledger) Get(ctx context.Context, id string) (Run, error) {
	rs, err := l.query(ctx, `SELECT `+runCols+` FROM runs WHERE id=?`, id)
	if err != nil {
		return Run{}, err
	}
	if len(rs) == 0 {
		return Run{}, fmt.Errorf("sweep: %w: %s", ErrNoRun, id)
	}
	return rs[0], nil
}

func (l *Ledger) query(ctx context.Context, q string, args ...any) ([]Run, error) {
	return l.queryCap(ctx, 0, q, args...)
}

// queryCap is query with room for n runs.
func (l *Ledger) queryCap(ctx context.Context, n int, q string, args ...any) ([]Run, error) {
	ctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	out := make([]Run, 0, n)
	sc := newRunScanner()
	for rows.Next() {
		out = append(out, Run{})
		if err := sc.scan(rows, &out[len(out)-1]); err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	return out, nil
}

// Attempts returns every attempt of run id, oldest first (the archived ones
// and the current one), each as the run was during it: Attempt is the
// attempt's number; State, BackendID, StartedAt, FinishedAt, ErrorClass,
// ErrorText and Params are the attempt's.
func (l *Ledger) Attempts(ctx context.Context, id string) ([]Run, error) {
	r, err := l.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	hctx, err := hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	rows, err := l.db.QueryContext(hctx, `SELECT n, state, backend_id, overrides, started_at, finished_at, error_class, error_text FROM attempts WHERE run_id=? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	defer rows.Close()
	base := Run{ID: r.ID, Slug: r.Slug, Variant: r.Variant, seq: r.seq, Config: r.Config, resources: r.resources}
	var out []Run
	for rows.Next() {
		a := base
		var ov, cls string
		var s, f int64
		if err := rows.Scan(&a.Attempt, &a.State, &a.BackendID, &ov, &s, &f, &cls, &a.ErrorText); err != nil {
			return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
		}
		a.overrides, _ = decodeConfig(ov)
		a.StartedAt, a.FinishedAt, a.ErrorClass = ts(s), ts(f), Class(cls)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sweep: ledger %s: %w", l.path, err)
	}
	// The current attempt lives in the runs row, unless it was archived
	// (a requeued run that has not started again) or never started.
	if r.Attempt > 0 && r.State != Queued && (len(out) == 0 || out[len(out)-1].Attempt < r.Attempt) {
		a := base
		a.Attempt, a.State, a.BackendID, a.overrides = r.Attempt, r.State, r.BackendID, r.overrides
		a.StartedAt, a.FinishedAt, a.ErrorClass, a.ErrorText = r.StartedAt, r.FinishedAt, r.ErrorClass, r.ErrorText
		out = append(out, a)
	}
	return out, nil
}

func encodeResources(r Resources) string {
	if r == (Resources{}) {
		return "{}"
	}
	m := map[string]any{}
	if r.CPUs != 0 {
		m["cpus"] = r.CPUs
	}
	if r.GPUs != 0 {
		m["gpus"] = r.GPUs
	}
	if r.MemoryMB != 0 {
		m["memory_mb"] = r.MemoryMB
	}
	if r.DiskMB != 0 {
		m["disk_mb"] = r.DiskMB
	}
	if r.Time != 0 {
		m["time_s"] = int64(r.Time / time.Second)
	}
	if r.Partition != "" {
		m["partition"] = r.Partition
	}
	if r.Account != "" {
		m["account"] = r.Account
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func decodeResources(s string) (Resources, error) {
	var j struct {
		CPUs      int    `json:"cpus"`
		GPUs      int    `json:"gpus"`
		MemoryMB  int    `json:"memory_mb"`
		DiskMB    int    `json:"disk_mb"`
		TimeS     int64  `json:"time_s"`
		Partition string `json:"partition"`
		Account   string `json:"account"`
	}
	if s == "" || s == "{}" {
		return Resources{}, nil
	}
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return Resources{}, fmt.Errorf("resources: %w", err)
	}
	return Resources{CPUs: j.CPUs, GPUs: j.GPUs, MemoryMB: j.MemoryMB, DiskMB: j.DiskMB, Time: time.Duration(j.TimeS) * time.Second, Partition: j.Partition, Account: j.Account}, nil
}
