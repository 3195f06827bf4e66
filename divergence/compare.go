package divergence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// Norm selects the norm taken over the axes after the first.
type Norm int

const (
	// L2 is the Euclidean norm over the remaining axes (the default).
	L2 Norm = iota
	// LInf is the largest absolute difference over the remaining axes.
	LInf
)

// name returns "L2" or "Linf".
func (n Norm) name() string {
	if n == LInf {
		return "Linf"
	}
	return "L2"
}

// NamedRun is one run to compare: the archive at Path, opened and closed
// by the comparison, under Name.
type NamedRun struct {
	Name string
	Path string
	// run, when set, is used instead of opening Path (tests).
	run *Run
}

// Row is the maximum divergence of one key between runs A and B, and the
// element-wise comparison numpy.testing.assert_allclose(a, b) makes (B is
// the desired array of assert_allclose).
type Row struct {
	A, B, Key string
	// Max is max_t ‖a_t − b_t‖; NaN when an element is NaN on one side
	// only or the comparison was impossible (then Warning says why).
	// Elements NaN on both sides are equal, as numpy.testing.assert_allclose
	// has it by default (equal_nan=True): they are left out of the norms
	// and counted in NaNBoth.
	Max float64
	// MaxStep is the step (index along axis 0) where Max occurs, the first
	// on ties, or the first step holding a one-sided NaN when Max is NaN;
	// -1 when every step agrees exactly or nothing was compared.
	MaxStep int
	// steps is the length of axis 0 compared (1 for a scalar); WriteJSON
	// and WriteCSV print it.
	steps int
	// Warning is empty when the comparison went through cleanly.
	Warning string
	// note remarks on a comparison that went through: "no elements" when
	// the arrays have equal shapes with no elements (Max is then 0 and the
	// row passes, as numpy.testing.assert_allclose does). String, WriteJSON
	// and WriteCSV print it.
	note string
	// exact reports that both runs hold integers (or bools) for this key,
	// compared as integers: values beyond 2^53, which float64 cannot hold,
	// differ when they differ, uint64 values above 2^63 − 1 included, and
	// a signed value against an unsigned one by sign and magnitude; each
	// difference is computed exactly and rounded once to float64. Pairs
	// with a float member are compared as float64, as NumPy does. String
	// says "(integers, exact)"; WriteJSON and WriteCSV print it.
	exact bool

	// Element by element, as numpy.testing.assert_allclose(a, b) computes
	// it (NumPy 1.24: its "Mismatched elements", "Max absolute difference"
	// and "Max relative difference"), when a Closeness applies to the key
	// (these statistics cost about three times the norm's CPU time per
	// element, so they are not computed otherwise). Elements NaN on both
	// sides, or the same infinity on both sides, agree (equal_nan=True).
	//
	// Elements is the number of elements compared; 0 when the comparison
	// was impossible or no Closeness applies (the fields below are then
	// zero).
	Elements int
	// MaxAbs is the largest |a − b| (NaN when one side is NaN where the
	// other is not; the first such element then counts as the maximum, as
	// np.argmax does); MaxAbsAt is its index, first in C order on ties, nil
	// when every element agrees.
	MaxAbs   float64
	MaxAbsAt []int
	// MaxRel is the largest |a − b|/|b| over elements with b ≠ 0, and +Inf
	// when every such b is 0 and some element differs, as NumPy reports it;
	// MaxRelAt is its index (nil when there is none).
	MaxRel   float64
	MaxRelAt []int
	// nanBoth counts the elements NaN on both sides (whether or not a
	// Closeness applies; 0 when the comparison was impossible); String,
	// WriteJSON and WriteCSV print it.
	nanBoth int

	// Mismatched is the number of elements not within the key's
	// Closeness, when one applies (an element NaN or infinite on one side
	// only never is).
	Mismatched int
	// Pass reports that a bound applies to this key (Options.Tolerance on
	// Max, Options.Close on the elements, or both) and every bound holds:
	// Max <= the tolerance (false for NaN), and no element mismatched.
	// String, WriteJSON and WriteCSV print the bounds and the verdict.
	Pass bool

	bounded      bool
	hasTolerance bool
	tolerance    float64
	closeness    *Closeness
}

// Closeness bounds each element as numpy.testing.assert_allclose(a, b,
// rtol=RTol, atol=ATol) does: a is close to b when
//
//	|a − b| ≤ ATol + RTol·|b|
//
// (b is the desired value; NaN on both sides and equal infinities are
// close, any other non-finite difference is not). assert_allclose's
// defaults are RTol 1e-7 and ATol 0. For integers the difference is exact
// and the comparison is made in float64, so it is exact whenever the
// difference and the bound are below 2^53.
type Closeness struct {
	RTol, ATol float64
}

// Options configures [Compare]. The zero value compares with the L2 norm
// and no bounds.
type Options struct {
	Norm Norm
	// Tolerance bounds Max per key; the entry "*" applies to keys without
	// their own entry. Keys with no bound are reported without pass/fail.
	Tolerance map[string]float64
	// Close bounds every element per key, as numpy.testing.assert_allclose
	// does; the entry "*" applies to keys without their own entry. RTol and
	// ATol must be ≥ 0 (Compare panics otherwise).
	Close map[string]Closeness
	// chunkSize is the number of elements read per run at a time; zero
	// means 1<<16.
	chunkSize int
}

// Pairwise returns one Row per pair of runs (in the order the runs are
// given, a before b) and key, comparing with the L2 norm and no bounds.
// nil keys means the union of the runs' keys, in order of first appearance
// (when no run can be read, one row per pair with an empty Key carries the
// warnings). It is Compare without options or cancellation.
func Pairwise(runs []NamedRun, keys []string) []Row {
	rows, _ := Compare(context.Background(), runs, keys, Options{})
	return rows
}

// Compare is [Pairwise] with options, stopping when ctx is done (reading
// large archives can take minutes). Rows come pair by pair, keys in order
// within a pair. A run that cannot be opened, a key a run lacks, a shape
// mismatch or a member that fails to read gives its rows NaN and a Warning
// naming the run, file and key; other rows are unaffected. Two runs that
// are one file (os.SameFile) are not compared: their rows get NaN and a
// warning, since a file always agrees with itself. When ctx is done,
// Compare returns every row, those it could not finish with Max NaN and a
// Warning saying the comparison stopped, and ctx.Err(); the rows of keys
// finished before are complete. Compare panics if two runs share a name or
// a Closeness is negative or NaN.
func Compare(ctx context.Context, runs []NamedRun, keys []string, opt Options) ([]Row, error) {
	for i := range runs {
		for j := range i {
			if runs[i].Name == runs[j].Name {
				panic("divergence: duplicate run name")
			}
		}
	}
	for _, c := range opt.Close {
		if !(c.RTol >= 0 && c.ATol >= 0) {
			panic("divergence: negative or NaN Closeness")
		}
	}
	chunk := opt.chunkSize
	if chunk <= 0 {
		chunk = 1 << 16
	}
	opened := make([]*Run, len(runs))
	openErr := make([]error, len(runs))
	for i, nr := range runs {
		if nr.run != nil {
			opened[i] = nr.run
			continue
		}
		opened[i], openErr[i] = Open(nr.Path)
		if opened[i] != nil {
			defer opened[i].Close()
		}
	}
	// Two runs that are one file (the same path, a link, one file of a
	// shared file system under two paths) would agree exactly: their rows
	// say so instead of passing.
	info := make([]os.FileInfo, len(runs))
	for i, r := range opened {
		if r != nil {
			info[i], _ = r.f.Stat()
		}
	}
	sameFile := func(i, j int) bool { return info[i] != nil && info[j] != nil && os.SameFile(info[i], info[j]) }
	if keys == nil {
		for _, r := range opened {
			if r == nil {
				continue
			}
			for _, k := range r.Keys() {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	if keys == nil && slices.ContainsFunc(openErr, func(e error) bool { return e != nil }) {
		// No readable run names a key: still report the unreadable files,
		// on rows with an empty key.
		keys = []string{""}
	}
	npairs := len(runs) * (len(runs) - 1) / 2
	rows := make([]Row, npairs*len(keys))
	for k, key := range keys {
		var bound *Closeness
		if c, ok := opt.Close[key]; ok {
			bound = &c
		} else if c, ok := opt.Close["*"]; ok {
			bound = &c
		}
		var res []Row
		if err := ctx.Err(); err != nil {
			res = make([]Row, npairs)
			for p := range res {
				res[p] = Row{Max: math.NaN(), MaxStep: -1, Warning: stoppedWarning(err)}
			}
		} else {
			res = compareKey(ctx, runs, opened, openErr, key, opt.Norm, chunk, bound)
		}
		p := 0
		for i := range runs {
			for j := i + 1; j < len(runs); j++ {
				r := res[p]
				if sameFile(i, j) && r.Warning == "" {
					r = Row{Max: math.NaN(), MaxStep: -1, steps: r.steps,
						Warning: fmt.Sprintf("%s and %s are one file (%s, %s): not compared", runs[i].Name, runs[j].Name, runPath(runs[i]), runPath(runs[j]))}
				}
				r.A, r.B, r.Key = runs[i].Name, runs[j].Name, key
				if tol, ok := opt.Tolerance[key]; ok {
					r.hasTolerance, r.tolerance = true, tol
				} else if tol, ok := opt.Tolerance["*"]; ok {
					r.hasTolerance, r.tolerance = true, tol
				}
				r.closeness = bound
				r.bounded = r.hasTolerance || bound != nil
				// Max is NaN when the pair could not be compared, or
				// holds a NaN on one side: never a pass.
				r.Pass = r.bounded && !math.IsNaN(r.Max) && (!r.hasTolerance || r.Max <= r.tolerance) &&
					(bound == nil || r.Mismatched == 0)
				rows[p*len(keys)+k] = r
				p++
			}
		}
	}
	return rows, ctx.Err()
}

func stoppedWarning(err error) string { return "comparison stopped: " + err.Error() }

// member is one run's view of one key.
type member struct {
	shape    []int
	integer  bool
	unsigned bool        // an unsigned dtype: ints yields each value's uint64 bits
	rd       *npy.Reader // streamed
	whole    *npy.Array  // read whole (Fortran order)
	warn     string      // why this run cannot be compared; "" when fine
	failed   error       // a reopen failed: the member's pairs report it
}

// reopen makes a member streamed once streamable again (a member read
// whole keeps its data).
func (m *member) reopen(r *Run, key string) error {
	if m.whole != nil || m.rd != nil {
		return nil
	}
	n, err := openMember(r, key)
	if err != nil {
		return err
	}
	m.rd, m.whole = n.rd, n.whole
	return nil
}

// openMember opens one key of r for streaming.
func openMember(r *Run, key string) (member, error) {
	rd, err := r.arch.Reader(key)
	if err != nil {
		return member{}, r.wrap(key, err)
	}
	if rd.Fortran && nontrivial(rd.Shape) > 1 {
		// Storage order differs from C order: read this one whole.
		rd.Close()
		a, err := r.arch.Array(key)
		if err != nil {
			return member{}, r.wrap(key, err)
		}
		return member{shape: a.Shape, integer: a.Integer(), unsigned: a.Unsigned(), whole: a}, nil
	}
	return member{shape: rd.Shape, integer: rd.Integer(), unsigned: rd.Unsigned(), rd: rd}, nil
}

// close releases a member that was opened but never streamed.
func (m *member) close() {
	if m.rd != nil {
		m.rd.Close()
		m.rd = nil
	}
}

// floats and ints start streaming the member (whose reader then belongs
// to the source).
func (m *member) floats(chunk int) (source[float64], error) {
	return startMember(m, chunk, (*npy.Array).Float64, readFloats)
}

// ints yields an unsigned member's values as uint64 bits (see
// acc.equal), so that those above MaxInt64 are exact too.
func (m *member) ints(chunk int) (source[int64], error) {
	if m.unsigned {
		return startMember(m, chunk, uintBits, uintReader())
	}
	return startMember(m, chunk, (*npy.Array).Int64, readInts)
}

func uintBits(a *npy.Array) ([]int64, error) {
	u, err := a.Uint64()
	if err != nil {
		return nil, err
	}
	x := make([]int64, len(u))
	for i, v := range u {
		x[i] = int64(v)
	}
	return x, nil
}

// uintReader returns a read function for one stream (its buffer is the
// stream's own) that decodes uint64s into int64 bits.
func uintReader() func(*npy.Reader, []int64) (int, error) {
	var buf []uint64
	return func(r *npy.Reader, dst []int64) (int, error) {
		if cap(buf) < len(dst) {
			buf = make([]uint64, len(dst))
		}
		n, err := r.ReadUint64(buf[:len(dst)])
		for i, v := range buf[:n] {
			dst[i] = int64(v)
		}
		return n, err
	}
}

func startMember[T elem](m *member, chunk int, whole func(*npy.Array) ([]T, error), read func(*npy.Reader, []T) (int, error)) (source[T], error) {
	if m.whole != nil {
		x, err := whole(m.whole)
		return &memSource[T]{data: x, chunk: chunk}, err
	}
	rd := m.rd
	m.rd = nil
	return startStream(rd, chunk, read), nil
}

// compareKey returns the rows for one key in pair order (everything but
// names and bounds).
func compareKey(ctx context.Context, runs []NamedRun, opened []*Run, openErr []error, key string, norm Norm, chunk int, bound *Closeness) []Row {
	ms := make([]member, len(runs))
	for i, r := range opened {
		name := runs[i].Name
		if r == nil {
			ms[i].warn = fmt.Sprintf("%s: cannot open %s: %v", name, runs[i].Path, openErr[i])
			continue
		}
		m, err := openMember(r, key)
		if err != nil {
			if errors.Is(err, ErrKey) {
				ms[i].warn = fmt.Sprintf("%s: key %q missing in %s", name, key, r.Path)
			} else {
				ms[i].warn = fmt.Sprintf("%s: %v", name, err)
			}
			continue
		}
		ms[i] = m
	}
	defer func() {
		for i := range ms {
			ms[i].close()
		}
	}()

	// Group the runs that can be compared by shape and stream each group.
	// Exactness is decided per pair: a pair of integer members is compared
	// as integers, any pair with a float member as float64 (as NumPy
	// would), so one float run does not turn the integer pairs of its
	// group inexact. A group with both kinds streams its integer members
	// twice, once per pass.
	res := map[[2]int]pairResult{}
	grouped := make([]bool, len(runs))
	for i := range runs {
		if grouped[i] || ms[i].warn != "" {
			continue
		}
		group := []int{i}
		for j := i + 1; j < len(runs); j++ {
			if !grouped[j] && ms[j].warn == "" && slices.Equal(ms[i].shape, ms[j].shape) {
				group = append(group, j)
				grouped[j] = true
			}
		}
		if len(group) < 2 {
			continue
		}
		var ints []int
		for _, g := range group {
			if ms[g].integer {
				ints = append(ints, g)
			}
		}
		if len(ints) >= 2 {
			unsigned := make([]bool, len(ints))
			for k, g := range ints {
				unsigned[k] = ms[g].unsigned
			}
			gr := streamMembers(ctx, ms, ints, runs, chunk, norm, bound, nil, unsigned, (*member).ints, addInts)
			for a := range ints {
				for b := a + 1; b < len(ints); b++ {
					pr := gr[a][b]
					pr.exact = true
					res[[2]int{ints[a], ints[b]}] = pr
				}
			}
		}
		if len(ints) == len(group) {
			continue
		}
		mixed := func(a, b int) bool { return !ms[group[a]].integer || !ms[group[b]].integer }
		if len(ints) >= 2 {
			// The integer pass consumed these members' readers.
			for _, g := range ints {
				if err := ms[g].reopen(opened[g], key); err != nil {
					ms[g].failed = err
				}
			}
		}
		gr := streamMembers(ctx, ms, group, runs, chunk, norm, bound, mixed, nil, (*member).floats, addFloats)
		for a := range group {
			for b := a + 1; b < len(group); b++ {
				if mixed(a, b) {
					res[[2]int{group[a], group[b]}] = gr[a][b]
				}
			}
		}
	}
	rows := make([]Row, 0, len(runs)*(len(runs)-1)/2)
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			r := Row{Max: math.NaN(), MaxStep: -1}
			switch {
			case ms[i].warn != "" || ms[j].warn != "":
				r.Warning = joinWarn(ms[i].warn, ms[j].warn)
			case !slices.Equal(ms[i].shape, ms[j].shape):
				r.Warning = fmt.Sprintf("key %q: shape mismatch: %s %v in %s vs %s %v in %s", key,
					runs[i].Name, ms[i].shape, runPath(runs[i]), runs[j].Name, ms[j].shape, runPath(runs[j]))
			default:
				pr := res[[2]int{i, j}]
				r.Max, r.MaxStep, r.steps, r.Warning, r.note, r.exact = pr.max, pr.maxStep, pr.steps, pr.warn, pr.note, pr.exact
				if pr.warn == "" || pr.warn == nanWarning {
					r.nanBoth = pr.el.nanBoth
				}
				if bound != nil && (pr.warn == "" || pr.warn == nanWarning) {
					e := pr.el
					r.Elements, r.MaxAbs, r.MaxRel, r.Mismatched = e.n, e.maxAbs, e.maxRel, e.mismatched
					r.MaxAbsAt, r.MaxRelAt = unravel(e.absAt, ms[i].shape), unravel(e.relAt, ms[i].shape)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// streamMembers starts the group's members as T and compares the pairs
// (indices into group) that want accepts; nil means every pair.
func streamMembers[T elem](ctx context.Context, ms []member, group []int, runs []NamedRun, chunk int, norm Norm, bound *Closeness,
	want func(a, b int) bool, unsigned []bool, start func(*member, int) (source[T], error), add func(*acc, []T, []T, int, Norm, bool)) [][]pairResult {
	srcs := make([]source[T], len(group))
	names := make([]string, len(group))
	paths := make([]string, len(group))
	for k, g := range group {
		names[k], paths[k] = runs[g].Name, runPath(runs[g])
		var src source[T]
		err := ms[g].failed
		if err == nil {
			src, err = start(&ms[g], chunk)
		}
		if err != nil {
			// A member that could not be reopened or converted: its
			// pairs report it.
			src = &failedSource[T]{err: err}
		}
		srcs[k] = src
	}
	defer func() {
		for _, s := range srcs {
			s.stop()
		}
	}()
	return groupStream(ctx, srcs, names, paths, ms[group[0]].shape, norm, bound, want, unsigned, add)
}

// failedSource is a member whose data could not be decoded.
type failedSource[T elem] struct{ err error }

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (f *failedSource[T]) next() ([]T, error) { return nil, f.err }

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (f *failedSource[T]) release([]T) {}

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (f *failedSource[T]) stop() {}

// unravel turns a flat C-order index into one index per axis; nil for -1.
func unravel(flat int, shape []int) []int {
	if flat < 0 {
		return nil
	}
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = flat % shape[k]
			flat /= shape[k]
		}
	}
	return idx
}

func nontrivial(shape []int) int {
	n := 0
	for _, s := range shape {
		if s > 1 {
			n++
		}
	}
	return n
}

// steps returns the length of axis 0 and the elements per step.
func steps(shape []int) (n, rowLen int) {
	if len(shape) == 0 {
		return 1, 1
	}
	rowLen = 1
	for _, s := range shape[1:] {
		rowLen *= s
	}
	return shape[0], rowLen
}
