package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/divergence"
	"github.com/crosscluster/crosscluster/internal/testenv"
)

// TestMain lets the test binary be a box: localBoxes' run script calls
// os.Executable() with -box-variant.
func TestMain(m *testing.M) {
	if os.Getenv("TOLERANCE_TEST_MAIN") == "1" { // TestInterrupt: be the program
		main()
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "-box-variant" {
		fs := flag.NewFlagSet("box", flag.ExitOnError)
		v := fs.Int("box-variant", 0, "")
		steps := fs.Int("steps", 0, "")
		out := fs.String("box-out", "", "")
		fs.Parse(os.Args[1:])
		if err := writeBox(*out, *steps, 10, *v); err != nil {
			fmt.Fprintln(os.Stderr, "box:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestVerdict: the program's verdict fails (and it exits 1) when any row
// under a bound does not pass, naming each with why; without a bound no
// row fails it (issues 12 and 15: the CLI exited 0 when rows FAILed).
func TestVerdict(t *testing.T) {
	c := config{tol: 1e-6, rtol: 1e-7, allclose: true}
	pass := divergence.Row{A: "a", B: "b", Key: "z", Max: 1e-9, Pass: true}
	over := divergence.Row{A: "a", B: "c", Key: "z", Max: 1e-3, MaxStep: 4}
	missing := divergence.Row{A: "b", B: "c", Key: "w", Max: math.NaN(), Warning: `c: key "w" missing`}
	elements := divergence.Row{A: "a", B: "c", Key: "n", Max: 1e-9, Elements: 12, Mismatched: 2, MaxAbs: 1, MaxAbsAt: []int{1, 0}}
	if err := verdict([]divergence.Row{pass}, c); err != nil {
		t.Errorf("all rows pass: %v", err)
	}
	if err := verdict([]divergence.Row{over}, config{tol: -1}); err != nil {
		t.Errorf("no bound: %v", err)
	}
	err := verdict([]divergence.Row{pass, over, missing, elements}, c)
	for _, want := range []string{"3 of 4 rows FAIL", "a vs c z (max 1.000000e-03 at step 4 > tol 1.000000e-06)", `key "w" missing`,
		"a vs c n (2 of 12 elements outside rtol=1e-07, atol=0; largest |a-b| 1.000000e+00 at [1 0])"} {
		if !errors.Is(err, errFail) || !strings.Contains(err.Error(), want) {
			t.Errorf("verdict = %v; want it to say %q", err, want)
		}
	}
}

type hostRecord struct {
	Host, Status, Launch, Commit string
}

func readHosts(t *testing.T, out string) []hostRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "hosts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hs []hostRecord
	if err := json.Unmarshal(b, &hs); err != nil {
		t.Fatal(err)
	}
	return hs
}

func head(t *testing.T, dir string) string {
	t.Helper()
	b, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestSyncByDefault: the boxes are synced to their origin's HEAD before
// the launch unless -no-sync, and hosts.json records the commit each box
// ran, synced or not (issue 15 item 8).
func TestSyncByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	for _, tool := range []string{"git", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skip(t, tool+" not installed")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := config{out: t.TempDir(), stem: "t", normName: "L2", tol: 1e-3, allclose: true, rtol: 1e-7,
		steps: 300, budget: time.Minute}
	if err := run(ctx, c); err != nil {
		t.Fatal(err)
	}
	origin := filepath.Join(c.out, "boxes", "origin")
	first := head(t, origin)
	check := func(want string) {
		t.Helper()
		hs := readHosts(t, c.out)
		if len(hs) != 3 {
			t.Fatalf("hosts.json: %+v", hs)
		}
		for _, h := range hs {
			if h.Status != "FINISHED" || h.Commit != want || !strings.HasPrefix(h.Launch, "t."+h.Host+".") {
				t.Errorf("%+v, want FINISHED at %s", h, want)
			}
		}
	}
	check(first)
	// A new run script is a new commit of the origin; without the sync the
	// boxes run the old one, and say so.
	c.steps, c.noSync = 200, true
	if err := run(ctx, c); err != nil {
		t.Fatal(err)
	}
	if second := head(t, origin); second == first {
		t.Fatal("the origin did not get a new commit")
	}
	check(first)
	c.noSync = false
	if err := run(ctx, c); err != nil {
		t.Fatal(err)
	}
	check(head(t, origin))
}

// writeArchive writes an .npz with one float64 key.
func writeArchive(t *testing.T, path, key string, shape []int, x []float64) {
	t.Helper()
	var b bytes.Buffer
	w := divergence.NewWriter(&b)
	if err := w.Add(key, shape, x); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hostsFile writes a registry of local hosts, one per command, each in its
// own directory under root, and returns its path.
func hostsFile(t *testing.T, root string, commands map[string]string) string {
	t.Helper()
	var y strings.Builder
	y.WriteString("hosts:\n")
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&y, "  - name: %s\n    repo: %s\n    command: %q\n    output: out\n", name, dir, commands[name])
	}
	p := filepath.Join(root, "hosts.yaml")
	if err := os.WriteFile(p, []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func needLaunch(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("launches processes")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		testenv.Skip(t, "setsid not installed")
	}
}

// TestFailedHostFails: a host whose run did not finish fails the verdict,
// naming it, even when the hosts that finished agree; -allow-failed-hosts
// judges the others (review 2 item 3: exit 0 with host c FAILED).
func TestFailedHostFails(t *testing.T) {
	needLaunch(t)
	root := t.TempDir()
	tmpl := filepath.Join(root, "template.npz")
	writeArchive(t, tmpl, "z_b", []int{5, 2}, make([]float64, 10))
	cp := "mkdir -p out && cp " + tmpl + " out/{host}.npz"
	hosts := hostsFile(t, root, map[string]string{"a": cp, "b": cp, "c": "exit 3"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := config{out: t.TempDir(), hostsFile: hosts, noSync: true, stem: "t", normName: "L2", tol: 1e-9,
		budget: 30 * time.Second}
	err := run(ctx, c)
	if !errors.Is(err, errHosts) || errors.Is(err, errFail) || !strings.Contains(err.Error(), "1 of 3: c FAILED") ||
		!strings.Contains(err.Error(), "exited with status 3") {
		t.Errorf("run = %v; want errHosts naming c and its exit status, no failing row", err)
	}
	c.allowFailed = true
	if err := run(ctx, c); err != nil {
		t.Errorf("with -allow-failed-hosts: %v", err)
	}
}

// TestSeriesOutputs: pairs whose z_b series have different lengths (hosts
// that ran different step counts) each get their own length in the CSV
// and the plot (review 2 item 4: index out of range); a PNG that is not
// written is not listed, and no stale one is left (review 2 item 15).
func TestSeriesOutputs(t *testing.T) {
	dir := t.TempDir()
	ramp := func(n int, eps float64) []float64 {
		x := make([]float64, 2*n)
		for i := range x {
			x[i] = 1 + eps*float64(i)
		}
		return x
	}
	var runs []divergence.NamedRun
	for _, r := range []struct {
		name  string
		steps int
		eps   float64
	}{{"a", 5, 0}, {"b", 5, 1e-9}, {"c", 3, 0}, {"d", 3, 2e-9}} {
		p := filepath.Join(dir, r.name+".npz")
		writeArchive(t, p, "z_b", []int{r.steps, 2}, ramp(r.steps, r.eps))
		runs = append(runs, divergence.NamedRun{Name: r.name, Path: p})
	}
	out := t.TempDir()
	c := config{tol: 1e-6, normName: "L2"}
	rowsOf := func(runs []divergence.NamedRun) []divergence.Row {
		rows, err := divergence.Compare(context.Background(), runs, nil, divergence.Options{Tolerance: map[string]float64{"*": c.tol}})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	wrote, err := seriesOutputs(context.Background(), out, runs, rowsOf(runs), c)
	if err != nil || !slices.Equal(wrote, []string{"series_z_b.csv", "divergence_z_b.png"}) {
		t.Fatalf("seriesOutputs: %v, %v", wrote, err)
	}
	b, err := os.ReadFile(filepath.Join(out, "series_z_b.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 || lines[0] != "step,a vs b,c vs d" {
		t.Fatalf("csv:\n%s", b)
	}
	for k, line := range lines[1:] {
		f := strings.Split(line, ",")
		if len(f) != 3 || f[0] != fmt.Sprint(k) || f[1] == "" || (f[2] == "") != (k >= 3) {
			t.Errorf("csv line %d: %q", k+1, line)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "divergence_z_b.png")); err != nil || st.Size() == 0 {
		t.Errorf("png: %v", err)
	}
	// Equal runs: the table, no figure, and the old figure is gone.
	a2 := filepath.Join(dir, "a2.npz")
	writeArchive(t, a2, "z_b", []int{5, 2}, ramp(5, 0))
	eq := []divergence.NamedRun{runs[0], {Name: "a2", Path: a2}}
	wrote, err = seriesOutputs(context.Background(), out, eq, rowsOf(eq), c)
	if err != nil || !slices.Equal(wrote, []string{"series_z_b.csv"}) {
		t.Errorf("equal runs: %v, %v", wrote, err)
	}
	if _, err := os.Stat(filepath.Join(out, "divergence_z_b.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale png left: %v", err)
	}
}
