package sweep

import (
	"context"
	"errors"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const conditionalYAML = `
name: cond
base: {optimizer: sgd, epochs: 5}
grid:
  - {key: lr, values: [0.05, 0.1], when: {optimizer: sgd}}
  - {key: lr, values: [0.005], when: {optimizer: adamw}}
  - {key: momentum, values: [0.9, 0.99], when: {optimizer: sgd}}
  - {key: seed, short: s, values: [0, 1]}
variants:
  - {name: base}
  - {name: adamw, set: {optimizer: adamw}, resources: {gpus: 1, memory: 2G, time: "1:30:00"}}
resources: {cpus: 2, time: 30m, partition: short}
exclude:
  - {optimizer: sgd, lr: 0.1, momentum: 0.99}
`

func TestConditionalGrid(t *testing.T) {
	s, err := LoadSpec(strings.NewReader(conditionalYAML))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	// base: lr 2 × momentum 2 × seed 2 = 8, less 2 excluded; adamw: 1 × 2.
	var slugs []string
	for _, p := range pts {
		slugs = append(slugs, p.Slug)
	}
	want := "base-lr0.05-momentum0.9-s0 base-lr0.05-momentum0.9-s1 base-lr0.05-momentum0.99-s0 base-lr0.05-momentum0.99-s1 base-lr0.1-momentum0.9-s0 base-lr0.1-momentum0.9-s1 adamw-lr0.005-s0 adamw-lr0.005-s1"
	if got := strings.Join(slugs, " "); got != want {
		t.Fatalf("points\n got %s\nwant %s", got, want)
	}
	a := pts[6]
	if _, ok := a.Params["momentum"]; ok {
		t.Errorf("adamw point has momentum: %v", a.Params)
	}
	if a.resources.GPUs != 1 || a.resources.MemoryMB != 2048 || a.resources.CPUs != 2 || a.resources.Time.Minutes() != 90 || a.resources.Partition != "short" {
		t.Errorf("adamw resources %+v", a.resources)
	}
	if r := pts[0].resources; r.GPUs != 0 || r.CPUs != 2 || r.Time.Minutes() != 30 {
		t.Errorf("base resources %+v", r)
	}
	for i, p := range pts {
		if p.index != i {
			t.Errorf("point %d has index %d", i, p.index)
		}
	}
}

func TestRandomSearch(t *testing.T) {
	y := `
name: rs
base: {optimizer: sgd}
variants: [{name: sgd}, {name: adamw, set: {optimizer: adamw}}]
samples:
  count: 20
  seed: 9
  params:
    - {key: lr, log_uniform: [1e-4, 1e-1]}
    - {key: hidden, int_uniform: [8, 64]}
    - {key: dropout, uniform: [0, 0.5]}
    - {key: momentum, uniform: [0.8, 0.99], when: {optimizer: sgd}}
`
	s, err := LoadSpec(strings.NewReader(y))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 40 {
		t.Fatalf("%d points, want 40", len(pts))
	}
	for _, p := range pts {
		lr, h, d := p.Params["lr"].Float(), p.Params["hidden"], p.Params["dropout"].Float()
		if lr < 1e-4 || lr >= 1e-1 || h.Kind != Int || h.Int() < 8 || h.Int() > 64 || d < 0 || d >= 0.5 {
			t.Errorf("%s: draws out of range: %v", p.Slug, p.Params)
		}
		m, has := p.Params["momentum"]
		if (p.Params["variant"].Lit == "sgd") != has || has && (m.Float() < 0.8 || m.Float() >= 0.99) {
			t.Errorf("%s: momentum %v (has %v)", p.Slug, m, has)
		}
	}
	// The conditional parameter does not change the other draws: both
	// variants get the same lr for sample r.
	if pts[3].Params["lr"] != pts[23].Params["lr"] {
		t.Error("sample 3 has a different lr in the two variants")
	}
	// Log-uniform: about as many draws in each decade.
	s.Samples.Count = 3000
	s.Variants = s.Variants[:1]
	pts, _ = s.Expand()
	dec := [3]int{}
	for _, p := range pts {
		dec[int(math.Floor(math.Log10(p.Params["lr"].Float())))+4]++
	}
	for i, n := range dec {
		// 1000 expected per decade; 6 standard deviations of a binomial.
		if math.Abs(float64(n)-1000) > 6*math.Sqrt(3000*(1.0/3)*(2.0/3)) {
			t.Errorf("decade %d: %d draws of 3000", i-4, n)
		}
	}
}

func TestSpecValidation(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{"duplicate value", "name: x\ngrid: [{key: a, values: [0.1, 0.1]}]", "grid[0].values[1]"},
		{"1 and 1.0", "name: x\ngrid: [{key: a, values: [1, 1.0]}]", "grid[0].values[1]"},
		{"1e-1 and 0.1", "name: x\ngrid: [{key: a, values: [0.1, 1e-1]}]", "grid[0].values[1]"},
		{"overlapping conditions", "name: x\nbase: {o: s}\ngrid: [{key: a, values: [1]}, {key: a, values: [2], when: {o: s}}]", "grid[1].key"},
		{"condition on unknown key", "name: x\ngrid: [{key: a, values: [1], when: {opt: sgd}}]", "grid[0].when.opt"},
		{"condition on later key", "name: x\ngrid: [{key: a, values: [1], when: {b: 1}}, {key: b, values: [1]}]", "grid[0].when.b"},
		{"condition value impossible", "name: x\nbase: {o: sgd}\ngrid: [{key: a, values: [1], when: {o: adam}}]", "grid[0].when.o[0]"},
		{"axis never applies", "name: x\nbase: {o: sgd}\nvariants: [{name: v, set: {o: adam}}]\ngrid: [{key: a, values: [1], when: {o: [sgd, adam]}}, {key: b, values: [1], when: {a: 2}}]", "grid[1].when.a[0]"},
		{"exclude unknown key", "name: x\ngrid: [{key: a, values: [1, 2]}]\nexclude: [{b: 1}]", "exclude[0].b"},
		{"exclude empty", "name: x\ngrid: [{key: a, values: [1, 2]}]\nexclude: [{}]", "exclude[0]"},
		{"int_uniform float", "name: x\nsamples: {count: 2, params: [{key: h, int_uniform: [1, 2.5]}]}", "samples.params[0].int_uniform[1]"},
		{"int_uniform order", "name: x\nsamples: {count: 2, params: [{key: h, int_uniform: [5, 2]}]}", "samples.params[0].int_uniform"},
		{"choice duplicate", "name: x\nsamples: {count: 2, params: [{key: h, choice: [a, a]}]}", "samples.params[0].choice[1]"},
		{"variant key", "name: x\nbase: {variant: v}", "base.variant"},
		{"resource unknown", "name: x\nresources: {ram: 4G}", "resources.ram"},
		{"resource memory", "name: x\nresources: {memory: lots}", "resources.memory"},
		{"resource time", "name: x\nresources: {time: soon}", "resources.time"},
		{"resource cpus", "name: x\nresources: {cpus: -1}", "resources.cpus"},
		{"inputs newline", "name: x\ninputs: {code: \"a\\nb\"}", "inputs.code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSpec(strings.NewReader(tc.yaml))
			if err == nil {
				_, err = s.countPoints()
			}
			checkSpecError(t, err, tc.key)
		})
	}
}

// TestExpansionChecks: what only the expansion shows.
func TestExpansionChecks(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{"exclusion matching nothing", "name: x\ngrid: [{key: a, values: [1, 2]}]\nexclude: [{a: 3}]", "exclude[0].a[0]"},
		{"exclusion matching nothing (combination)", "name: x\nbase: {o: s}\nvariants: [{name: v}, {name: w, set: {o: t}}]\ngrid: [{key: a, values: [1], when: {o: s}}]\nexclude: [{o: t, a: 1}]", "exclude[0]"},
		{"everything excluded", "name: x\ngrid: [{key: a, values: [1]}]\nexclude: [{a: 1}]", "exclude"},
		{"axis that never applies", "name: x\nbase: {o: s}\nvariants: [{name: v}, {name: w, set: {o: t}}]\ngrid: [{key: a, values: [1], when: {o: t}}, {key: b, values: [1], when: {o: s, a: 1}}]", "grid[1].when"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSpec(strings.NewReader(tc.yaml))
			if err == nil {
				_, err = s.Expand()
			}
			var se *SpecError
			if !errors.As(err, &se) || se.Key != tc.key {
				t.Fatalf("error %v, want a *SpecError on %s", err, tc.key)
			}
		})
	}
}

// TestScaleLimits: a sweep over maxRuns is refused up front, without
// expanding it; Expand refuses more than maxExpand points in memory.
func TestScaleLimits(t *testing.T) {
	axis := func(k string, n int) Axis {
		a := Axis{Key: k}
		for i := range n {
			a.Values = append(a.Values, intValue(int64(i)))
		}
		return a
	}
	huge := &Spec{Name: "huge", Axes: []Axis{axis("a", 1000), axis("b", 1000), axis("c", 1000)}}
	if _, err := huge.countPoints(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("10^9 points: %v, want ErrTooLarge", err)
	}
	big := &Spec{Name: "big", Axes: []Axis{axis("a", 1000), axis("b", 2000)}}
	if n, err := big.countPoints(); err != nil || n != 2_000_000 {
		t.Errorf("Count = %d, %v", n, err)
	}
	if _, err := big.Expand(); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Points") {
		t.Errorf("Expand of 2·10^6 points: %v, want ErrTooLarge pointing to Points", err)
	}
}

// TestScaleEnqueue streams SWEEP_SCALE points (for example 10000000)
// through Spec.Points and Ledger.Enqueue and reports the time and the
// process's peak resident memory; without SWEEP_SCALE it streams 50,000
// and checks that the live heap stays small. docs/losssweep.md records the
// 10^7 run.
func TestScaleEnqueue(t *testing.T) {
	n := 50_000
	if s := os.Getenv("SWEEP_SCALE"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	} else if testing.Short() {
		t.Skip("-short")
	}
	// n points: 1000 × n/1000.
	axis := func(k string, m int) Axis {
		a := Axis{Key: k}
		for i := range m {
			a.Values = append(a.Values, intValue(int64(i)))
		}
		return a
	}
	s := &Spec{Name: "scale", Base: map[string]Value{"lr": floatValue(0.1)}, Axes: []Axis{axis("a", 1000), axis("b", n/1000)}}
	seq, count, err := s.Points()
	if err != nil || count != n {
		t.Fatalf("Points: %d, %v", count, err)
	}
	l, _ := openTemp(t)
	var peakHeap uint64
	var ms runtime.MemStats
	k := 0
	watched := func(yield func(Point) bool) {
		for p := range seq {
			if k%10_000 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peakHeap = max(peakHeap, ms.HeapAlloc)
			}
			k++
			if !yield(p) {
				return
			}
		}
	}
	t0 := time.Now()
	added, err := l.Enqueue(context.Background(), s, watched)
	if err != nil || added != n {
		t.Fatalf("Enqueue: %d, %v", added, err)
	}
	t.Logf("%d points enqueued in %v; live heap at most %.1f MiB (sampled every 10,000 points); peak RSS %.0f MiB",
		n, time.Since(t0).Round(time.Millisecond), float64(peakHeap)/(1<<20), peakRSSMiB())
	// Bounded: far below what holding the points would take (about 1 KiB
	// each as []Point with their maps).
	if limit := uint64(64 << 20); peakHeap > limit {
		t.Errorf("live heap reached %d MiB streaming %d points, want under %d MiB", peakHeap>>20, n, limit>>20)
	}
}
