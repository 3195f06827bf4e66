package dashboard

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/cputime"
)

// BenchmarkDashboard serves the overview and a run page of a finished
// 10,000-run sweep (20 epochs of two series per run, 400,000 values),
// generated through a controller in the setup (about half a minute):
//
//	go test -run '^$' -bench Dashboard -benchtime 10x ./sweep/dashboard/
//
// overview/cold builds a new handler for every request, so each reads the
// whole ledger, as the first request after a change does; overview and run
// are what later requests cost. run/cold reads the whole ledger too, for
// the run's result metrics, which the ledger's read API gives only with
// every run's summary. Each reports the page's size and the CPU
// time per request, which a busy machine inflates less than the wall
// time.
func BenchmarkDashboard(b *testing.B) {
	const runs = 10_000
	l := bigSweep(b, b.TempDir(), runs, 20)
	ctx := context.Background()
	all, err := l.Runs(ctx)
	if err != nil || len(all) != runs {
		b.Fatalf("%d runs, %v", len(all), err)
	}
	id := all[runs/2].ID
	serve := func(b *testing.B, newHandler bool, path string) {
		h := New(l, Options{Metric: "val_loss"})
		get := func() *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
			if rec.Code != 200 {
				b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
			return rec
		}
		if !newHandler {
			// A read of the ledger that has not changed since is reused
			// only once its files have been quiet for quietFor.
			time.Sleep(quietFor)
			get()
		}
		var size int
		b.ReportAllocs()
		c0, _ := cputime.Self()
		for b.Loop() {
			if newHandler {
				h = New(l, Options{Metric: "val_loss"})
			}
			size = get().Body.Len()
		}
		c1, ok := cputime.Self()
		b.ReportMetric(float64(size), "B/page")
		if ok {
			b.ReportMetric(float64((c1-c0)/time.Microsecond)/1e3/float64(b.N), "cpu-ms/op")
		}
	}
	b.Run("overview/cold", func(b *testing.B) { serve(b, true, "/") })
	b.Run("overview", func(b *testing.B) { serve(b, false, "/") })
	b.Run("overview/page=50,sort=lr", func(b *testing.B) { serve(b, false, "/?sort=lr&desc=1&page=50") })
	b.Run("run", func(b *testing.B) { serve(b, false, "/run/"+id) })
	b.Run("run/cold", func(b *testing.B) { serve(b, true, "/run/"+id) })
}
