//go:build unix

package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// TestLogNotFollowed: a run's log that a worker replaced by a symbolic
// link (out of the work directory or inside it), a FIFO or a directory is
// not read: the pages say why, show nothing of the target, and a FIFO
// does not hang them (issue 26: the dashboard showed /etc/passwd through
// a symlinked log, and hung on a FIFO).
func TestLogNotFollowed(t *testing.T) {
	l, work, runs := failedSweep(t)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("root:x:0:0:SECRET\n"), 0o644)
	logOf := func(r sweep.Run) string { return filepath.Join(sweep.AttemptDir(work, r.ID, r.Attempt), "log") }
	inside := filepath.Join(work, "inside")
	os.WriteFile(inside, []byte("INSIDE\n"), 0o644)
	replace := []func(p string) error{
		func(p string) error { return os.Symlink(secret, p) },
		func(p string) error { return os.Symlink(inside, p) },
		func(p string) error { return syscall.Mkfifo(p, 0o644) },
		func(p string) error { return os.Mkdir(p, 0o755) },
	}
	for i, r := range runs {
		os.Remove(logOf(r))
		if err := replace[i](logOf(r)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(l, Options{}))
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/", "/run/" + runs[0].ID, "/run/" + runs[1].ID, "/run/" + runs[2].ID, "/run/" + runs[3].ID} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		body := string(b)
		if strings.Contains(body, "SECRET") || strings.Contains(body, "INSIDE") {
			t.Errorf("GET %s shows a file the log links to", path)
		}
		if !strings.Contains(body, "(no log: ") {
			t.Errorf("GET %s does not say why the log is not shown", path)
		}
	}
}
