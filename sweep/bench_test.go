package sweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/cputime"
)

var benchSizes = []int{1_000, 10_000}

func benchName(n int) string { return fmt.Sprintf("n=%.0e", float64(n)) }

// BenchmarkTransitions enqueues n runs (one transaction) and drives each
// through queued→running→completed, every transition its own transaction,
// into a fresh ledger. The target: n=1e4 under 3 s. (The controller
// also records the backend id in a third transaction, measured in
// BenchmarkControllerOverhead.)
func BenchmarkTransitions(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(benchName(n), func(b *testing.B) {
			ctx := context.Background()
			pts, _ := gridSpec("bench", n, nil).Expand()
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				l, err := OpenLedger(filepath.Join(b.TempDir(), "l.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c0 := cpuTime()
				if _, err := l.Enqueue(ctx, nil, slices.Values(pts)); err != nil {
					b.Fatal(err)
				}
				for _, p := range pts {
					if _, err := l.start(ctx, p.ID, "x"); err != nil {
						b.Fatal(err)
					}
					if err := l.complete(ctx, p.ID); err != nil {
						b.Fatal(err)
					}
				}
				cpu += cpuTime() - c0
				b.StopTimer()
				l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/run")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/run")
		})
	}
}

// BenchmarkControllerOverhead runs n no-op in-process runs through the
// controller with the local backend (4 in flight); µs/run is the
// controller's cost per run (ledger transactions, result file write and
// read, scheduling). The target: under 5 ms per run.
func BenchmarkControllerOverhead(b *testing.B) {
	for _, n := range []int{100, 1_000} {
		b.Run(benchName(n), func(b *testing.B) {
			ctx := context.Background()
			pts, _ := gridSpec("bench", n, nil).Expand()
			fn := func(context.Context, Task) (*Result, error) {
				return &Result{Metrics: map[string]float64{"x": 1}}, nil
			}
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				l, err := OpenLedger(filepath.Join(dir, "l.db"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Enqueue(ctx, nil, slices.Values(pts)); err != nil {
					b.Fatal(err)
				}
				c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: dir, Parallel: 4, PollInterval: time.Millisecond}
				b.StartTimer()
				c0 := cpuTime()
				sum, err := c.Run(ctx)
				if err != nil || sum.Completed != n {
					b.Fatalf("%+v %v", sum, err)
				}
				cpu += cpuTime() - c0
				b.StopTimer()
				l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/run")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/run")
		})
	}
}

// benchCurveCols are the study's curve-metric columns
// (examples/losssweep/internal/curves).
var benchCurveCols = []string{"r_squared", "knee_epoch", "burn_in_loss", "alpha_early", "alpha_full", "best_val_ce",
	"best_val_epoch", "powerlaw_a", "powerlaw_b", "burn_in_epoch"}

// benchDataset is n rows shaped like the study's export: 4 identity
// columns, 7 parameters, 10 curve metrics and 2 extra metrics, with a few
// NaN and Inf cells.
func benchDataset(n int) *Dataset {
	rng := rand.New(rand.NewPCG(1, 2))
	d := &Dataset{Columns: []Column{{Name: "run_id"}, {Name: "slug"}, {Name: "variant"}, {Name: "attempt", Kind: Int},
		{Name: "lr", Kind: Float}, {Name: "weight_decay", Kind: Float}, {Name: "seed", Kind: Int}, {Name: "optimizer"},
		{Name: "hidden", Kind: Int}, {Name: "norm"}, {Name: "batch_size", Kind: Int}}}
	for _, c := range benchCurveCols {
		d.Columns = append(d.Columns, Column{Name: c, Kind: Float})
	}
	for _, c := range []string{"final_val_loss", "val_accuracy"} {
		d.Columns = append(d.Columns, Column{Name: c, Kind: Float})
	}
	for i := range n {
		row := []any{fmt.Sprintf("%016x", rng.Uint64()), fmt.Sprintf("base-lr0.1-wd1e-3-s%d", i), "base", int64(1),
			0.1, 1e-3, int64(i), "sgd", int64(32), "batch", int64(32)}
		for range len(benchCurveCols) + 2 {
			x := rng.NormFloat64()
			switch rng.IntN(50) {
			case 0:
				x = math.NaN()
			case 1:
				x = math.Inf(1)
			}
			row = append(row, x)
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

// BenchmarkExport writes <name>.csv and <name>_metadata.json for n runs
// (trajectory files excluded: one file per run). Target: n=1e4 under 1 s.
func BenchmarkExport(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(benchName(n), func(b *testing.B) {
			d := benchDataset(n)
			dir := b.TempDir()
			now := time.Unix(0, 0)
			b.ReportAllocs()
			for b.Loop() {
				if err := Export(context.Background(), dir, "bench", d, ExportConfig{Now: now}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStatus computes the status table of an n-run ledger in mixed
// states. Target: n=1e4 under 200 ms.
func BenchmarkStatus(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(benchName(n), func(b *testing.B) {
			ctx := context.Background()
			l, err := OpenLedger(filepath.Join(b.TempDir(), "l.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			pts, _ := gridSpec("bench", n, nil).Expand()
			if _, err := l.Enqueue(ctx, nil, slices.Values(pts)); err != nil {
				b.Fatal(err)
			}
			// 70% completed, 10% failed, 10% running, 10% queued.
			for i, p := range pts[:n*9/10] {
				l.start(ctx, p.ID, "x")
				switch {
				case i < n*7/10:
					l.complete(ctx, p.ID)
				case i < n*8/10:
					l.fail(ctx, p.ID, ClassUnknown, "x")
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				st, err := l.Status(ctx, 8)
				if err != nil || st.Total != n {
					b.Fatal(err)
				}
				if err := st.WriteTable(discard{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// cpuTime is this process's CPU time so far (0 where the system cannot tell).
func cpuTime() time.Duration {
	d, _ := cputime.Self()
	return d
}

// peakRSSMiB is this process's peak resident set size in MiB (0 where the
// system cannot tell).
func peakRSSMiB() float64 {
	b, _ := cputime.PeakRSS()
	return float64(b) / (1 << 20)
}

// bigLedger builds, once per process, a ledger of n runs shaped like a
// finished large sweep: 70% completed, 10% failed, 10% pruned, 5% running,
// 5% queued; every started run with 10 steps of "loss" and "acc" and two
// scalar metrics. It is built with bulk statements (the transitions one by
// one are BenchmarkTransitions' subject).
func bigLedger(b *testing.B, n int) *Ledger {
	b.Helper()
	ctx := context.Background()
	l, err := OpenLedger(filepath.Join(b.TempDir(), "big.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	// Two axes (n/100 seeds × 100 learning rates): a spec's validation
	// compares the values of one axis pairwise.
	s := gridSpec("big", n/100, map[string]Value{"opt": strValue("sgd")})
	var lrs []Value
	for i := range 100 {
		lrs = append(lrs, floatValue(float64(i+1)/1000))
	}
	s.Axes = append(s.Axes, Axis{Key: "lr", Values: lrs})
	seq, _, err := s.Points()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := l.Enqueue(ctx, s, seq); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixNano()
	for _, q := range []string{
		`UPDATE runs SET attempt = 1, started_at = ?1 - 3600e9, finished_at = ?1 - (seq % 600) * 1e9, heartbeat_at = ?1,
			state = CASE WHEN seq % 20 < 14 THEN 'completed' WHEN seq % 20 < 16 THEN 'failed' WHEN seq % 20 < 18 THEN 'pruned' WHEN seq % 20 < 19 THEN 'running' ELSE 'queued' END`,
		`UPDATE runs SET attempt = 0, started_at = 0, finished_at = 0 WHERE state = 'queued'`,
		`UPDATE runs SET finished_at = 0 WHERE state = 'running'`,
		`UPDATE runs SET error_class = 'unknown', error_text = 'exit 3' WHERE state = 'failed'`,
	} {
		if _, err := l.db.ExecContext(ctx, q, now); err != nil {
			b.Fatal(err)
		}
	}
	var steps []string
	for k := 1; k <= 10; k++ {
		steps = append(steps, fmt.Sprintf("(%d)", k))
	}
	if _, err := l.db.ExecContext(ctx, `INSERT INTO metrics(run_id, attempt, series, step, value, time)
		SELECT r.id, 1, s.series, k.column1, 1.0 / k.column1 + (r.seq % 97) / 1000.0, 1.7e9 + r.seq + k.column1
		FROM runs r, (VALUES `+strings.Join(steps, ",")+`) k, (SELECT 'loss' AS series UNION ALL SELECT 'acc') s
		WHERE r.state != 'queued'`); err != nil {
		b.Fatal(err)
	}
	if _, err := l.db.ExecContext(ctx, `INSERT INTO scalars(run_id, attempt, name, value)
		SELECT r.id, 1, s.name, (r.seq % 89) / 100.0 FROM runs r, (SELECT 'best' AS name UNION ALL SELECT 'final') s
		WHERE r.state = 'completed'`); err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkBigLedger times Status and Summaries on a generated ledger of
// 10⁵ runs (2·10⁶ metric values). Target: each under 1 s.
func BenchmarkBigLedger(b *testing.B) {
	const n = 100_000
	l := bigLedger(b, n)
	ctx := context.Background()
	b.Run("Status/n=1e5", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			st, err := l.Status(ctx, 64)
			if err != nil || st.Total != n {
				b.Fatal(st.Total, err)
			}
		}
	})
	b.Run("Summaries/n=1e5", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rs, err := l.Summaries(ctx)
			if err != nil || len(rs) != n {
				b.Fatal(len(rs), err)
			}
		}
	})
}
