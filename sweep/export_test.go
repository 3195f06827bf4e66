package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestExportFormat(t *testing.T) {
	d := &Dataset{
		Columns: []Column{{"slug", String}, {"n", Int}, {"x", Float}, {"ok", Bool}},
		Rows: [][]any{
			{"a", int64(1), 0.5, true},
			{"b,c", int64(-2), math.NaN(), false},
			{"d", int64(3), math.Inf(1), true},
			{"e", int64(4), math.Inf(-1), nil},
		},
	}
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	curves := map[string]map[string][]float64{"a": {"epoch": {1, 2}, "val_loss": {0.9, math.NaN()}}}
	if err := Export(dir, "study", d, curves, now); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "study.csv"))
	want := "slug,n,x,ok\na,1,0.500000,true\n\"b,c\",-2,,false\nd,3,inf,true\ne,4,-inf,\n"
	if string(b) != want {
		t.Errorf("csv:\n%s\nwant:\n%s", b, want)
	}
	var md Metadata
	mb, _ := os.ReadFile(filepath.Join(dir, "study_metadata.json"))
	if err := json.Unmarshal(mb, &md); err != nil {
		t.Fatal(err)
	}
	wantMD := Metadata{TotalRuns: 4, ExportDate: "2026-11-21T09:00:00Z", Columns: []string{"slug", "n", "x", "ok"},
		ColumnTypes: map[string]string{"slug": "string", "n": "int", "x": "float", "ok": "bool"}}
	if diff := cmp.Diff(wantMD, md); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	tb, _ := os.ReadFile(filepath.Join(dir, "study_trajectories", "a.csv"))
	if string(tb) != "epoch,val_loss\n1.000000,0.900000\n2.000000,\n" {
		t.Errorf("trajectory %q", tb)
	}
	if err := CheckSchema(bytes.NewReader(b), []string{"slug", "x"}); err != nil {
		t.Errorf("schema: %v", err)
	}
	err := CheckSchema(bytes.NewReader(b), []string{"slug", "powerlaw_r2", "best_val_loss"})
	var se *SchemaError
	if !errors.As(err, &se) || !cmp.Equal(se.Missing, []string{"powerlaw_r2", "best_val_loss"}) || !strings.Contains(err.Error(), "powerlaw_r2, best_val_loss") {
		t.Errorf("schema error %v", err)
	}
}

func TestCollectCompleteness(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	work := t.TempDir()
	spec := gridSpec("cc", 5, nil)
	pts := mustEnqueue(t, l, spec)
	fn := func(ctx context.Context, task Task) (*Result, error) {
		switch task.Params["seed"].Int() {
		case 1:
			return nil, errors.New("boom")
		case 2:
			return &Result{Metrics: map[string]float64{"best": math.NaN()}}, nil
		}
		return &Result{Metrics: map[string]float64{"best": 1}, Curves: map[string][]float64{"epoch": {1, 2}}}, nil
	}
	// Run only 4 of the 5: cancel the last before starting.
	if err := l.Cancel(ctx, pts[4].ID, "test"); err != nil {
		t.Fatal(err)
	}
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: work, Parallel: 2}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	comp, err := CheckCompleteness(ctx, l, work, pts)
	if err != nil {
		t.Fatal(err)
	}
	if got := comp.String(); got != "2/5 runs completed (1 failed, 1 missing, 1 non-finite)" {
		t.Errorf("completeness %q", got)
	}
	if !cmp.Equal(comp.Failed, []string{"base-s1"}) || !cmp.Equal(comp.Missing, []string{"base-s4"}) || !cmp.Equal(comp.NonFinite, []string{"base-s2"}) {
		t.Errorf("lists %+v", comp)
	}
	arch := t.TempDir()
	m, res, err := Collect(ctx, l, work, arch, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 3 || len(res) != 3 {
		t.Fatalf("collected %d runs", len(m.Runs))
	}
	if n, err := VerifyArchive(arch); err != nil || n != 3 {
		t.Fatalf("verify: %d, %v", n, err)
	}
	// Tamper with one archived file.
	os.WriteFile(filepath.Join(arch, m.Runs[0].File), []byte("{}"), 0o644)
	if _, err := VerifyArchive(arch); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), m.Runs[0].Slug) {
		t.Errorf("tampered archive: %v", err)
	}
}

func TestResultRoundTrip(t *testing.T) {
	r := &Result{RunID: "x", Attempt: 2, Metrics: map[string]float64{"a": math.NaN(), "b": math.Inf(-1), "c": 1.25}, Curves: map[string][]float64{"y": {math.Inf(1), 0}}}
	dir := t.TempDir()
	if err := WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "{", `{"run_id":"x"}`, `{"run_id":"x","done":true,"metrics":{"a":"zz"}}`, `{"run_id":"x","done":true,"curves":{"a":[1],"b":[1,2]}}`, `{"run_id":"x","done":true} {}`} {
		os.WriteFile(filepath.Join(dir, ResultFile), []byte(bad), 0o644)
		if _, err := ReadResult(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ResultFile) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzUnmarshalResult(f *testing.F) {
	b, _ := MarshalResult(&Result{RunID: "x", Metrics: map[string]float64{"a": math.NaN()}, Curves: map[string][]float64{"y": {1, 2}}})
	f.Add(b)
	f.Add([]byte(`{"run_id":"x","done":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := UnmarshalResult(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		b2, err := MarshalResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalResult(b2); err != nil {
			t.Fatalf("re-read: %v", err)
		}
	})
}

func TestCondorFiles(t *testing.T) {
	dir := t.TempDir()
	c := &Condor{Command: []string{"/bin/worker", "-x", "it's"}, Dir: dir, RequestCPUs: 1, RequestMemoryMB: 512, Retries: 2}
	var tasks []Task
	for i, id := range []string{"aaaa", "bbbb", "cccc"} {
		tasks = append(tasks, Task{RunID: id, Attempt: i + 1, Dir: filepath.Join(dir, "runs", id), Params: map[string]Value{"seed": IntValue(int64(i))}})
	}
	f, err := c.Write(tasks)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := os.ReadFile(f.Submit)
	// Every non-comment line is "key = value" or the final queue statement.
	kv := regexp.MustCompile(`^[a-z_]+ = \S.*$`)
	lines := strings.Split(strings.TrimSpace(string(sub)), "\n")
	keys := map[string]bool{}
	for _, ln := range lines[:len(lines)-1] {
		if strings.HasPrefix(ln, "#") {
			continue
		}
		if !kv.MatchString(ln) {
			t.Errorf("bad submit line %q", ln)
		}
		keys[strings.SplitN(ln, " ", 2)[0]] = true
	}
	for _, k := range []string{"universe", "executable", "arguments", "initialdir", "output", "error", "log", "environment", "request_cpus", "request_memory"} {
		if !keys[k] {
			t.Errorf("submit file lacks %s", k)
		}
	}
	if want := "queue dir, run_id, attempt from " + f.RunList; lines[len(lines)-1] != want {
		t.Errorf("queue line %q", lines[len(lines)-1])
	}
	if !strings.Contains(string(sub), `arguments = "'-x' 'it''s'"`) {
		t.Errorf("arguments not quoted in the new syntax:\n%s", sub)
	}
	// Every macro used is one the queue statement defines.
	for _, m := range regexp.MustCompile(`\$\((\w+)\)`).FindAllStringSubmatch(string(sub), -1) {
		if m[1] != "dir" && m[1] != "run_id" && m[1] != "attempt" {
			t.Errorf("undefined macro %s", m[0])
		}
	}
	list, _ := os.ReadFile(f.RunList)
	rows := strings.Split(strings.TrimSpace(string(list)), "\n")
	if len(rows) != 3 || rows[1] != filepath.Join(dir, "runs", "bbbb")+", bbbb, 2" {
		t.Errorf("run list %q", rows)
	}
	dag, _ := os.ReadFile(f.DAG)
	nodes := map[string]int{}
	for _, ln := range strings.Split(strings.TrimSpace(string(dag)), "\n") {
		fs := strings.Fields(ln)
		switch fs[0] {
		case "JOB":
			if len(fs) != 3 || fs[2] != f.NodeSubmit {
				t.Errorf("JOB line %q", ln)
			}
			nodes[fs[1]] |= 1
		case "VARS":
			nodes[fs[1]] |= 2
		case "RETRY":
			if fs[2] != "2" {
				t.Errorf("RETRY line %q", ln)
			}
			nodes[fs[1]] |= 4
		default:
			t.Errorf("unexpected DAG line %q", ln)
		}
	}
	if len(nodes) != 3 {
		t.Errorf("%d DAG nodes, want 3", len(nodes))
	}
	for n, bits := range nodes {
		if bits != 7 {
			t.Errorf("node %s lacks JOB, VARS or RETRY (%b)", n, bits)
		}
	}
	nsub, _ := os.ReadFile(f.NodeSubmit)
	if !strings.HasSuffix(string(nsub), "\nqueue\n") {
		t.Errorf("node submit file does not end with a plain queue")
	}
	if _, err := os.Stat(filepath.Join(tasks[0].Dir, "config.json")); err != nil {
		t.Errorf("task config not written: %v", err)
	}
	if _, err := (&Condor{Command: []string{"w"}, Dir: dir}).Write([]Task{{RunID: "z", Dir: "/a b"}}); err == nil || !strings.Contains(err.Error(), "run z") {
		t.Errorf("path with a space: %v", err)
	}
}
