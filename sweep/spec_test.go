package sweep

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const studyYAML = `
name: losssweep
base: {epochs: 50, batch_size: 64}
grid:
  - {key: lr, values: [0.05, 0.1, 0.2]}
  - {key: wd, values: [1e-4, 1e-3, 1e-2]}
  - {key: seed, short: s, values: [0, 1, 2, 3, 4, 5]}
variants:
  - {name: base}
  - {name: bn_off, set: {norm: none}}
  - {name: narrow, set: {hidden: 16}}
  - {name: adamw, set: {optimizer: adamw}}
`

func TestExpandStudy(t *testing.T) {
	s, err := LoadSpec(strings.NewReader(studyYAML))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 216 {
		t.Fatalf("%d points, want 216", len(pts))
	}
	var first []string
	for _, p := range pts[:7] {
		first = append(first, p.Slug)
	}
	want := []string{"base-lr0.05-wd1e-4-s0", "base-lr0.05-wd1e-4-s1", "base-lr0.05-wd1e-4-s2", "base-lr0.05-wd1e-4-s3", "base-lr0.05-wd1e-4-s4", "base-lr0.05-wd1e-4-s5", "base-lr0.05-wd1e-3-s0"}
	if d := cmp.Diff(want, first); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if got := pts[215].Slug; got != "adamw-lr0.2-wd1e-2-s5" {
		t.Errorf("last slug %q", got)
	}
	ids := map[string]bool{}
	for _, p := range pts {
		ids[p.ID] = true
	}
	if len(ids) != 216 {
		t.Errorf("%d distinct ids, want 216", len(ids))
	}
	p := pts[54] // first bn_off point
	if p.Params["variant"].Lit != "bn_off" || p.Params["norm"].String() != "none" || p.Params["epochs"].Int() != 50 || p.Params["wd"].Lit != "1e-4" {
		t.Errorf("point 54: %+v", p)
	}
}

func TestIdentity(t *testing.T) {
	a := map[string]Value{"lr": ParseValue("1e-4"), "name": strValue("x")}
	b := map[string]Value{"name": strValue("x"), "lr": ParseValue("0.0001"), "priority": intValue(9), "tags": strValue("t")}
	if Identity(a) != Identity(b) {
		t.Errorf("same config, different ids: %s %s (%s vs %s)", Identity(a), Identity(b), canonicalConfig(a), canonicalConfig(b))
	}
	c := map[string]Value{"lr": ParseValue("1e-4"), "name": strValue("1")}
	d := map[string]Value{"lr": ParseValue("1e-4"), "name": intValue(1)}
	if Identity(c) == Identity(d) {
		t.Error("string \"1\" and integer 1 share an id")
	}
	if got := canonicalConfig(map[string]Value{"b": floatValue(2.5), "a": boolValue(true)}); got != `{"a":true,"b":2.5}` {
		t.Errorf("canonical %s", got)
	}
	// Numbers are normalised: 1, 1.0 and 1e0 are one run.
	one := []Value{intValue(1), ParseValue("1.0"), ParseValue("1e0"), floatValue(1)}
	for _, v := range one[1:] {
		if Identity(map[string]Value{"lr": one[0]}) != Identity(map[string]Value{"lr": v}) {
			t.Errorf("lr %s and lr %s have different ids", one[0].Lit, v.Lit)
		}
	}
	// Beyond 2^53 an integer is kept exactly.
	if Identity(map[string]Value{"n": intValue(1<<53 + 1)}) == Identity(map[string]Value{"n": intValue(1 << 53)}) {
		t.Error("2^53+1 and 2^53 share an id")
	}
}

func TestValueLiteral(t *testing.T) {
	tests := []struct {
		lit  string
		kind Kind
		f    float64
	}{
		{"1e-4", Float, 1e-4}, {"0.05", Float, 0.05}, {"7", Int, 7}, {"true", Bool, 1}, {"adamw", String, 0}, {"0x10", String, 0},
	}
	for _, tc := range tests {
		v := ParseValue(tc.lit)
		if v.Kind != tc.kind || v.Float() != tc.f || v.String() != tc.lit {
			t.Errorf("ParseValue(%q) = %+v", tc.lit, v)
		}
	}
	m := map[string]Value{"wd": ParseValue("1e-4"), "s": strValue(`a"b`), "n": intValue(3), "ok": boolValue(false)}
	back, err := decodeConfig(string(encodeConfig(m)))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m, back, cmp.AllowUnexported(Value{})); d != "" {
		t.Errorf("config round trip (-want +got):\n%s", d)
	}
}

func TestLoadSpecErrors(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{"empty", "", "(document)"},
		{"not mapping", "- a", "(document)"},
		{"unknown top", "name: x\ngird: []", "gird"},
		{"no name", "grid: [{key: a, values: [1]}]", "name"},
		{"bad name", "name: a/b", "name"},
		{"grid not list", "name: x\ngrid: {a: 1}", "grid"},
		{"axis unknown key", "name: x\ngrid: [{key: a, valeus: [1]}]", "grid[0].valeus"},
		{"axis no values", "name: x\ngrid: [{key: a, values: []}]", "grid[0].values"},
		{"axis value not scalar", "name: x\ngrid: [{key: a, values: [[1]]}]", "grid[0].values[0]"},
		{"duplicate axis", "name: x\ngrid: [{key: a, values: [1]}, {key: a, values: [2]}]", "grid[1].key"},
		{"variant bad name", "name: x\nvariants: [{name: 'a b'}]", "variants[0].name"},
		{"variant dup", "name: x\nvariants: [{name: a}, {name: a}]", "variants[1].name"},
		{"base nested", "name: x\nbase: {a: {b: 1}}", "base.a"},
		{"base null", "name: x\nbase: {a: ~}", "base.a"},
		{"priority is no key", "name: x\npriority: 1", "priority"},
		{"samples count", "name: x\nsamples: {count: 0, params: []}", "samples.count"},
		{"samples dist", "name: x\nsamples: {count: 2, params: [{key: d, uniform: [1, 0]}]}", "samples.params[0].uniform"},
		{"samples two dists", "name: x\nsamples: {count: 2, params: [{key: d, uniform: [0, 1], choice: [a]}]}", "samples.params[0]"},
		{"samples log", "name: x\nsamples: {count: 2, params: [{key: d, log_uniform: [0, 1]}]}", "samples.params[0].log_uniform"},
		{"duplicate key", "name: x\nname: y", "name"},
		{"yaml syntax", "name: [x", "(document)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSpec(strings.NewReader(tc.yaml))
			checkSpecError(t, err, tc.key)
		})
	}
}

// TestLoadSpecGridMapping: a grid written as a mapping (the form other
// sweep tools take) is refused with this spec's first axis shown in the
// list form.
func TestLoadSpecGridMapping(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: x\ngrid:\n  lr: [0.1, 0.01]\n  hidden: [8]", "for example - {key: lr, values: [0.1, 0.01]}"},
		{"name: x\ngrid:\n  lr:\n    values: [1e-3, 1e-2]", "for example - {key: lr, values: [1e-3, 1e-2]}"},
		{"name: x\ngrid: 3", "must be a list of axes (- {key: lr, values: [0.1, 0.01]})"},
	} {
		_, err := LoadSpec(strings.NewReader(tc.yaml))
		checkSpecError(t, err, "grid")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}

// checkSpecError fails t unless err is a *SpecError on key wrapping ErrSpec.
func checkSpecError(t *testing.T, err error, key string) {
	t.Helper()
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SpecError", err)
	}
	if se.Key != key {
		t.Errorf("key %q, want %q (%v)", se.Key, key, err)
	}
	if !errors.Is(err, ErrSpec) {
		t.Errorf("%v does not wrap ErrSpec", err)
	}
}

func TestSamples(t *testing.T) {
	y := "name: r\ngrid: [{key: a, values: [1, 2]}]\nsamples: {count: 3, seed: 7, params: [{key: lr, log_uniform: [0.001, 1]}, {key: opt, choice: [sgd, adam]}]}"
	s, err := LoadSpec(strings.NewReader(y))
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := s.Expand()
	p2, _ := s.Expand()
	if len(p1) != 6 {
		t.Fatalf("%d points, want 6", len(p1))
	}
	for i := range p1 {
		if p1[i].ID != p2[i].ID {
			t.Fatal("same seed gave different samples")
		}
		lr := p1[i].Params["lr"].Float()
		if lr < 0.001 || lr >= 1 {
			t.Errorf("lr %v outside [0.001, 1)", lr)
		}
	}
	if p1[0].Params["lr"] != p1[3].Params["lr"] {
		t.Error("sample 0 differs between grid points")
	}
	if p1[0].Params["lr"] == p1[1].Params["lr"] {
		t.Error("samples 0 and 1 are equal")
	}
}

func FuzzLoadSpec(f *testing.F) {
	f.Add(studyYAML)
	f.Add("name: x\nsamples: {count: 2, seed: 1, params: [{key: d, uniform: [0, 1]}]}")
	f.Add("name: x\ngrid: [{key: a, values: [1, '2', true]}]")
	f.Fuzz(func(t *testing.T, y string) {
		s, err := LoadSpec(strings.NewReader(y))
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		n := 1
		for _, a := range s.Axes {
			n *= len(a.Values)
		}
		if s.Samples != nil {
			n *= s.Samples.Count
		}
		if n*max(len(s.Variants), 1) > 10000 {
			return
		}
		if _, err := s.Expand(); err != nil {
			t.Fatalf("valid spec does not expand: %v", err)
		}
	})
}

func FuzzDecodeConfig(f *testing.F) {
	f.Add([]byte(`{"lr":1e-4,"name":"x","ok":true,"n":3}`))
	f.Add([]byte(`{"a":{"b":1}}`))
	f.Add([]byte("{\"\x7f\":0}")) // a key strconv.Quote writes as \x7f (found by fuzzing)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeConfig(string(b))
		if err != nil {
			return
		}
		// A decoded config re-encodes to a config with the same identity.
		m2, err := decodeConfig(string(encodeConfig(m)))
		if err != nil {
			t.Fatalf("re-decode of %q: %v", encodeConfig(m), err)
		}
		if Identity(m) != Identity(m2) {
			t.Fatalf("identity changed through encode: %q", b)
		}
	})
}

// FuzzDecodeFlat: where the fast path accepts a config, encoding/json
// reads the same values from it (kind, literal and number).
func FuzzDecodeFlat(f *testing.F) {
	for _, s := range []string{`{"lr":1e-4,"name":"x","ok":true,"n":3}`, `{}`, `{"a":-0}`, `{"a":01}`, `{"a":1.}`,
		`{"a":1,}`, `{"a":"x,y","b":false}`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":"\u00e9"}`, `{"a":tru}`, `{"a":1E+5}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := decodeFlat(s)
		if !ok {
			return
		}
		slow, err := decodeJSON([]byte(s))
		if err != nil {
			t.Fatalf("%q: fast path accepted, encoding/json: %v", s, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: %d keys, encoding/json %d", s, len(fast), len(slow))
		}
		for k, v := range slow {
			if w, ok := fast[k]; !ok || w != v {
				t.Fatalf("%q: key %q: %#v, encoding/json %#v", s, k, w, v)
			}
		}
	})
}

func TestSamplesDistinctAndNamed(t *testing.T) {
	// Ten draws from a two-value choice can only give two distinct points:
	// repeats are dropped rather than enqueued as the same run twice.
	y := "name: r\nsamples: {count: 10, seed: 3, params: [{key: opt, short: o, choice: [sgd, adam]}, {key: lr, log_uniform: [0.001, 1]}]}"
	s, err := LoadSpec(strings.NewReader(y))
	if err != nil {
		t.Fatal(err)
	}
	s.Samples.Dists = s.Samples.Dists[:1] // choice only
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 {
		t.Fatalf("%d points from a two-value choice, want 2", len(pts))
	}
	ids := map[string]bool{}
	for _, p := range pts {
		if ids[p.ID] {
			t.Fatalf("duplicate run id %s", p.ID)
		}
		ids[p.ID] = true
		o := p.Params["opt"].Lit
		if !strings.HasSuffix(p.Slug, "-o"+o) {
			t.Errorf("slug %q does not name the sampled value o%s", p.Slug, o)
		}
	}

	s, _ = LoadSpec(strings.NewReader(y))
	pts, err = s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		lr := p.Params["lr"].Float()
		if want := "-lr" + strconv.FormatFloat(lr, 'g', 3, 64); !strings.Contains(p.Slug, want) {
			t.Errorf("slug %q lacks %q", p.Slug, want)
		}
	}
}

// TestLoadSpecLines: errors from the YAML name the key and its line, an
// unknown key the nearest known one; aliases are followed.
func TestLoadSpecLines(t *testing.T) {
	for _, tc := range []struct{ yaml, key, want string }{
		{"name: x\ngrid:\n  - {key: a, valeus: [1]}\n", "grid[0].valeus", `line 3: unexpected structure: unknown key "valeus" (did you mean "values"?)`},
		{"name: x\nresources: {cpus: 1, mem: 2G}\n", "resources.mem", `line 2: unexpected structure: unknown key "mem" (resources has cpus, gpus, memory, disk, time, partition, account)`},
		{"name: x\nbase:\n  lr: 0.1\n  lr: 0.2\n", "base.lr", `line 4: unexpected structure: duplicate key "lr" (first on line 3)`},
		{"name: x\nbase: {a: 1}\ngrid: [{key: b, values: [1, {c: 2}]}]\n", "grid[0].values[1]", "line 3: unexpected structure: want a scalar"},
		{"name: x\nresources: {memory: lots}\n", "resources.memory", `line 2: "lots" is not a size`},
	} {
		_, err := LoadSpec(strings.NewReader(tc.yaml))
		checkSpecError(t, err, tc.key)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
	s, err := LoadSpec(strings.NewReader("name: x\nbase: &b {lr: 0.1}\nvariants:\n  - {name: v, set: *b}\ngrid: [{key: s, values: [1]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Variants[0].Set["lr"]; got.Lit != "0.1" || got.Kind != Float {
		t.Errorf("aliased set: lr %+v", got)
	}
}
