package dashboard_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/dashboard"
)

// New serves a ledger's runs; here a sweep of three learning rates that
// no controller has started yet. A real dashboard opens the ledger with
// sweep.OpenLedgerReadOnly while the controller runs, and listens with
// http.ListenAndServe("127.0.0.1:8080", h).
func ExampleNew() {
	dir, err := os.MkdirTemp("", "dashboard")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	l, err := sweep.OpenLedger(filepath.Join(dir, "ledger.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	spec, err := sweep.LoadSpec(strings.NewReader("name: lr\ngrid:\n  - {key: lr, values: [0.001, 0.01, 0.1]}\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	seq, _, err := spec.Points()
	if err != nil {
		fmt.Println(err)
		return
	}
	var pts []sweep.Point
	for p := range seq {
		pts = append(pts, p)
	}
	if _, err := l.Enqueue(context.Background(), spec, slices.Values(pts)); err != nil {
		fmt.Println(err)
		return
	}

	h := dashboard.New(l, dashboard.Options{Metric: "val_loss", Refresh: -1})
	for _, path := range []string{"/", "/run/nope"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
		title := regexp.MustCompile(`<title>(.*?)</title>`).FindStringSubmatch(rec.Body.String())
		fmt.Print(path, " ", rec.Code)
		if title != nil {
			fmt.Printf(" %q, runs shown: %d", title[1], strings.Count(rec.Body.String(), `<tr class="run`))
		}
		fmt.Println()
	}
	// Output:
	// / 200 "lr", runs shown: 3
	// /run/nope 404
}
