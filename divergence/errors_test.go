package divergence

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/errtest"
	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/crosscluster/crosscluster/internal/testenv"
)

// TestErrors provokes each error the documentation of divergence promises,
// with bad files, registries, checkouts and runs through the exported API,
// and checks that errors.Is names its sentinel, a *HostError names the
// host, and the message says "divergence: " once, at its start, with the
// place (file, key, host). Replicate's error gathers the other hosts'
// errors and must still say it once.
func TestErrors(t *testing.T) {
	for _, tool := range []string{"git", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skipf(t, "%s not installed", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	writeRun(t, path("a.npz"), 0)
	var buf bytes.Buffer
	z := npy.NewZipWriter(&buf, false)
	z.Add("z_b", []int{3, 10}, make([]float64, 30)) // a's z_b is 10 × 3
	z.Close()
	os.WriteFile(path("b.npz"), buf.Bytes(), 0o644)
	os.WriteFile(path("notes.npz"), []byte("not an archive"), 0o644)
	// cut.npz is a sound zip whose z_b.npy holds 10 of the 30 values its
	// header promises.
	var member, cut bytes.Buffer
	npy.Write(&member, []int{3, 10}, make([]float64, 30))
	zw := zip.NewWriter(&cut)
	w, _ := zw.Create("z_b.npy")
	w.Write(member.Bytes()[:member.Len()-160])
	zw.Close()
	os.WriteFile(path("cut.npz"), cut.Bytes(), 0o644)
	open := func(t *testing.T, name string) *Run {
		r, err := Open(path(name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	loadHosts := func(doc string) func(*testing.T) error {
		return func(*testing.T) error { _, err := LoadHosts(strings.NewReader(doc)); return err }
	}

	// A checkout with an uncommitted change, for Sync.
	repo := path("repo")
	os.Mkdir(repo, 0o755)
	git(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "model.txt"), []byte("v1\n"), 0o644)
	git(t, repo, "add", "model.txt")
	git(t, repo, "commit", "-q", "-m", "v1")
	os.WriteFile(filepath.Join(repo, "model.txt"), []byte("v2\n"), 0o644)

	// One replication: a run that fails and one that writes no archive.
	boxes := []box{
		{"fails", "echo boom >&2; exit 1", func(*testing.T, string) {}, statusFailed},
		{"empty", "exit 0", func(*testing.T, string) {}, statusFailed},
	}
	hosts := makeBoxes(t, boxes, func(name, dir string) Host { return Host{Name: name, Repo: dir} })
	out, repErr := Replicate(ctx, hosts, ReplicateConfig{Stem: "e1", Dest: t.TempDir(), poll: 20 * time.Millisecond, Budget: 30 * time.Second})
	if len(out) != 2 {
		t.Fatalf("Replicate: %d outcomes, %v", len(out), repErr)
	}

	tests := []struct {
		name  string
		err   func(*testing.T) error
		is    error
		host  string // the *HostError's Host; "" when none is promised
		place []string
	}{
		{"Open: missing file", func(*testing.T) error { _, err := Open(path("none.npz")); return err }, fs.ErrNotExist, "", []string{"none.npz"}},
		{"Open: not an archive", func(*testing.T) error { _, err := Open(path("notes.npz")); return err }, ErrFormat, "", []string{"notes.npz"}},
		{"Array: no such key", func(t *testing.T) error { _, err := open(t, "a.npz").array("omega_c"); return err }, ErrKey, "", []string{"a.npz", `"omega_c"`}},
		{"Array: member cut short", func(t *testing.T) error { _, err := open(t, "cut.npz").array("z_b"); return err }, ErrFormat, "", []string{"cut.npz"}},
		{"Series: no such key", func(t *testing.T) error {
			_, err := Series(open(t, "a.npz"), open(t, "b.npz"), "omega_b", L2)
			return err
		}, ErrKey, "", []string{"b.npz", `"omega_b"`}},
		{"Series: shapes differ", func(t *testing.T) error {
			_, err := Series(open(t, "a.npz"), open(t, "b.npz"), "z_b", L2)
			return err
		}, ErrShape, "", []string{`key "z_b"`, "a.npz [10 3]", "b.npz [3 10]"}},
		{"Series: member cut short", func(t *testing.T) error {
			_, err := Series(open(t, "b.npz"), open(t, "cut.npz"), "z_b", LInf)
			return err
		}, ErrFormat, "", []string{"cut.npz", `"z_b"`}},
		{"LoadHosts: empty", loadHosts(""), ErrHosts, "", []string{"empty document"}},
		{"LoadHosts: not YAML", loadHosts("hosts: [\n"), ErrHosts, "", nil},
		{"LoadHosts: unknown field", loadHosts("hosts:\n  - {name: a, repo: r, command: c, comand: x}\n"), ErrHosts, "", []string{"comand"}},
		{"LoadHosts: duplicate", loadHosts("hosts:\n  - {name: a, repo: r, command: c}\n  - {name: a, repo: r, command: c}\n"), ErrHosts, "", []string{`host 2 ("a")`}},
		{"LoadHosts: no command", loadHosts("hosts:\n  - {name: a, repo: r}\n"), ErrHosts, "", []string{`host 1 ("a")`, "command"}},
		{"Head: not a checkout", func(*testing.T) error { _, err := head(ctx, dir); return err }, nil, "", []string{dir}},
		{"Sync: dirty checkout", func(*testing.T) error {
			_, err := syncHosts(ctx, []Host{{Name: "box", Repo: repo, Command: "true"}}, "HEAD", false)
			return err
		}, ErrDirty, "box", []string{"host box", "model.txt"}},
		{"Sync: no checkout", func(*testing.T) error {
			_, err := syncHosts(ctx, []Host{{Name: "box", Repo: path("none"), Command: "true"}}, "HEAD", false)
			return err
		}, ErrHost, "box", []string{"host box"}},
		{"Replicate: too few finished", func(*testing.T) error { return repErr }, ErrTooFew, "", []string{"fails FAILED", "empty FAILED"}},
		{"Replicate: a run that fails", func(*testing.T) error { return out[0].Err }, nil, "", []string{"fails", "status 1"}},
		{"Replicate: no archive", func(*testing.T) error { return out[1].Err }, ErrNoArchive, "empty", []string{"host empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
			var he *HostError
			switch {
			case tc.host == "" && errors.As(err, &he):
				t.Errorf("%v is a *HostError; none is documented", err)
			case tc.host != "" && (!errors.As(err, &he) || he.Host != tc.host):
				t.Errorf("%v is not a *HostError for %q", err, tc.host)
			}
			errtest.Check(t, err, "divergence: ", tc.place...)
		})
	}
}
