package divergence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Norm selects the norm taken over the axes after the first.
type Norm int

const (
	// L2 is the Euclidean norm over the remaining axes (the default).
	L2 Norm = iota
	// LInf is the largest absolute difference over the remaining axes.
	LInf
)

// String returns "L2" or "Linf".
func (n Norm) String() string {
	if n == LInf {
		return "Linf"
	}
	return "L2"
}

// NamedRun is one run to compare: Run when non-nil, else the archive at
// Path, opened and closed by the comparison.
type NamedRun struct {
	Name string
	Path string
	Run  *Run
}

// Row is the maximum divergence of one key between runs A and B.
type Row struct {
	A, B, Key string
	// Max is max_t ‖a_t − b_t‖; NaN when the data contain NaN or the
	// comparison was impossible (then Warning says why).
	Max float64
	// Steps is the length of axis 0 compared (1 for a scalar).
	Steps int
	// Warning is empty when the comparison went through cleanly.
	Warning string
	// Bounded reports that a tolerance applies to this key; Pass is then
	// Max <= Tolerance (false for NaN).
	Bounded   bool
	Tolerance float64
	Pass      bool
}

// Options configures [Compare]. The zero value compares with the L2 norm
// and no tolerances.
type Options struct {
	Norm Norm
	// Tolerance bounds Max per key; the entry "*" applies to keys without
	// their own entry. Keys with no bound are reported without pass/fail.
	Tolerance map[string]float64
	// ChunkSize is the number of elements read per run at a time; zero
	// means 1<<16.
	ChunkSize int
}

// Pairwise returns one Row per pair of runs (in the order the runs are
// given, a before b) and key, comparing with the L2 norm. nil keys means the
// union of the runs' keys, in order of first appearance (when no run can be
// read, one row per pair with an empty Key carries the warnings). It is
// Compare with zero Options.
func Pairwise(runs []NamedRun, keys []string) []Row {
	return Compare(runs, keys, Options{})
}

// Compare is [Pairwise] with options. Rows come pair by pair, keys in order
// within a pair. A run that cannot be opened, a key a run lacks, a shape
// mismatch or a member that fails to read gives its rows NaN and a Warning
// naming the run, file and key; other rows are unaffected. Compare panics if
// two runs share a name.
func Compare(runs []NamedRun, keys []string, opt Options) []Row {
	rows, _ := CompareContext(context.Background(), runs, keys, opt)
	return rows
}

// CompareContext is [Compare] that stops when ctx is done: reading large
// archives can take minutes. It then returns every row, those it could not
// finish with Max NaN and a Warning saying the comparison stopped, and
// ctx.Err(); the rows of keys finished before are as Compare gives them.
func CompareContext(ctx context.Context, runs []NamedRun, keys []string, opt Options) ([]Row, error) {
	for i := range runs {
		for j := range i {
			if runs[i].Name == runs[j].Name {
				panic("divergence: duplicate run name")
			}
		}
	}
	chunk := opt.ChunkSize
	if chunk <= 0 {
		chunk = 1 << 16
	}
	opened := make([]*Run, len(runs))
	openErr := make([]error, len(runs))
	for i, nr := range runs {
		if nr.Run != nil {
			opened[i] = nr.Run
			continue
		}
		opened[i], openErr[i] = Open(nr.Path)
		if opened[i] != nil {
			defer opened[i].Close()
		}
	}
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
		var res []Row
		if err := ctx.Err(); err != nil {
			res = make([]Row, npairs)
			for p := range res {
				res[p] = Row{Max: math.NaN(), Warning: stoppedWarning(err)}
			}
		} else {
			res = compareKey(ctx, runs, opened, openErr, key, opt.Norm, chunk)
		}
		p := 0
		for i := range runs {
			for j := i + 1; j < len(runs); j++ {
				r := res[p]
				r.A, r.B, r.Key = runs[i].Name, runs[j].Name, key
				if tol, ok := opt.Tolerance[key]; ok {
					r.Bounded, r.Tolerance = true, tol
				} else if tol, ok := opt.Tolerance["*"]; ok {
					r.Bounded, r.Tolerance = true, tol
				}
				r.Pass = r.Bounded && r.Max <= r.Tolerance
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
	shape []int
	src   source
	warn  string // why this run cannot be compared; "" when fine
}

// openMember opens one key of r for streaming.
func openMember(r *Run, key string, chunk int) (member, error) {
	rd, err := r.arch.Reader(key)
	if err != nil {
		return member{}, r.wrap(key, err)
	}
	if rd.Fortran && nontrivial(rd.Shape) > 1 {
		// Storage order differs from C order: read this one whole.
		rd.Close()
		a, err := r.Array(key)
		if err != nil {
			return member{}, err
		}
		return member{shape: a.Shape, src: &memSource{data: a.Data, chunk: chunk}}, nil
	}
	return member{shape: rd.Shape, src: startStream(rd, chunk)}, nil
}

// compareKey returns the rows for one key in pair order (Max, Steps and
// Warning only).
func compareKey(ctx context.Context, runs []NamedRun, opened []*Run, openErr []error, key string, norm Norm, chunk int) []Row {
	ms := make([]member, len(runs))
	for i, r := range opened {
		name := runs[i].Name
		if r == nil {
			ms[i].warn = fmt.Sprintf("%s: cannot open %s: %v", name, runs[i].Path, openErr[i])
			continue
		}
		m, err := openMember(r, key, chunk)
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
		for _, m := range ms {
			if m.src != nil {
				m.src.stop()
			}
		}
	}()

	// Group the runs that can be compared by shape and stream each group.
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
		if len(group) >= 2 {
			streamGroup(ctx, ms, group, norm, chunk, res, runs)
		}
	}
	rows := make([]Row, 0, len(runs)*(len(runs)-1)/2)
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			var r Row
			switch {
			case ms[i].warn != "" || ms[j].warn != "":
				r.Max = math.NaN()
				r.Warning = joinWarn(ms[i].warn, ms[j].warn)
			case !slices.Equal(ms[i].shape, ms[j].shape):
				r.Max = math.NaN()
				r.Warning = fmt.Sprintf("shape mismatch: %s %v vs %s %v", runs[i].Name, ms[i].shape, runs[j].Name, ms[j].shape)
			default:
				pr := res[[2]int{i, j}]
				r.Max, r.Steps, r.Warning = pr.max, pr.steps, pr.warn
			}
			rows = append(rows, r)
		}
	}
	return rows
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
