package regime

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

func TestNodeRule(t *testing.T) {
	var r Rules
	cases := []struct {
		name string
		node Node
		want Label
	}{
		{"cpu 256GB", Node{NodeMemoryGB: 256}, CPUStandard},
		{"cpu exactly 512GB is large (>=)", Node{NodeMemoryGB: 512}, CPULargeMem},
		{"cpu 511.9GB", Node{NodeMemoryGB: 511.9}, CPUStandard},
		{"gpu 128GB", Node{NodeMemoryGB: 128, GPUCountPerNode: 2}, GPUStandard},
		{"gpu 768GB", Node{NodeMemoryGB: 768, GPUCountPerNode: 2}, GPULargeMem},
		{"anvil gpu override", Node{NodeMemoryGB: 512, GPUCountPerNode: 4, WorkloadRegime: GPUStandard}, GPUStandard},
		{"unknown memory", Node{NodeMemoryGB: math.NaN()}, Unknown},
		{"memory not given (0 GB)", Node{GPUCountPerNode: 2}, Unknown},
		{"memory not given, regime set", Node{WorkloadRegime: CPULargeMem}, CPULargeMem},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := r.Node(c.node); got != c.want {
				t.Errorf("Node(%+v) = %s, want %s", c.node, got, c.want)
			}
		})
	}
	if got := (Rules{LargeMemGB: 1000}).Node(Node{NodeMemoryGB: 768}); got != CPUStandard {
		t.Errorf("threshold 1000: got %s, want cpu_standard", got)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("LargeMemGB %v: no panic", bad)
				}
			}()
			(Rules{LargeMemGB: bad}).Node(Node{NodeMemoryGB: 64})
		}()
	}
}

func jobWith(gpu, mem Agg) *Job {
	return &Job{Metrics: []Metric{{"gpu", gpu}, {"memused", mem}}}
}

var missing = Agg{Sum: math.NaN(), Max: math.NaN()}

func TestProxyRule(t *testing.T) {
	cases := []struct {
		name   string
		strict bool
		job    *Job
		want   Label
	}{
		{"no gpu telemetry, lenient", false, jobWith(missing, Agg{Cnt: 3, Sum: 30, Max: 12}), CPUStandard},
		{"no gpu telemetry, strict", true, jobWith(missing, Agg{Cnt: 3, Sum: 30, Max: 12}), Unknown},
		{"no metrics at all, lenient", false, &Job{}, CPUStandard},
		{"no memory telemetry, strict", true, jobWith(Agg{Cnt: 2, Sum: 50, Max: 40}, missing), Unknown},
		{"gpu samples all zero", false, jobWith(Agg{Cnt: 2, Sum: 0, Max: 0}, Agg{Cnt: 2, Sum: 20, Max: 10}), GPUStandard},
		{"gpu used", true, jobWith(Agg{Cnt: 2, Sum: 120, Max: 90}, Agg{Cnt: 2, Sum: 20, Max: 10}), GPUStandard},
		{"gpu and 600GB", false, jobWith(Agg{Cnt: 2, Sum: 120, Max: 90}, Agg{Cnt: 2, Sum: 1000, Max: 600}), GPULargeMem},
		{"cpu and exactly 512GB", false, jobWith(missing, Agg{Cnt: 1, Sum: 512, Max: 512}), CPULargeMem},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Rules{Strict: c.strict}
			if got := r.proxy(c.job); got != c.want {
				t.Errorf("Proxy = %s, want %s", got, c.want)
			}
		})
	}
}

func TestLabelBasis(t *testing.T) {
	r := Rules{Hardware: KnownHardware()}
	jobs := []Job{
		{Cluster: "anvil", Partition: "gpu"},
		{Cluster: "anvil", Partition: "highmem"},
		{Cluster: "anvil", Partition: "mystery"},
		{Cluster: "conte", Partition: ""},
		{Cluster: "elsewhere", Metrics: []Metric{{"gpu", Agg{Cnt: 1, Sum: 5, Max: 5}}}},
	}
	counts := r.LabelAll(jobs)
	type lb struct {
		L Label
		B string
	}
	var got []lb
	for _, j := range jobs {
		got = append(got, lb{j.Regime, j.Basis.String()})
	}
	want := []lb{{GPUStandard, "authoritative"}, {CPULargeMem, "authoritative"}, {CPUStandard, "proxy-only"},
		{CPUStandard, "authoritative"}, {GPUStandard, "proxy-only"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[Label]int{GPUStandard: 2, CPULargeMem: 1, CPUStandard: 2}, counts); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	if a, p := Bases(jobs); a != 3 || p != 2 {
		t.Errorf("Bases = %d authoritative, %d proxy; want 3, 2", a, p)
	}
	if a, p := Bases(jobs[:2], jobs[2:3]); a != 2 || p != 1 {
		t.Errorf("Bases of two slices = %d, %d; want 2, 1", a, p)
	}
	if a, p := Bases(nil, []Job{{}}); a != 0 || p != 0 {
		t.Errorf("Bases of an unlabelled job = %d, %d; want 0, 0", a, p)
	}
	if got := len(filter(jobs, CPUStandard)); got != 2 {
		t.Errorf("filter(cpu_standard) has %d jobs, want 2", got)
	}
}

func TestReadHardware(t *testing.T) {
	good := `clusters:
  anvil:
    partitions:
      gpu: {node_type: gpu, node_cores: 128, node_memory_gb: 512, gpu_count_per_node: 4, workload_regime: gpu_standard}
    default: {node_type: cpu, node_cores: 128, node_memory_gb: 256}
`
	h, err := ReadHardware(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	n, ok := h.lookup("anvil", "gpu")
	if !ok || n.GPUCountPerNode != 4 || (Rules{}).Node(n) != GPUStandard {
		t.Errorf("anvil/gpu = %+v, %v", n, ok)
	}
	if n, ok := h.lookup("anvil", "other"); !ok || n.NodeMemoryGB != 256 {
		t.Errorf("anvil default = %+v, %v", n, ok)
	}
	for name, bad := range map[string]string{
		"bad regime":    "clusters:\n  x:\n    default: {workload_regime: tpu}\n",
		"unknown field": "clusters:\n  x:\n    default: {gpus: 2}\n",
		"not yaml":      "clusters: [",
		// Without node_memory_gb the entry would label its jobs
		// gpu_standard from a 0 GB node.
		"no memory":       "clusters:\n  x:\n    partitions:\n      p: {gpu_count_per_node: 4}\n",
		"negative memory": "clusters:\n  x:\n    default: {node_memory_gb: -512}\n",
		"infinite memory": "clusters:\n  x:\n    default: {node_memory_gb: .inf}\n",
		"negative gpus":   "clusters:\n  x:\n    default: {node_memory_gb: 64, gpu_count_per_node: -1}\n",
		"negative cores":  "clusters:\n  x:\n    default: {node_memory_gb: 64, node_cores: -16}\n",
	} {
		_, err := ReadHardware(strings.NewReader(bad))
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if name != "unknown field" && name != "not yaml" && (!errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), `cluster "x"`)) {
			t.Errorf("%s: %v does not wrap ErrBadValue naming the cluster", name, err)
		}
	}
	if _, err := ReadHardware(strings.NewReader("clusters:\n  x:\n    default: {workload_regime: cpu_largemem}\n")); err != nil {
		t.Errorf("regime without memory: %v", err)
	}
}

func TestAggregate(t *testing.T) {
	ts := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	nan := math.NaN()
	tab := &table{Metrics: []string{"gpu", "memused"}, Rows: []row{
		{JobID: "1", Cluster: "stampede", Queue: "normal", Submit: ts("2018-03-01 00:00:00"), Start: ts("2018-03-01 00:10:00"),
			End: ts("2018-03-01 01:10:00"), Timelimit: 120, NHosts: 2, NCores: 32, Values: []float64{nan, 10}},
		{JobID: "1", Cluster: "stampede", Start: ts("2018-03-01 00:09:00"), End: ts("2018-03-01 01:20:00"),
			Timelimit: 120, NHosts: 2, NCores: 32, Values: []float64{nan, 30}},
		{JobID: "2", Cluster: "anvil", Submit: ts("2023-01-01 00:00:00"), Start: ts("2023-01-01 00:00:30"),
			End: ts("2023-01-01 00:01:30"), Timelimit: 0, NHosts: 1, NCores: 4, Values: []float64{50, 5}},
	}}
	jobs := aggregate(tab, DefaultUnits())
	if len(jobs) != 2 {
		t.Fatalf("got %d jobs, want 2", len(jobs))
	}
	j := jobs[0]
	if g := metric(j, "gpu"); g.Cnt != 0 || !math.IsNaN(g.Sum) || !math.IsNaN(g.Max) {
		t.Errorf("all-missing gpu = %+v, want cnt 0 and NaN sum and max", g)
	}
	if m := metric(j, "memused"); m != (Agg{Cnt: 2, Sum: 40, Max: 30}) {
		t.Errorf("memused = %+v", m)
	}
	feat := func(j *Job, name string) float64 {
		v, ok := j.Feature(name)
		if !ok {
			t.Fatalf("feature %s not defined", name)
		}
		return v
	}
	// Stampede minutes: 120 min = 7200 s; start is the earlier 00:09, end the later 01:20.
	wantFeat := map[string]float64{"timelimit_sec": 7200, "runtime_sec": 71 * 60, "queue_time_sec": 9 * 60,
		"runtime_fraction": 71 * 60.0 / 7200, "nhosts": 2, "ncores": 32, "value_memused_cnt": 2, "value_memused_max": 30}
	for name, want := range wantFeat {
		if got := feat(&j, name); got != want {
			t.Errorf("job 1 %s = %v, want %v", name, got, want)
		}
	}
	if got := feat(&jobs[1], "runtime_fraction"); !math.IsNaN(got) {
		t.Errorf("runtime_fraction with timelimit 0 = %v, want NaN", got)
	}
	if got := feat(&jobs[1], "timelimit_sec"); got != 0 {
		t.Errorf("anvil timelimit_sec = %v, want 0 (seconds unit)", got)
	}
	if _, ok := j.Feature("value_gpu_median"); ok {
		t.Error("value_gpu_median accepted")
	}
	if _, err := Matrix(jobs, []string{"ncores", "bogus"}); err == nil {
		t.Error("Matrix accepted an unknown feature")
	}
	x, err := Matrix(jobs, []string{"ncores", "runtime_sec"})
	if err != nil {
		t.Fatal(err)
	}
	if x.At(1, 0) != 4 || x.At(1, 1) != 60 {
		t.Errorf("Matrix row 1 = %v %v", x.At(1, 0), x.At(1, 1))
	}
}

func TestSafeFeatures(t *testing.T) {
	withGPU := []Job{{NCores: 4, NHosts: 1, TimelimitSec: 60, Metrics: []Metric{{"gpu", Agg{Cnt: 1, Sum: 5, Max: 5}}}}}
	withoutGPU := []Job{{NCores: 8, NHosts: 1, TimelimitSec: 60, Metrics: []Metric{{"gpu", missing}}}}
	got := safeFeatures(nil, withGPU, withoutGPU)
	// Times are missing, so runtime and queue time are not safe; gpu sum
	// and max are NaN in the second cluster; gpu_cnt is 0 there, defined.
	want := []string{"ncores", "nhosts", "timelimit_sec", "value_gpu_cnt"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("safeFeatures (-want +got):\n%s", d)
	}
	if got := safeFeatures(nil, withGPU, nil); got != nil {
		t.Errorf("with an empty cluster: %v, want none", got)
	}
}

func FuzzReadHardware(f *testing.F) {
	f.Add([]byte("clusters:\n  anvil:\n    partitions:\n      gpu: {node_memory_gb: 512, gpu_count_per_node: 4, workload_regime: gpu_standard}\n"))
	f.Add([]byte(`{"clusters": {"x": {"default": {"node_memory_gb": 64}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHardware(bytes.NewReader(data))
		if err != nil {
			// One prefix: the message starts with it and nothing it wraps
			// adds another (the input itself may hold any text).
			const prefix = "regime: hardware table: "
			if msg := err.Error(); !errors.Is(err, ErrBadValue) || !strings.HasPrefix(msg, prefix) || strings.HasPrefix(msg[len(prefix):], "regime: ") {
				t.Fatalf("error %q does not wrap ErrBadValue with one prefix", err)
			}
			return
		}
		for cn, c := range h.Clusters {
			for pn := range c.Partitions {
				if n, ok := h.lookup(cn, pn); ok {
					(Rules{}).Node(n)
				}
			}
		}
	})
}

func TestParseTime(t *testing.T) {
	want := time.Date(2018, 3, 11, 2, 30, 5, 0, time.UTC)
	for _, s := range []string{"2018-03-11 02:30:05", "03/11/2018 02:30:05", "2018-03-11T02:30:05Z", "2018-03-11 02:30:05.000", " 2018-03-11 02:30:05 "} {
		got, err := parseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"2018-02-30 00:00:00", "13/01/2018 00:00:00", "2018-03-11 24:00:00", "2018-03-1a 00:00:00", "soon"} {
		if _, err := parseTime(s); err == nil {
			t.Errorf("parseTime(%q) accepted", s)
		}
	}
	if got, err := parseTime("1520735405"); err != nil || got.Unix() != 1520735405 {
		t.Errorf("Unix seconds: %v, %v", got, err)
	}
	if got, err := parseTime("NaT"); err != nil || !got.IsZero() {
		t.Errorf("NaT: %v, %v", got, err)
	}
}

// TestKnownHardwareValid: the built-in table passes ReadHardware's checks
// and survives a YAML round trip unchanged.
func TestKnownHardwareValid(t *testing.T) {
	want := KnownHardware()
	b, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadHardware(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("KnownHardware fails its own checks: %v", err)
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if n, _ := got.lookup("anvil", "gpu"); (Rules{}).Node(n) != GPUStandard || n.NodeMemoryGB != DefaultLargeMemGB {
		t.Errorf("anvil/gpu = %+v: want a 512 GB node labelled gpu_standard by its override", n)
	}
}

// metric returns a job's aggregate of the named metric (zero when absent).
func metric(j Job, name string) Agg {
	a, _ := j.metric(name)
	return a
}
