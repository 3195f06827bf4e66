package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrors: the dashboard returns no Go errors; its failures are HTTP
// responses. Each is provoked here: a run or path that does not exist is
// 404, a ledger that cannot be read is 500 with a body saying so (and
// naming the ledger's own error once), and the pages work otherwise.
func TestErrors(t *testing.T) {
	l, id := queuedLedger(t, "name: e\ngrid:\n  - {key: lr, values: [0.1, 1]}\n")
	srv := httptest.NewServer(New(l, Options{}))
	defer srv.Close()
	closed, _ := queuedLedger(t, "name: c\ngrid:\n  - {key: lr, values: [1]}\n")
	closed.Close()
	broken := httptest.NewServer(New(closed, Options{}))
	defer broken.Close()
	tests := []struct {
		name string
		url  string
		code int
		body string // a string the body must hold
	}{
		{"overview", srv.URL + "/", 200, "queued 2"},
		{"run", srv.URL + "/run/" + id, 200, "lr"},
		{"unknown run", srv.URL + "/run/nope", 404, "not found"},
		{"unknown path", srv.URL + "/ledger.db", 404, "not found"},
		{"POST", srv.URL + "/", 405, ""},
		{"overview of an unreadable ledger", broken.URL + "/", 500, "reading the ledger: "},
		{"run of an unreadable ledger", broken.URL + "/run/" + id, 500, "reading the ledger: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodGet
			if tc.name == "POST" {
				method = http.MethodPost
			}
			req, _ := http.NewRequest(method, tc.url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) {
				t.Errorf("%d %.200q, want %d with %q", resp.StatusCode, b, tc.code, tc.body)
			}
			if tc.code == 500 && strings.Count(string(b), "sweep: ") != 1 {
				t.Errorf("body %q does not carry the ledger's error, prefixed once", b)
			}
		})
	}
}
