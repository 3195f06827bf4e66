#!/usr/bin/env python3
"""Side-by-side peer for sweep's benchmarks (bench_test.go).

What a researcher would otherwise write in Python, doing the same work as
the Go benchmarks of the same names:

  Transitions n=1e4  sqlite3 (CPython's C binding), same schema, triggers and
                     statements as sweep/ledger.go, WAL + synchronous=NORMAL,
                     enqueue in one transaction, then queued->running->completed
                     for every run, each transition its own transaction.
  Export n=1e4       pandas DataFrame.to_csv(float_format='%.6f') of a table
                     shaped like sweep's benchDataset + metadata JSON; also the
                     standard library's csv module (ExportCSVModule), which
                     runs where pandas is not installed.
  Status n=1e4       GROUP BY state over a 10,000-run ledger in mixed states.

Run:  python3 sweep/testdata/peer_bench.py
Prints seconds per operation (best of --repeat) and CPU seconds, so the
ratios in docs/losssweep.md can be recomputed on another machine.
"""
import argparse, json, math, os, random, sqlite3, tempfile, time


SCHEMA = """
CREATE TABLE runs(id TEXT PRIMARY KEY, seq INTEGER NOT NULL, slug TEXT NOT NULL, variant TEXT NOT NULL,
  config TEXT NOT NULL, overrides TEXT NOT NULL DEFAULT '{}', priority INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '', state TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,
  backend_id TEXT NOT NULL DEFAULT '', queued_at INTEGER NOT NULL DEFAULT 0, started_at INTEGER NOT NULL DEFAULT 0,
  finished_at INTEGER NOT NULL DEFAULT 0, heartbeat_at INTEGER NOT NULL DEFAULT 0,
  error_class TEXT NOT NULL DEFAULT '', error_text TEXT NOT NULL DEFAULT '', completions INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX runs_queued ON runs(seq) WHERE state = 'queued';
CREATE TABLE attempts(run_id TEXT NOT NULL, n INTEGER NOT NULL, state TEXT NOT NULL, backend_id TEXT NOT NULL DEFAULT '',
  overrides TEXT NOT NULL DEFAULT '{}', started_at INTEGER NOT NULL DEFAULT 0, finished_at INTEGER NOT NULL DEFAULT 0,
  error_class TEXT NOT NULL DEFAULT '', error_text TEXT NOT NULL DEFAULT '', PRIMARY KEY(run_id, n)) WITHOUT ROWID;
CREATE TRIGGER attempt_start AFTER UPDATE OF attempt ON runs WHEN NEW.attempt > OLD.attempt BEGIN
  INSERT OR REPLACE INTO attempts(run_id, n, state, backend_id, overrides, started_at)
  VALUES(NEW.id, NEW.attempt, 'running', NEW.backend_id, NEW.overrides, NEW.started_at);
END;
CREATE TRIGGER attempt_end AFTER UPDATE OF state ON runs WHEN OLD.state = 'running' AND NEW.state IN ('completed', 'failed', 'cancelled') BEGIN
  UPDATE attempts SET state = NEW.state, finished_at = NEW.finished_at, error_class = NEW.error_class, error_text = NEW.error_text
  WHERE run_id = NEW.id AND n = NEW.attempt;
END;
"""


def durable(f):
    """fsync like sweep.Export does (it writes through temp + fsync + rename)."""
    f.flush()
    os.fsync(f.fileno())


def open_ledger(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    return db


def runs(n):
    return [("%016x" % random.getrandbits(64), i, "base-s%d" % i, "base", '{"seed":%d,"variant":"base"}' % i) for i in range(n)]


def transitions(n):
    d = tempfile.mkdtemp()
    db = open_ledger(os.path.join(d, "l.db"))
    rs = runs(n)
    t0, c0 = time.perf_counter(), time.process_time()
    db.execute("BEGIN")
    db.executemany("INSERT OR IGNORE INTO runs(id, seq, slug, variant, config, state, queued_at) VALUES(?,?,?,?,?,'queued',?)",
                   [r + (time.time_ns(),) for r in rs])
    db.execute("COMMIT")
    for r in rs:
        now = time.time_ns()
        cur = db.execute("UPDATE runs SET state='running', attempt=attempt+1, backend_id=?, started_at=?, heartbeat_at=?, finished_at=0, "
                         "error_class='', error_text='' WHERE id=? AND state='queued' RETURNING attempt", ("x", now, now, r[0]))
        assert cur.fetchone() is not None
        cur = db.execute("UPDATE runs SET state='completed', finished_at=?, completions=completions+1 WHERE id=? AND state='running' RETURNING attempt",
                         (time.time_ns(), r[0]))
        assert cur.fetchone() is not None
    return time.perf_counter() - t0, time.process_time() - c0


def export(n):
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(1)
    cols = {"run_id": ["%016x" % random.getrandbits(64) for _ in range(n)], "slug": ["base-lr0.1-wd1e-3-s%d" % i for i in range(n)],
            "variant": ["base"] * n, "attempt": np.ones(n, dtype=np.int64), "lr": np.full(n, 0.1), "wd": np.full(n, 1e-3),
            "seed": np.arange(n), "optimizer": ["sgd"] * n, "hidden": np.full(n, 32), "norm": ["batch"] * n, "batch_size": np.full(n, 32)}
    for c in ["powerlaw_a", "powerlaw_b", "powerlaw_r2", "knee_epoch", "burnin_epoch", "burnin_loss", "slope_early", "slope_burnin_end",
              "best_val_loss", "final_val_loss", "val_accuracy"]:
        x = rng.standard_normal(n)
        k = rng.integers(0, 50, n)
        x[k == 0] = np.nan
        x[k == 1] = np.inf
        cols[c] = x
    df = pd.DataFrame(cols)
    d = tempfile.mkdtemp()
    t0, c0 = time.perf_counter(), time.process_time()
    with open(os.path.join(d, "bench.csv"), "w") as f:
        df.to_csv(f, index=False, float_format="%.6f", na_rep="")
        durable(f)
    meta = {"total_runs": n, "export_date": "1970-01-01T00:00:00Z", "columns": list(df.columns),
            "column_types": {c: str(t) for c, t in df.dtypes.items()}}
    with open(os.path.join(d, "bench_metadata.json"), "w") as f:
        json.dump(meta, f, indent=2)
        durable(f)
    return time.perf_counter() - t0, time.process_time() - c0


def export_stdlib(n):
    """The same table written with the standard library's csv module."""
    import csv
    rng = random.Random(1)
    rows = []
    for i in range(n):
        r = ["%016x" % rng.getrandbits(64), "base-lr0.1-wd1e-3-s%d" % i, "base", 1, 0.1, 1e-3, i, "sgd", 32, "batch", 32]
        for _ in range(11):
            k = rng.randrange(50)
            r.append(math.nan if k == 0 else math.inf if k == 1 else rng.gauss(0, 1))
        rows.append(r)
    cols = ["run_id", "slug", "variant", "attempt", "lr", "wd", "seed", "optimizer", "hidden", "norm", "batch_size",
            "powerlaw_a", "powerlaw_b", "powerlaw_r2", "knee_epoch", "burnin_epoch", "burnin_loss", "slope_early", "slope_burnin_end",
            "best_val_loss", "final_val_loss", "val_accuracy"]

    def fmt(x):
        if isinstance(x, float):
            if math.isnan(x):
                return ""
            if math.isinf(x):
                return "inf" if x > 0 else "-inf"
            return "%.6f" % x
        return x

    d = tempfile.mkdtemp()
    t0, c0 = time.perf_counter(), time.process_time()
    with open(os.path.join(d, "bench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([fmt(x) for x in r])
        durable(f)
    with open(os.path.join(d, "bench_metadata.json"), "w") as f:
        json.dump({"total_runs": n, "export_date": "1970-01-01T00:00:00Z", "columns": cols}, f, indent=2)
        durable(f)
    return time.perf_counter() - t0, time.process_time() - c0


def status(n):
    d = tempfile.mkdtemp()
    db = open_ledger(os.path.join(d, "l.db"))
    rs = runs(n)
    states = ["completed"] * (n * 7 // 10) + ["failed"] * (n // 10) + ["running"] * (n // 10)
    states += ["queued"] * (n - len(states))
    db.execute("BEGIN")
    db.executemany("INSERT INTO runs(id, seq, slug, variant, config, state, attempt, started_at, finished_at) VALUES(?,?,?,?,?,?,?,?,?)",
                   [r + (s, 0 if s == "queued" else 1, 1, 2) for r, s in zip(rs, states)])
    db.execute("COMMIT")
    t0, c0 = time.perf_counter(), time.process_time()
    rows = db.execute("SELECT state, count(*), sum(attempt > 0), avg(CASE WHEN state='completed' THEN finished_at - started_at END) "
                      "FROM runs GROUP BY state").fetchall()
    stuck = db.execute("SELECT count(*) FROM runs WHERE state='running' AND started_at < ?", (0,)).fetchone()
    assert sum(r[1] for r in rows) == n and stuck is not None
    return time.perf_counter() - t0, time.process_time() - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    random.seed(1)
    try:
        import numpy, pandas
        versions = "numpy %s, pandas %s" % (numpy.__version__, pandas.__version__)
    except ImportError:
        versions = "numpy/pandas not installed: Export skipped"
    print("python %s, sqlite %s, %s" % (".".join(map(str, __import__("sys").version_info[:3])), sqlite3.sqlite_version, versions))
    for name, f in [("Transitions", transitions), ("Export", export), ("ExportCSVModule", export_stdlib), ("Status", status)]:
        if name == "Export" and "skipped" in versions:
            continue
        res = [f(a.n) for _ in range(a.repeat)]
        wall = min(r[0] for r in res)
        cpu = min(r[1] for r in res)
        print("%-12s n=%d  best wall %.4f s  best cpu %.4f s  (%.1f µs/run wall)" % (name, a.n, wall, cpu, 1e6 * wall / a.n))


if __name__ == "__main__":
    main()
