package dashboard

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestManyRuns: with more runs than the page shows in full, every part
// that is cut says how much it shows of how many (issue 26: 4,307 of
// 10,000 curves under the title "every run (4307)"), pages of the runs
// table follow one another, and the page stays small.
func TestManyRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 600-run sweep")
	}
	const n = 600
	l := bigSweep(t, t.TempDir(), n, 8)
	runs, err := l.Summaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var failed, streamed int
	for _, r := range runs {
		if r.State == "failed" {
			failed++
		}
		if _, ok := r.Latest["val_loss"]; ok {
			streamed++
		}
	}
	srv := httptest.NewServer(New(l, Options{Metric: "val_loss"}))
	defer srv.Close()
	code, body := get(t, srv.URL+"/")
	if code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	for _, want := range []string{
		fmt.Sprintf("Runs 1–100 of %d", n),
		"page 1 of 6",
		fmt.Sprintf("val_loss of the %d best of %d runs that streamed it", maxCurves, streamed),
		fmt.Sprintf("the %d most recent of %d", maxFailures, failed),
		fmt.Sprintf("lr against val_loss: %d runs in bins", n),
		fmt.Sprintf("final val_loss of %d runs", n),
		"the sweep has finished, so this page no longer refreshes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("a finished sweep's overview refreshes")
	}
	if got := strings.Count(body, `<tr class="run`); got != pageSize {
		t.Errorf("%d rows, want %d", got, pageSize)
	}
	if got := strings.Count(body, "<polyline"); got != maxCurves {
		t.Errorf("%d curves drawn, want %d", got, maxCurves)
	}
	if got := strings.Count(body, "<details"); got != maxFailures {
		t.Errorf("%d failures shown, want %d", got, maxFailures)
	}
	// Every run appears once over the pages, sorted by lr.
	seen := map[string]bool{}
	prev := math.Inf(-1)
	rowRE := regexp.MustCompile(`<tr class="run[^"]*"[^>]*><td>.*?href="run/([0-9a-f]+)".*?</tr>`)
	for page := 1; page <= 6; page++ {
		_, b := get(t, srv.URL+"/?sort=lr&page="+strconv.Itoa(page))
		rows := rowRE.FindAllStringSubmatch(b, -1)
		if want := min(pageSize, n-(page-1)*pageSize); len(rows) != want {
			t.Fatalf("page %d: %d rows, want %d", page, len(rows), want)
		}
		for _, r := range rows {
			seen[r[1]] = true
		}
		if page == 6 && strings.Contains(b, "next →") {
			t.Error("the last page links to a next one")
		}
		lrs := regexp.MustCompile(`<td class="r">(0\.[0-9e.-]+|1)</td><td>(?:sgd|adamw)</td>`).FindAllStringSubmatch(b, -1)
		for _, m := range lrs {
			v, _ := strconv.ParseFloat(m[1], 64)
			if v < prev {
				t.Fatalf("page %d: lr %v after %v", page, v, prev)
			}
			prev = v
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct runs over the pages, want %d", len(seen), n)
	}
	if len(body) > 400<<10 {
		t.Errorf("overview of %d runs is %d bytes", n, len(body))
	}
}

// TestConcurrentRequests: many requests at once, for the overview, its
// pages and run pages, each get a complete page (issue 26: concurrent
// requests returned 200 with empty sections).
func TestConcurrentRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 300-run sweep")
	}
	const n = 300
	l := bigSweep(t, t.TempDir(), n, 6)
	all, err := l.Runs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(l, Options{Metric: "val_loss"}))
	defer srv.Close()
	const workers, each = 32, 4
	state := map[string]string{}
	for _, r := range all {
		state["/run/"+r.ID] = string(r.State)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, workers*each)
	for i := range paths {
		switch i % 3 {
		case 0:
			paths[i] = "/"
		case 1:
			paths[i] = "/?sort=wd&page=" + strconv.Itoa(1+rng.IntN(3))
		default:
			paths[i] = "/run/" + all[rng.IntN(n)].ID
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(paths))
	for w := range workers {
		wg.Go(func() {
			for _, p := range paths[w*each : (w+1)*each] {
				resp, err := http.Get(srv.URL + p)
				if err != nil {
					errs <- err.Error()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body := string(b)
				if resp.StatusCode != 200 {
					errs <- fmt.Sprintf("GET %s: %d %.100s", p, resp.StatusCode, body)
					continue
				}
				var want []string
				if strings.HasPrefix(p, "/run/") {
					want = []string{"<svg", `id="attempts"`}
					if state[p] == "completed" {
						want = append(want, "result: val_loss")
					} else {
						want = append(want, "<h2>Log</h2>", "loss diverged")
					}
				} else {
					want = []string{"<polyline", "Runs ", "<svg", "lr against val_loss", "Failed runs"}
				}
				for _, w := range want {
					if !strings.Contains(body, w) {
						errs <- fmt.Sprintf("GET %s: 200 without %q", p, w)
					}
				}
				if !strings.HasPrefix(p, "/run/") && strings.Count(body, `<tr class="run`) != pageSize {
					errs <- fmt.Sprintf("GET %s: %d rows", p, strings.Count(body, `<tr class="run`))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
