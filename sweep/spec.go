package sweep

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// holds reports whether the condition c (the When of an axis or a random
// parameter, or an exclusion) matches the parameters p: every key of c must
// be present in p with one of the listed values (numbers compared by value,
// see Value.equal). A nil condition always holds.
func holds(c map[string][]Value, p map[string]Value) bool {
	for k, vs := range c {
		v, ok := p[k]
		if !ok || !slices.ContainsFunc(vs, v.equal) {
			return false
		}
	}
	return true
}

// disjoint reports whether no point can satisfy both conditions: some key
// appears in both with no value in common.
func disjoint(a, b map[string][]Value) bool {
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			continue
		}
		common := false
		for _, x := range av {
			if slices.ContainsFunc(bv, x.equal) {
				common = true
				break
			}
		}
		if !common {
			return true
		}
	}
	return false
}

// Axis is one grid dimension. With When set, the axis exists only for the
// points that match it (a conditional parameter); two axes may share a Key
// when their conditions are disjoint, e.g. lr values for SGD and others for
// AdamW.
type Axis struct {
	Key    string  // parameter name
	Short  string  // slug prefix; empty means Key
	Values []Value // in declared order, no two equal
	When   map[string][]Value
}

// Variant is a named overlay applied on top of Base before the grid values.
type Variant struct {
	Name      string
	Set       map[string]Value
	Resources Resources // overrides the spec's Resources field by field
}

// Dist is a distribution for a randomly drawn parameter. Exactly one of
// Uniform [lo, hi), LogUniform [lo, hi) (0 < lo), IntUniform [lo, hi]
// (integers, both ends included) and Choice is set. With When set, the
// parameter exists only for the points that match it.
type Dist struct {
	Key        string
	Short      string
	Uniform    []float64
	LogUniform []float64
	IntUniform []int64
	Choice     []Value
	When       map[string][]Value
}

// Samples draws Count random parameter sets from Dists with a generator
// seeded by Seed (random search); every grid point is combined with every
// draw, so that a seed axis repeats the same draws. Every Dist is drawn for
// every sample, in order, whether or not its condition holds for a point,
// so that adding a conditional parameter does not change the other draws.
// A draw that repeats an earlier one for the same grid point (possible with
// Choice, IntUniform or conditions) is dropped, so a grid point may get
// fewer than Count samples. Sampled runs' slugs name the draw and its
// values at three significant digits (base-lr0.1-r3-wd0.000123).
type Samples struct {
	Count int
	Seed  uint64
	Dists []Dist
}

// maxSamples bounds Samples.Count.
const maxSamples = 1 << 20

// Resources is what a run asks its scheduler for. Zero fields ask for
// nothing (the scheduler's default). Resources are not part of a run's
// identity: asking for more memory does not change what a run computes.
type Resources struct {
	CPUs      int           // cores per run (Slurm --cpus-per-task, HTCondor request_cpus)
	GPUs      int           // Slurm --gres=gpu:N, HTCondor request_gpus
	MemoryMB  int           // MiB (Slurm --mem, HTCondor request_memory)
	DiskMB    int           // MiB (HTCondor request_disk)
	Time      time.Duration // wall-clock limit (Slurm --time)
	Partition string        // Slurm --partition
	Account   string        // Slurm --account
}

// merge returns r with the non-zero fields of o.
func (r Resources) merge(o Resources) Resources {
	if o.CPUs != 0 {
		r.CPUs = o.CPUs
	}
	if o.GPUs != 0 {
		r.GPUs = o.GPUs
	}
	if o.MemoryMB != 0 {
		r.MemoryMB = o.MemoryMB
	}
	if o.DiskMB != 0 {
		r.DiskMB = o.DiskMB
	}
	if o.Time != 0 {
		r.Time = o.Time
	}
	if o.Partition != "" {
		r.Partition = o.Partition
	}
	if o.Account != "" {
		r.Account = o.Account
	}
	return r
}

func (r Resources) check(key string) error {
	if r.CPUs < 0 || r.GPUs < 0 || r.MemoryMB < 0 || r.DiskMB < 0 || r.Time < 0 {
		return specErr(key, "negative resource")
	}
	if r.Time > 0 && r.Time < time.Second {
		return specErr(key+".time", "%v is under a second", r.Time)
	}
	for _, s := range []string{r.Partition, r.Account} {
		if strings.ContainsAny(s, " \t\n,'\"") {
			return specErr(key, "partition and account may not contain spaces, commas or quotes: %q", s)
		}
	}
	return nil
}

// Spec is a sweep: base parameters, grid axes (Cartesian product in declared
// order, last axis fastest), variant overlays (outermost), optional random
// samples (innermost) and exclusions. The zero Variants means one unnamed
// variant "base". Every point's parameters include "variant", the variant's
// name.
type Spec struct {
	Name     string
	Base     map[string]Value
	Axes     []Axis
	Variants []Variant
	Samples  *Samples
	// Exclude drops the points that match any of its conditions.
	Exclude []map[string][]Value
	// Resources are every run's default resources (see Variant.Resources).
	Resources Resources
	// Inputs names what else determines the results besides the parameters
	// (a code version, a data checksum). They are recorded in the ledger by
	// the first Enqueue, and a later Enqueue with different Inputs is
	// refused (see InputsError): results computed from other inputs are not
	// silently mixed.
	Inputs map[string]string
}

// Point is one run of a sweep.
type Point struct {
	Params map[string]Value // with "variant", the variant's name
	Slug   string
	ID     string // see Identity

	index     int // position in expansion order
	resources Resources
}

// SpecError reports a malformed spec; Key names the offending key
// ("grid[1].values[0]", "variants[2].name").
type SpecError struct {
	Key string
	Err error
}

func (e *SpecError) Error() string { return "sweep: spec key " + e.Key + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

func specErr(key, format string, a ...any) error {
	return &SpecError{Key: key, Err: fmt.Errorf("%w: "+format, append([]any{ErrSpec}, a...)...)}
}

// keyInfo is what validate knows about a parameter name: where it is first
// defined (an order number) and the values it can take (nil: any number in
// a range).
type keyInfo struct {
	order    int
	values   []Value
	anyValue bool
}

// validate checks the spec without expanding it and returns a *SpecError
// naming the first bad key. Expand and Points also check what only the
// expansion shows (an axis or exclusion that never applies, no point left).
func (s *Spec) validate() error {
	if s.Name == "" {
		return specErr("name", "empty")
	}
	if !slugSafe(s.Name) {
		return specErr("name", "%q may only contain letters, digits, '.', '_' and '-'", s.Name)
	}
	known := map[string]*keyInfo{}
	order := 0
	define := func(k string, vals []Value, anyValue bool) {
		ki := known[k]
		if ki == nil {
			ki = &keyInfo{order: order}
			known[k] = ki
		}
		ki.values = append(ki.values, vals...)
		ki.anyValue = ki.anyValue || anyValue
	}
	checkCond := func(key string, c map[string][]Value, before int) error {
		for _, k := range slices.Sorted(maps.Keys(c)) {
			ki := known[k]
			if ki == nil || ki.order >= before {
				return specErr(key+"."+k, "condition on %q, which is not a parameter defined before this one", k)
			}
			if len(c[k]) == 0 {
				return specErr(key+"."+k, "no values")
			}
			for j, v := range c[k] {
				if !ki.anyValue && !slices.ContainsFunc(ki.values, v.equal) {
					return specErr(fmt.Sprintf("%s.%s[%d]", key, k, j), "%q is not a value %s can take", v.Lit, k)
				}
			}
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(s.Base)) {
		if k == "variant" {
			return specErr("base.variant", `"variant" is set from the variant's name`)
		}
		define(k, []Value{s.Base[k]}, false)
	}
	if err := s.Resources.check("resources"); err != nil {
		return err
	}
	names := map[string]bool{}
	var vnames []Value
	for i, v := range s.Variants {
		k := fmt.Sprintf("variants[%d]", i)
		if v.Name == "" || !slugSafe(v.Name) {
			return specErr(k+".name", "%q is not a valid variant name", v.Name)
		}
		if names[v.Name] {
			return specErr(k+".name", "duplicate variant %q", v.Name)
		}
		names[v.Name] = true
		vnames = append(vnames, strValue(v.Name))
		for _, key := range slices.Sorted(maps.Keys(v.Set)) {
			if key == "variant" {
				return specErr(k+".set.variant", `"variant" is set from the variant's name`)
			}
			define(key, []Value{v.Set[key]}, false)
		}
		if err := v.Resources.check(k + ".resources"); err != nil {
			return err
		}
	}
	if len(vnames) == 0 {
		vnames = []Value{strValue("base")}
	}
	define("variant", vnames, false)
	type owner struct {
		key  string
		when map[string][]Value
	}
	owners := map[string][]owner{}
	claim := func(key, k string, when map[string][]Value) error {
		for _, o := range owners[k] {
			if o.when == nil || when == nil || !disjoint(o.when, when) {
				return specErr(key, "parameter %q is also set by %s; two definitions need disjoint conditions (when)", k, o.key)
			}
		}
		owners[k] = append(owners[k], owner{key, when})
		return nil
	}
	for i, a := range s.Axes {
		k := fmt.Sprintf("grid[%d]", i)
		order++
		if a.Key == "" {
			return specErr(k+".key", "empty")
		}
		if a.Key == "variant" {
			return specErr(k+".key", `"variant" is set from the variant's name`)
		}
		if len(a.Values) == 0 {
			return specErr(k+".values", "axis %q has no values", a.Key)
		}
		for j, v := range a.Values {
			if d := slices.IndexFunc(a.Values[:j], v.equal); d >= 0 {
				return specErr(fmt.Sprintf("%s.values[%d]", k, j), "%q equals values[%d] (%q): each grid value must name a different run", v.Lit, d, a.Values[d].Lit)
			}
		}
		if err := checkCond(k+".when", a.When, order); err != nil {
			return err
		}
		if err := claim(k+".key", a.Key, a.When); err != nil {
			return err
		}
		define(a.Key, a.Values, false)
		known[a.Key].order = min(known[a.Key].order, order)
	}
	if s.Samples != nil {
		if s.Samples.Count <= 0 || s.Samples.Count > maxSamples {
			return specErr("samples.count", "must be in 1..%d", maxSamples)
		}
		for i, d := range s.Samples.Dists {
			k := fmt.Sprintf("samples.params[%d]", i)
			order++
			if d.Key == "" {
				return specErr(k+".key", "empty")
			}
			if d.Key == "variant" {
				return specErr(k+".key", `"variant" is set from the variant's name`)
			}
			n := 0
			if d.Uniform != nil {
				n++
				if len(d.Uniform) != 2 || !(d.Uniform[0] < d.Uniform[1]) || math.IsInf(d.Uniform[1]-d.Uniform[0], 0) {
					return specErr(k+".uniform", "need [lo, hi] with lo < hi, both finite")
				}
			}
			if d.LogUniform != nil {
				n++
				if len(d.LogUniform) != 2 || !(d.LogUniform[0] > 0 && d.LogUniform[0] < d.LogUniform[1]) || math.IsInf(d.LogUniform[1], 0) {
					return specErr(k+".log_uniform", "need [lo, hi] with 0 < lo < hi, both finite")
				}
			}
			if d.IntUniform != nil {
				n++
				if len(d.IntUniform) != 2 || d.IntUniform[0] > d.IntUniform[1] || uint64(d.IntUniform[1]-d.IntUniform[0]) >= 1<<62 {
					return specErr(k+".int_uniform", "need [lo, hi] with lo ≤ hi and hi - lo < 2^62")
				}
			}
			if d.Choice != nil {
				n++
				if len(d.Choice) == 0 {
					return specErr(k+".choice", "empty")
				}
				for j, v := range d.Choice {
					if dup := slices.IndexFunc(d.Choice[:j], v.equal); dup >= 0 {
						return specErr(fmt.Sprintf("%s.choice[%d]", k, j), "%q equals choice[%d]", v.Lit, dup)
					}
				}
			}
			if n != 1 {
				return specErr(k, "exactly one of uniform, log_uniform, int_uniform, choice is required")
			}
			if err := checkCond(k+".when", d.When, order); err != nil {
				return err
			}
			if err := claim(k+".key", d.Key, d.When); err != nil {
				return err
			}
			define(d.Key, d.Choice, d.Choice == nil)
			known[d.Key].order = min(known[d.Key].order, order)
		}
	}
	for i, c := range s.Exclude {
		k := fmt.Sprintf("exclude[%d]", i)
		if len(c) == 0 {
			return specErr(k, "empty condition would exclude every point")
		}
		if err := checkCond(k, c, math.MaxInt); err != nil {
			return err
		}
	}
	for k, v := range s.Inputs {
		if k == "" || strings.ContainsAny(k, "\n=") || strings.Contains(v, "\n") {
			return specErr("inputs."+k, "keys and values are single lines, keys without '='")
		}
	}
	return nil
}

func slugSafe(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

// maxExpand is the most points Expand returns; larger sweeps stream
// through Points and Ledger.Enqueue in bounded memory.
const maxExpand = 1_000_000

// maxRuns is the most points a spec may have: Count and Points refuse
// larger sweeps before any work, with a *SpecError on "grid" wrapping
// ErrTooLarge. Streamed through Points and Ledger.Enqueue, a sweep of
// maxRuns points was measured at 37 MiB peak resident memory
// (docs/losssweep.md).
const maxRuns = 10_000_000

// Expand lists every point of the sweep in order: variants outermost, then
// the grid axes in declared order (last fastest), then the samples. It
// refuses sweeps above maxExpand points (use Points).
func (s *Spec) Expand() ([]Point, error) {
	n, err := s.countPoints()
	if err != nil {
		return nil, err
	}
	if n > maxExpand {
		return nil, &SpecError{Key: "grid", Err: fmt.Errorf("%w: %d points, Expand holds at most %d in memory; stream them with Spec.Points and Ledger.Enqueue", ErrTooLarge, n, maxExpand)}
	}
	pts := make([]Point, 0, n)
	for p := range s.walk(true) {
		pts = append(pts, p)
	}
	return pts, nil
}

// countPoints returns the number of points after validating the spec, including
// what only the expansion shows: an axis, a random parameter or an
// exclusion that never applies is a *SpecError, and so is a spec with no
// point left or more than maxRuns.
func (s *Spec) countPoints() (int, error) {
	if err := s.validate(); err != nil {
		return 0, err
	}
	if s.Samples == nil && len(s.Exclude) == 0 && !s.conditional() {
		n := max(len(s.Variants), 1)
		for _, a := range s.Axes {
			if n > maxRuns/len(a.Values) {
				return 0, s.tooLarge(-1)
			}
			n *= len(a.Values)
		}
		return n, nil
	}
	var st walkStats
	n := 0
	for range s.walkStats(false, &st) {
		n++
		if n > maxRuns {
			return 0, s.tooLarge(-1)
		}
	}
	for i, used := range st.axisUsed {
		if !used {
			return 0, specErr(fmt.Sprintf("grid[%d].when", i), "axis %q applies to no point", s.Axes[i].Key)
		}
	}
	for i, used := range st.distUsed {
		if !used {
			return 0, specErr(fmt.Sprintf("samples.params[%d].when", i), "parameter %q applies to no point", s.Samples.Dists[i].Key)
		}
	}
	for i, m := range st.excluded {
		if m == 0 {
			return 0, specErr(fmt.Sprintf("exclude[%d]", i), "matches no point")
		}
	}
	if n == 0 {
		return 0, specErr("exclude", "every point is excluded")
	}
	return n, nil
}

func (s *Spec) tooLarge(n int) error {
	what := "more than"
	if n >= 0 {
		what = strconv.Itoa(n) + " points,"
	}
	return &SpecError{Key: "grid", Err: fmt.Errorf("%w: %s the limit of %d runs per sweep (maxRuns); split the sweep or sample it (samples)", ErrTooLarge, what, maxRuns)}
}

func (s *Spec) conditional() bool {
	for _, a := range s.Axes {
		if a.When != nil {
			return true
		}
	}
	return false
}

// Points validates the spec and returns its points in
// expansion order as a sequence that builds one point at a time, so that a
// sweep of maxRuns points streams in bounded memory.
func (s *Spec) Points() (iter.Seq[Point], int, error) {
	n, err := s.countPoints()
	if err != nil {
		return nil, 0, err
	}
	return s.walk(true), n, nil
}

type walkStats struct {
	axisUsed, distUsed []bool
	excluded           []int
}

func (s *Spec) walk(full bool) iter.Seq[Point] { return s.walkStats(full, nil) }

// walkStats yields the points; with full false the slugs are left empty
// (ids are needed anyway to drop repeated draws). st, when non-nil,
// records which axes, random parameters and exclusions were used.
func (s *Spec) walkStats(full bool, st *walkStats) iter.Seq[Point] {
	return func(yield func(Point) bool) {
		if st != nil {
			st.axisUsed = make([]bool, len(s.Axes))
			if s.Samples != nil {
				st.distUsed = make([]bool, len(s.Samples.Dists))
			}
			st.excluded = make([]int, len(s.Exclude))
		}
		variants := s.Variants
		if len(variants) == 0 {
			variants = []Variant{{Name: "base"}}
		}
		draws := s.draws()
		index := 0
		params := map[string]Value{}
		var slug []byte
		// emit builds the points of one grid point: one per distinct draw.
		emit := func(v *Variant, res Resources) bool {
			var seen map[string]bool
			if len(draws) > 1 {
				seen = make(map[string]bool, len(draws))
			}
			for di, d := range draws {
				p := Point{Params: maps.Clone(params), resources: res}
				sl := slug
				if d != nil {
					if full {
						sl = fmt.Appendf(slices.Clip(sl), "-r%d", di)
					}
					for i, dist := range s.Samples.Dists {
						if !holds(dist.When, p.Params) {
							continue
						}
						if st != nil {
							st.distUsed[i] = true
						}
						x := d[i]
						p.Params[dist.Key] = x
						if full {
							sl = append(sl, '-')
							sl = append(sl, cmpOr(dist.Short, dist.Key)...)
							sl = append(sl, slugText(sampleLit(x))...)
						}
					}
				}
				if s.excluded(p.Params, st) {
					continue
				}
				p.ID = Identity(p.Params)
				if seen != nil {
					if seen[p.ID] {
						continue
					}
					seen[p.ID] = true
				}
				p.index = index
				p.Slug = string(sl)
				index++
				if !yield(p) {
					return false
				}
			}
			return true
		}
		var rec func(i int, v *Variant, res Resources) bool
		rec = func(i int, v *Variant, res Resources) bool {
			if i == len(s.Axes) {
				return emit(v, res)
			}
			a := &s.Axes[i]
			if !holds(a.When, params) {
				return rec(i+1, v, res)
			}
			if st != nil {
				st.axisUsed[i] = true
			}
			old, had := params[a.Key]
			n := len(slug)
			for _, x := range a.Values {
				params[a.Key] = x
				if full {
					slug = append(slug[:n], '-')
					slug = append(slug, cmpOr(a.Short, a.Key)...)
					slug = append(slug, slugText(x.Lit)...)
				}
				if !rec(i+1, v, res) {
					return false
				}
			}
			slug = slug[:n]
			if had {
				params[a.Key] = old
			} else {
				delete(params, a.Key)
			}
			return true
		}
		for vi := range variants {
			v := &variants[vi]
			clear(params)
			maps.Copy(params, s.Base)
			maps.Copy(params, v.Set)
			params["variant"] = strValue(v.Name)
			slug = append(slug[:0], v.Name...)
			if !rec(0, v, s.Resources.merge(v.Resources)) {
				return
			}
		}
	}
}

func (s *Spec) excluded(p map[string]Value, st *walkStats) bool {
	out := false
	for i, c := range s.Exclude {
		if holds(c, p) {
			if st == nil {
				return true
			}
			st.excluded[i]++
			out = true
		}
	}
	return out
}

// draws returns the random samples, each the drawn value of every Dist in
// order, or one nil draw when the spec has no samples.
func (s *Spec) draws() [][]Value {
	if s.Samples == nil {
		return [][]Value{nil}
	}
	rng := rand.New(rand.NewPCG(s.Samples.Seed, 0x5eed))
	out := make([][]Value, s.Samples.Count)
	for i := range out {
		d := make([]Value, len(s.Samples.Dists))
		for j, dist := range s.Samples.Dists {
			switch {
			case dist.Uniform != nil:
				d[j] = floatValue(dist.Uniform[0] + rng.Float64()*(dist.Uniform[1]-dist.Uniform[0]))
			case dist.LogUniform != nil:
				lo, hi := math.Log(dist.LogUniform[0]), math.Log(dist.LogUniform[1])
				d[j] = floatValue(math.Exp(lo + rng.Float64()*(hi-lo)))
			case dist.IntUniform != nil:
				lo, hi := dist.IntUniform[0], dist.IntUniform[1]
				d[j] = intValue(lo + int64(rng.Uint64N(uint64(hi-lo)+1)))
			default:
				d[j] = dist.Choice[rng.IntN(len(dist.Choice))]
			}
		}
		out[i] = d
	}
	return out
}

// sampleLit is a sampled value's text for a slug: floats at three
// significant digits (the run id keeps the full value), others as written.
func sampleLit(v Value) string {
	if v.Kind == Float {
		return strconv.FormatFloat(v.f, 'g', 3, 64)
	}
	return v.Lit
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// slugText writes lit with the characters a file name or a shell word may
// hold (letters, digits, '.', '-', '_') as they are, and every other byte
// as '~' and two hex digits ("a b" is "a~20b", "a/b" "a~2fb", "a~b"
// "a~7eb"), so that distinct values never share a slug.
func slugText(lit string) string {
	var b strings.Builder
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "~%02x", c)
		}
	}
	return b.String()
}
