package overlap

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/balance"
	"github.com/crosscluster/crosscluster/internal/logit"
	"github.com/crosscluster/crosscluster/internal/rank"
	"github.com/crosscluster/crosscluster/stats"
)

// Errors wrapped by Fit and Sweep; test with errors.Is.
var (
	// ErrBand: a band is not 0 <= Lo < Hi <= 1.
	ErrBand = errors.New("overlap: invalid band")
	// ErrLabel: a domain label is neither 0 (source) nor 1 (target).
	ErrLabel = errors.New("overlap: domain label not 0 or 1")
	// ErrEmpty: there are no rows or no features.
	ErrEmpty = errors.New("overlap: no data")
	// ErrEmptyDomain: one domain has no rows.
	ErrEmptyDomain = errors.New("overlap: empty domain")
	// ErrNonFinite: a feature value is NaN or ±Inf and imputation was not
	// asked for (or a whole column is non-finite).
	ErrNonFinite = errors.New("overlap: non-finite feature value")
	// ErrFolds: more cross-fit folds than one of the domains has rows, so
	// that some fold could not hold a row of each domain.
	ErrFolds = errors.New("overlap: too many cross-fit folds")
	// ErrOption: an option was given an invalid argument (fewer than two
	// folds, an undefined KS alternative or method, an undefined class
	// weight). Fit returns it before any work.
	ErrOption = errors.New("overlap: invalid option")
)

// Domains, as in y.
const (
	Source = 0
	Target = 1
)

// Band is a propensity band, inclusive on both ends.
type Band struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// contains reports whether Lo <= p <= Hi.
func (b Band) contains(p float64) bool { return p >= b.Lo && p <= b.Hi }

// String formats the band as "[lo,hi]".
func (b Band) String() string {
	return "[" + strconv.FormatFloat(b.Lo, 'g', -1, 64) + "," + strconv.FormatFloat(b.Hi, 'g', -1, 64) + "]"
}

// Check returns an error wrapping ErrBand unless 0 <= Lo < Hi <= 1.
func (b Band) Check() error {
	if !(b.Lo >= 0 && b.Lo < b.Hi && b.Hi <= 1) {
		return fmt.Errorf("%w %v: need 0 <= lo < hi <= 1", ErrBand, b)
	}
	return nil
}

// defaultSweep returns the bands Sweep uses by default.
func defaultSweep() []Band { return []Band{{0.05, 0.95}, {0.1, 0.9}, {0.2, 0.8}} }

// Option configures Fit. An option given an invalid argument makes Fit
// return an error wrapping ErrOption.
type Option func(*config)

type config struct {
	err    error // the first invalid option
	names  []string
	cw     stats.ClassWeight
	alt    stats.Alternative
	method stats.KSMethod
	impute bool
	folds  int
	seed   uint64
	c      float64
	bins   int
	levels []float64
}

// WithFeatureNames names the columns of X in results and reports; the
// default is x0, x1, …. Fit panics if the count differs from X's columns.
func WithFeatureNames(names ...string) Option {
	names = slices.Clone(names)
	return func(c *config) { c.names = names }
}

// WithClassWeight sets the classifier's class weights: stats.ClassWeightNone
// (the default, the seed's call) or stats.ClassWeightBalanced (what the
// published reference runs used).
func WithClassWeight(cw stats.ClassWeight) Option {
	if cw != stats.ClassWeightNone && cw != stats.ClassWeightBalanced {
		return invalid("class weight %d is not ClassWeightNone or ClassWeightBalanced", cw)
	}
	return func(c *config) { c.cw = cw }
}

// WithKS sets the KS alternative and p-value method (default two-sided,
// auto: exact when both domains have at most 10000 jobs).
func WithKS(alt stats.Alternative, method stats.KSMethod) Option {
	if alt < stats.TwoSided || alt > stats.Greater {
		return invalid("KS alternative %v is not TwoSided, Less or Greater", alt)
	}
	if method < stats.KSAuto || method > stats.KSAsymp {
		return invalid("KS method %v is not KSAuto, KSExact or KSAsymp", method)
	}
	return func(c *config) { c.alt, c.method = alt, method }
}

// invalid returns an option that makes Fit fail with ErrOption: a bad
// argument is reported where the caller can handle it, before any worker
// goroutine could trip over it.
func invalid(format string, args ...any) Option {
	err := fmt.Errorf("%w: "+format, append([]any{ErrOption}, args...)...)
	return func(c *config) {
		if c.err == nil {
			c.err = err
		}
	}
}

// WithImpute replaces NaN and ±Inf feature values by the column's median
// over its finite values (pooled over both domains) instead of failing.
func WithImpute() Option { return func(c *config) { c.impute = true } }

// WithCrossFit asks for a k-fold cross-fitted AUC as well: rows are shuffled
// by a PCG generator seeded with seed, each fold's propensities come from a
// standardiser and classifier fitted on the other folds, and the AUC is
// computed on the pooled out-of-fold propensities. Folds are stratified:
// each domain's rows are dealt round-robin over the folds in shuffled
// order, so every fold holds rows of both domains. Fit returns an error
// wrapping ErrFolds when k exceeds either domain's row count, and one
// wrapping ErrOption when k < 2.
func WithCrossFit(k int, seed uint64) Option {
	if k < 2 {
		return invalid("cross-fit needs at least 2 folds, got %d", k)
	}
	return func(c *config) { c.folds, c.seed = k, seed }
}

// Solver holds the domain classifier's coefficients (on standardised
// features) and the solver's diagnostics.
type Solver struct {
	Coef       []float64 `json:"coef"`
	Intercept  float64   `json:"intercept"`
	Iterations int       `json:"iterations"`
	GradNorm   float64   `json:"grad_norm"`
	Converged  bool      `json:"converged"`
	Separable  bool      `json:"separable"`
	Note       string    `json:"note,omitempty"`
}

// FeatureKS compares one feature between the domains. KS is
// stats.KS2Samp(source, target); SMD is stats.SMD(target, source) and
// VarianceRatio stats.VarianceRatio(target, source). The InBand fields use
// in-band jobs only; they are zero with InBandNote set when a domain has no
// in-band job.
type FeatureKS struct {
	Name                      string
	All, InBand               stats.KSResult
	SMD, VarianceRatio        float64
	SMDInBand, VarRatioInBand float64
	InBandNote                string
	// Imputed counts the values replaced by the median (WithImpute).
	Imputed int
}

// Result is the outcome of Fit.
type Result struct {
	Band Band

	// AUC is the in-sample ROC AUC of the propensities for telling target
	// from source. CrossFitAUC is the out-of-fold AUC from CrossFitFolds
	// folds: NaN unless WithCrossFit, or when a fold could not be fitted
	// (a note says why).
	AUC, CrossFitAUC float64
	CrossFitFolds    int

	// Coverage is the share of target jobs in the band, SourceCoverage the
	// share of source jobs.
	Coverage, SourceCoverage     float64
	NSource, NTarget             int
	NSourceInBand, NTargetInBand int

	// Propensity is P(target | x) for every row; InBand reports whether it
	// lies in Band.
	Propensity []float64
	InBand     []bool

	KS []FeatureKS

	// SourceQuantiles and TargetQuantiles are each domain's propensity
	// quantiles at levels 0, 0.05, 0.25, 0.5, 0.75, 0.95 and 1 (NumPy's
	// default linear method).
	SourceQuantiles, TargetQuantiles []float64

	// HistEdges are the propensity histogram's bin edges on [0,1]; the last
	// bin is closed. SourceHist and TargetHist count each domain's jobs.
	HistEdges              []float64
	SourceHist, TargetHist []int

	// ESS is the Kish effective sample size of the source jobs' odds
	// weights p/(1-p), which reweight source to target; ESSInBand uses the
	// in-band source jobs only.
	ESS, ESSInBand float64

	Solver Solver
	// Mean and Scale are the standardiser fitted on the pooled rows.
	Mean, Scale []float64
	// Notes explain anything unusual: an empty domain, a constant feature,
	// separable domains, imputation.
	Notes []string

	features       []string    // the feature names (WithFeatureNames, or x0, x1, …)
	quantileLevels []float64   // the levels of SourceQuantiles and TargetQuantiles
	y              []uint8     // domain labels, one byte each: a quarter of the memory of []int
	cols           [][]float64 // features column-major, after imputation
	// sample: the solver's warm-start rows, taken during the copy
	// (logit.Config.Sample); dropped once the classifier is fitted.
	sample []float64
	cfg    config
	ws     *workspace // the buffers above come from here
}

// Fit trains the domain classifier on X (rows are jobs, columns features)
// with y[i] = 0 for source and 1 for target jobs, and measures overlap in
// the band. Neither X nor y is modified.
//
// Fit panics if len(y) differs from X's rows or the feature names from its
// columns. Data problems are errors: a band outside 0 <= lo < hi <= 1
// (ErrBand), a label other than 0 or 1 (ErrLabel, naming the row), no rows
// or columns (ErrEmpty), a NaN or ±Inf feature value without WithImpute
// (ErrNonFinite, naming row and feature). A domain with no rows returns a
// Result with its counts and a note together with an error wrapping
// ErrEmptyDomain, so a report can still be rendered. Separable domains are
// not an error: the classifier stops at its penalised optimum, the note
// says so, and the AUC is 1.
func Fit(X mat.Matrix, y []int, band Band, opts ...Option) (*Result, error) {
	return fit(&workspace{}, X, y, band, opts)
}

// Fitter runs Fit's procedure again and again without taking fresh memory
// each time: it keeps the buffers of one fit (the column-major copy of X,
// the propensities, the band flags, the sorts' scratch) for the next, so
// that once warm a fit of the same size allocates little. Programs that fit
// in a loop (band studies, pairwise matrices, benchmarks) use one Fitter;
// Pairwise does.
//
// The zero value is ready to use. A Fitter is not safe for concurrent use:
// give each goroutine its own, as with bufio.Reader.
type Fitter struct {
	ws workspace
}

// Fit is Fit (the function) with the Fitter's buffers, bit for bit the same
// result. The Result's slices that grow with the rows (Propensity, InBand)
// and its Sweep read the Fitter's buffers: they hold until the Fitter's
// next Fit, so clone what must outlive it.
func (f *Fitter) Fit(X mat.Matrix, y []int, band Band, opts ...Option) (*Result, error) {
	if f.ws.solver == nil {
		f.ws.solver = new(logit.Scratch)
	}
	return fit(&f.ws, X, y, band, opts)
}

// workspace holds the buffers of a fit that grow with the rows. Each is
// overwritten in full before it is read, so reuse cannot change a result.
type workspace struct {
	y, group              []uint8
	cm, sample, prop, mem []float64
	inBand                []bool
	cols                  [][]float64
	ks                    []rank.Groups
	solver                *logit.Scratch // the solver's, for a Fitter; nil for Fit
}

// take returns (*p)[:n], reallocating when the capacity is short. The
// contents are whatever the last use left.
func take[T any](p *[]T, n int) []T {
	if cap(*p) < n {
		*p = make([]T, n)
	}
	*p = (*p)[:n]
	return *p
}

func fit(ws *workspace, X mat.Matrix, y []int, band Band, opts []Option) (*Result, error) {
	n, d := X.Dims()
	if len(y) != n {
		panic("overlap: len(y) != rows of X")
	}
	cfg := config{c: 1, bins: 20, levels: []float64{0, 0.05, 0.25, 0.5, 0.75, 0.95, 1}}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if cfg.names != nil && len(cfg.names) != d {
		panic("overlap: feature name count != columns of X")
	}
	if cfg.names == nil {
		cfg.names = make([]string, d)
		for j := range d {
			cfg.names[j] = "x" + strconv.Itoa(j)
		}
	}
	res := &Result{features: cfg.names, Band: band, AUC: math.NaN(), CrossFitAUC: math.NaN(),
		Coverage: math.NaN(), SourceCoverage: math.NaN(), ESS: math.NaN(), ESSInBand: math.NaN(), cfg: cfg, ws: ws}
	if err := band.Check(); err != nil {
		return nil, err
	}
	if n == 0 || d == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("no data: %d rows, %d features", n, d))
		return res, fmt.Errorf("%w: %d rows, %d features", ErrEmpty, n, d)
	}

	// 1. The domain labels, counted.
	if err := res.setLabels(y); err != nil {
		return nil, err
	}
	if res.NSource == 0 || res.NTarget == 0 {
		which := "source"
		if res.NTarget == 0 {
			which = "target"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("the %s domain is empty (source n=%d, target n=%d): no classifier was fitted", which, res.NSource, res.NTarget))
		return res, fmt.Errorf("%w: %s has no rows", ErrEmptyDomain, which)
	}
	if m := min(res.NSource, res.NTarget); cfg.folds > m {
		use := fmt.Sprintf("use at most %d folds (or none)", m)
		if m < 2 { // cross-fitting needs two folds
			use = "cross-fitting needs at least 2 rows of each; use none"
		}
		return nil, fmt.Errorf("%w: %d folds, but the source has %d rows and the target %d; %s",
			ErrFolds, cfg.folds, res.NSource, res.NTarget, use)
	}

	// 2. The features, column by column, checked and optionally imputed.
	cm, err := res.setColumns(X)
	if err != nil {
		return nil, err
	}

	// 3. The domain classifier on the standardised features; its last
	// pass leaves the propensities in res.Propensity.
	if err := res.standardise(cm); err != nil {
		return nil, err
	}
	if err := res.classify(cm, y); err != nil {
		return nil, err
	}

	// 4. Band membership, coverage, histograms and odds weights.
	group, counts := res.bandPass()

	// 5. The propensity summaries with the AUC, and every feature compared
	// between the domains, on all and on in-band jobs.
	if err := res.summarise(group, counts); err != nil {
		return nil, err
	}
	res.warn(cfg)

	// 6. The cross-fitted AUC, when asked for.
	if cfg.folds > 0 {
		positive := make([]bool, n)
		for i, v := range y {
			positive[i] = v == Target
		}
		res.CrossFitFolds = cfg.folds
		if res.CrossFitAUC, err = crossFit(res.cols, y, positive, cfg); err != nil {
			// A fold without one of the domains leaves the in-sample
			// results valid; say why the cross-fitted AUC is missing.
			res.CrossFitAUC = math.NaN()
			res.Notes = append(res.Notes, "no cross-fitted AUC: "+err.Error())
		}
	}
	return res, nil
}

// setLabels checks and counts the domain labels and keeps them as bytes
// (a quarter of the memory of []int). A plain loop: 1e6 labels take about
// a millisecond, under 1% of a fit.
func (r *Result) setLabels(y []int) error {
	r.y = take(&r.ws.y, len(y))
	for i, v := range y {
		if v != Source && v != Target {
			return fmt.Errorf("%w: row %d has %d", ErrLabel, i, v)
		}
		r.y[i] = uint8(v)
	}
	r.NTarget = 0
	for _, v := range r.y {
		r.NTarget += int(v)
	}
	r.NSource = len(y) - r.NTarget
	return nil
}

// setColumns copies X column-major (features × rows), checking for
// non-finite values and imputing them when asked; stats reads the copy as
// its transpose without another one.
func (r *Result) setColumns(X mat.Matrix) (*mat.Dense, error) {
	n, d := X.Dims()
	cm := mat.NewDense(d, n, take(&r.ws.cm, d*n))
	r.cols = take(&r.ws.cols, d)
	for j := range d {
		r.cols[j] = cm.RawMatrix().Data[j*n : (j+1)*n]
	}
	r.KS = make([]FeatureKS, d)
	// The rows the solver's warm start would gather from the columns,
	// taken while the copy has them in cache.
	var sample []float64
	if k := logit.SampleStride(n); k > 0 {
		sample = take(&r.ws.sample, d*((n+k-1)/k))
	}
	finite := fillColumns(r.cols, X, sample)
	if finite {
		r.sample = sample // imputed values would make it stale
	}
	for j := range r.cols {
		r.KS[j].Name = r.cfg.names[j]
		if !finite {
			if err := r.impute(j, r.cfg); err != nil {
				return nil, err
			}
		}
	}
	return cm, nil
}

// standardise fits the standardiser (mean and scale, kept in r) and
// checks that the standardised columns, which the solver computes as it
// reads them, are finite (finite values far apart can standardise to
// ±Inf), so that the solver need not scan them.
func (r *Result) standardise(cm *mat.Dense) error {
	std, err := stats.FitStandardizer(cm.T())
	if err != nil {
		return fmt.Errorf("overlap: standardising: %w", err)
	}
	// A constant column has scale 1 (no variance): only such columns
	// need the pass that checks.
	for j, sc := range std.Scale {
		if sc == 1 && isConstant(r.cols[j]) {
			r.Notes = append(r.Notes, fmt.Sprintf("feature %q is constant (%g): it cannot separate the domains", r.cfg.names[j], r.cols[j][0]))
		}
	}
	r.Mean, r.Scale = std.Mean, std.Scale
	for j, sc := range std.Scale {
		m := std.Mean[j]
		// With a finite scale other than 1 the squared deviations were
		// finite, so every |x − mean| / scale is (at most √n). Scale 1
		// (a constant column, or deviations whose squares overflowed) and
		// non-finite moments are checked value by value.
		if sc != 1 && !math.IsInf(sc, 0) && !math.IsNaN(sc) && !math.IsInf(m, 0) && !math.IsNaN(m) {
			continue
		}
		var nonFinite uint64
		for _, v := range r.cols[j] {
			nonFinite |= math.Float64bits((v-m)/sc)&expMask + 1<<52
		}
		if nonFinite>>63 != 0 {
			return fmt.Errorf("%w: feature %q standardises to ±Inf (its values span more than float64 holds)", ErrNonFinite, r.cfg.names[j])
		}
	}
	return nil
}

// classify fits the L2 logistic domain classifier on the columns cm,
// standardised by the solver as it reads them; its last pass leaves the
// propensities in r.Propensity.
func (r *Result) classify(cm *mat.Dense, y []int) error {
	r.Propensity = take(&r.ws.prop, len(y))
	lr, err := logit.Fit(cm.T(), y, logit.Config{C: r.cfg.c, Balanced: r.cfg.cw == stats.ClassWeightBalanced, Finite: true,
		Center: r.Mean, Scale: r.Scale, Sample: r.sample, Scratch: r.ws.solver}, r.Propensity)
	r.sample = nil
	if err != nil {
		return fmt.Errorf("overlap: domain classifier: %w", err)
	}
	r.Solver = Solver{Coef: lr.Coef, Intercept: lr.Intercept, Iterations: lr.Iterations, GradNorm: lr.GradNorm,
		Converged: lr.Converged, Separable: lr.Separable, Note: lr.Note}
	if lr.Separable {
		r.Notes = append(r.Notes, "the domains are (nearly) separable: the classifier stopped at its penalised optimum; "+lr.Note)
	} else if !lr.Converged {
		r.Notes = append(r.Notes, "the domain classifier did not converge: "+lr.Note)
	}
	return nil
}

// bandPass sets r.InBand, the in-band counts and the coverages, and
// returns per row the group 2·domain + in-band that summarise compares by,
// with per-block counts: the propensity histograms and the sums of the
// source jobs' odds weights. Blocks run on all cores; the counts add up
// exactly in any order, the sums in block order, so the result does not
// depend on the core count.
func (r *Result) bandPass() ([]uint8, []blockCounts) {
	n, band, bins := len(r.y), r.Band, r.cfg.bins
	r.InBand = take(&r.ws.inBand, n)
	group := take(&r.ws.group, n)
	counts := make([]blockCounts, (n+bandBlock-1)/bandBlock)
	parallel(len(counts), func(b int) {
		lo, hi := b*bandBlock, min((b+1)*bandBlock, n)
		// Accumulators in locals and band membership without a branch:
		// whether a propensity is in the band follows no pattern.
		fbins := float64(bins)
		hist := make([]int, 2*bins) // source bins, then target bins
		var nTgt, inSrc, inTgt int
		var w, w2, wIn, w2In float64
		ys, ps, ins, gs := r.y[lo:hi], r.Propensity[lo:hi], r.InBand[lo:hi], group[lo:hi]
		for i, p := range ps {
			yi := ys[i] & 1
			in := 0
			if band.contains(p) {
				in = 1
			}
			hist[int(yi)*bins+max(0, min(int(p*fbins), bins-1))]++
			nTgt += int(yi)
			inTgt += in & int(yi)
			inSrc += in &^ int(yi)
			ins[i] = in == 1
			gs[i] = 2*yi + uint8(in)
			if yi == Source {
				o := p / (1 - p)
				w += o
				w2 += o * o
				// Adding 0 leaves the sums' bits as they were.
				oi := 0.0
				if in == 1 {
					oi = o
				}
				wIn += oi
				w2In += oi * oi
			}
		}
		counts[b] = blockCounts{n: [2]int{hi - lo - nTgt, nTgt}, in: [2]int{inSrc, inTgt},
			hist: [2][]int{hist[:bins], hist[bins:]}, w: [2]float64{w, wIn}, w2: [2]float64{w2, w2In}}
	})
	for _, c := range counts {
		r.NSourceInBand += c.in[Source]
		r.NTargetInBand += c.in[Target]
	}
	r.Coverage = float64(r.NTargetInBand) / float64(r.NTarget)
	r.SourceCoverage = float64(r.NSourceInBand) / float64(r.NSource)
	return group, counts
}

// warn adds the notes for numbers that would mislead on their own: a
// coverage that reflects the clusters' sizes more than their jobs, and a
// near separation, with the features that drive it.
func (r *Result) warn(cfg config) {
	n := r.NSource + r.NTarget
	share := float64(r.NTarget) / float64(n)
	if cfg.cw == stats.ClassWeightNone && !r.Band.contains(share) && r.Coverage < 0.5 {
		r.Notes = append(r.Notes, fmt.Sprintf(
			"the target is %.1f%% of the jobs (%d of %d): without class weights every propensity starts near %.2f, outside the band %v, "+
				"so the coverage %.4f reflects the clusters' sizes as much as their jobs; refit with balanced class weights "+
				"(WithClassWeight(stats.ClassWeightBalanced), -balanced in examples/overlap)",
			100*share, r.NTarget, n, share, r.Band, r.Coverage))
	}
	if r.AUC >= 0.99 {
		type fc struct {
			name string
			coef float64
		}
		var cs []fc
		for j, c := range r.Solver.Coef {
			cs = append(cs, fc{r.features[j], c})
		}
		slices.SortStableFunc(cs, func(a, b fc) int { return cmp.Compare(math.Abs(b.coef), math.Abs(a.coef)) })
		var parts []string
		for _, c := range cs[:min(3, len(cs))] {
			parts = append(parts, fmt.Sprintf("%s (%+.3g)", c.name, c.coef))
		}
		r.Notes = append(r.Notes, fmt.Sprintf("AUC %.4f ≥ 0.99: the domains are nearly separable, so few jobs overlap; "+
			"the features with the largest standardised coefficients drive it: %s", r.AUC, strings.Join(parts, ", ")))
	}
}

// fillColumns copies X into cols (one slice per column) and reports
// whether every value is finite. A raw matrix's rows are shared out among
// goroutines; any other mat.Matrix is read through At on one goroutine,
// since its At need not be safe for concurrent use. sample, when not nil,
// receives rows 0, k, 2k, … column by column (k = logit.SampleStride(n)).
func fillColumns(cols [][]float64, X mat.Matrix, sample []float64) bool {
	n, d := X.Dims()
	raw, isRaw := X.(mat.RawMatrixer)
	if !isRaw {
		defer fillSample(sample, cols, 0, n)
		finite := true
		for i := range n {
			for j := range d {
				v := X.At(i, j)
				finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
				cols[j][i] = v
			}
		}
		return finite
	}
	m := raw.RawMatrix()
	const block = 8192
	nBlocks := (n + block - 1) / block
	var bad atomic.Bool
	parallel(nBlocks, func(b int) {
		// Four columns at a time within the block: each row gives four
		// neighbouring values, the block's rows stay in the second-level
		// cache until every column is gathered, and the stores go to four
		// sequential streams; the columns left over one at a time.
		lo, hi := b*block, min((b+1)*block, n)
		var nonFinite uint64
		j := 0
		for ; j+4 <= d; j += 4 {
			c0, c1, c2, c3 := cols[j][lo:hi], cols[j+1][lo:hi], cols[j+2][lo:hi], cols[j+3][lo:hi]
			c1, c2, c3 = c1[:len(c0)], c2[:len(c0)], c3[:len(c0)]
			for i := range c0 {
				row := m.Data[(lo+i)*m.Stride+j:]
				row = row[:4]
				v0, v1, v2, v3 := row[0], row[1], row[2], row[3]
				nonFinite |= (math.Float64bits(v0)&expMask + 1<<52) | (math.Float64bits(v1)&expMask + 1<<52) |
					(math.Float64bits(v2)&expMask + 1<<52) | (math.Float64bits(v3)&expMask + 1<<52)
				c0[i], c1[i], c2[i], c3[i] = v0, v1, v2, v3
			}
		}
		for ; j < d; j++ {
			dst := cols[j][lo:hi]
			src := m.Data[lo*m.Stride+j : (hi-1)*m.Stride+j+1]
			for i := range dst {
				v := src[i*m.Stride]
				nonFinite |= math.Float64bits(v)&expMask + 1<<52
				dst[i] = v
			}
		}
		fillSample(sample, cols, lo, hi)
		if nonFinite>>63 != 0 {
			bad.Store(true)
		}
	})
	return !bad.Load()
}

// fillSample copies rows lo ≤ i < hi with i a multiple of k =
// logit.SampleStride(len(cols[0])) from cols into sample, where row i of
// column j goes to sample[j·m + i/k], m = ⌈n/k⌉. A nil sample is left
// alone.
func fillSample(sample []float64, cols [][]float64, lo, hi int) {
	if sample == nil {
		return
	}
	n := len(cols[0])
	k := logit.SampleStride(n)
	m := (n + k - 1) / k
	for j, col := range cols {
		dst := sample[j*m : (j+1)*m]
		for i := (lo + k - 1) / k * k; i < hi; i += k {
			dst[i/k] = col[i]
		}
	}
}

// impute replaces the non-finite values of feature j by the median of its
// finite values when imputation was asked for, and otherwise returns the
// error naming the first one.
func (r *Result) impute(j int, cfg config) error {
	col := r.cols[j]
	var bad []int
	for i, v := range col {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if !cfg.impute {
				return fmt.Errorf("%w: row %d feature %q is %v", ErrNonFinite, i, cfg.names[j], v)
			}
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	if len(bad) == len(col) {
		return fmt.Errorf("%w: feature %q has no finite value", ErrNonFinite, cfg.names[j])
	}
	finite := make([]float64, 0, len(col)-len(bad))
	for _, v := range col {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			finite = append(finite, v)
		}
	}
	med := stats.Median(finite)
	for _, i := range bad {
		col[i] = med
	}
	r.KS[j].Imputed = len(bad)
	r.Notes = append(r.Notes, fmt.Sprintf("feature %q: %d non-finite values replaced by the median %g", cfg.names[j], len(bad), med))
	return nil
}

// expMask selects a float64's exponent bits. Non-finite values have all of
// them set; adding one to the exponent field then carries into the top
// bit, which loops collect without a branch.
const expMask = 0x7ff << 52

// parallel calls fn(k) for k in [0, n) on up to GOMAXPROCS goroutines.
// Callers write only to k's own outputs, so results do not depend on
// scheduling.
func parallel(n int, fn func(k int)) {
	parallelWorkers(n, func(_, k int) { fn(k) })
}

// parallelWorkers is parallel for tasks that use their goroutine's own
// scratch memory: fn(w, k) runs task k on worker w, below workers(n).
func parallelWorkers(n int, fn func(w, k int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers(n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				fn(w, k)
			}
		}()
	}
	wg.Wait()
}

// workers is the number of goroutines parallel uses for n tasks.
func workers(n int) int { return min(n, runtime.GOMAXPROCS(0)) }

// bandBlock rows form one unit of parallel work for the propensities and
// the band membership.
const bandBlock = 16384

// blockCounts counts one block's rows per domain, all and in the band,
// and in each histogram bin, and sums the source rows' odds weights and
// their squares, all and in the band.
type blockCounts struct {
	n, in [2]int
	hist  [2][]int
	w, w2 [2]float64
}

// summarise computes the propensity summaries and AUC and compares every
// feature between the domains on up to GOMAXPROCS goroutines. Every task
// writes only its own results, so the outcome does not depend on
// scheduling; the first error in feature order
// is returned. group holds 2·domain + in-band per row.
//
// The tasks are small so that no long one is left running alone at the
// end: the first two each gather and sort one domain's propensities; each
// feature is one task (see compareFeature), which needs no sorting; the
// summaries of the sorted propensities come last, the shortest task,
// after both sorts.
func (r *Result) summarise(group []uint8, counts []blockCounts) error {
	d, n := len(r.cols), len(r.y)
	// Each domain's propensities, each with a slot to spare (see
	// gatherDomain), and the sorts' scratch.
	ns := r.NSource
	mem := take(&r.ws.mem, 2*n+2)
	props, scratch := mem[:n+2], mem[n+2:]
	// (Capacities capped: propensitySummaries appends to their memory.)
	src, tgt := props[:ns:ns], props[ns+1:n+1:n+1]
	var sorted sync.WaitGroup
	sorted.Add(2)
	errs := make([]error, d)
	ks := take(&r.ws.ks, workers(d+3))
	parallelWorkers(d+3, func(w, k int) {
		switch {
		case k == d+2:
			// The sorts were the first tasks handed out, so they are
			// running or done.
			sorted.Wait()
			r.propensitySummaries(src, tgt, counts)
		case k >= 2:
			errs[k-2] = r.compareFeature(k-2, group, &ks[w])
		default:
			part, room, buf := src, props[:ns+1], scratch[:ns]
			if k == Target {
				part, room, buf = tgt, props[ns+1:], scratch[ns:]
			}
			gatherDomain(room, r.Propensity, r.y, uint8(k))
			var sorter rank.Sorter
			sorter.SetScratch(buf)
			sorter.Sort(part)
			sorted.Done()
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gatherDomain copies the propensities p of the rows whose label y is
// want into dst, in row order, without a branch on the label (where the
// domains' rows interleave it would be mispredicted): every value is
// written at the next free place, which moves on only for the domain's
// rows, so dst needs one place more than the domain has rows.
func gatherDomain(dst, p []float64, y []uint8, want uint8) {
	y = y[:len(p)]
	c := 0
	for i, v := range p {
		dst[c] = v
		if y[i] == want {
			c++
		}
	}
}

func isConstant(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}

func standardize(x *mat.Dense, mean, scale []float64) {
	raw := x.RawMatrix()
	for i := range raw.Rows {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j := range row {
			row[j] = (row[j] - mean[j]) / scale[j]
		}
	}
}

// split returns the values of col in each domain, keeping only in-band rows
// when inBand is set.
func (r *Result) split(col []float64, band *Band) (src, tgt []float64) {
	src = make([]float64, 0, r.NSource)
	tgt = make([]float64, 0, r.NTarget)
	for i, v := range col {
		if band != nil && !band.contains(r.Propensity[i]) {
			continue
		}
		if r.y[i] == Target {
			tgt = append(tgt, v)
		} else {
			src = append(src, v)
		}
	}
	return src, tgt
}

// The groups of summarise's rows (2·domain + in-band) that the tests on
// all rows and on in-band rows compare, source against target.
var (
	allRows    = rank.GroupPair{X: 1<<0 | 1<<1, Y: 1<<2 | 1<<3}
	inBandRows = rank.GroupPair{X: 1 << 1, Y: 1 << 3}
)

// compareFeature compares feature j between the domains on all rows and
// on in-band rows: KS, and SMD and variance ratio from the moments that
// come with it, by an internal/rank Groups (ks, with its scratch memory),
// which computes stats.KS2Samp's results on the split rows bit for bit.
func (r *Result) compareFeature(j int, group []uint8, ks *rank.Groups) error {
	f := &r.KS[j]
	pairs := []rank.GroupPair{allRows}
	inBand := r.NSourceInBand > 0 && r.NTargetInBand > 0
	if inBand {
		pairs = append(pairs, inBandRows)
	}
	res, err := ks.Compare(r.cols[j], group, pairs, rank.Alternative(r.cfg.alt), rank.Method(r.cfg.method))
	if err != nil {
		return fmt.Errorf("overlap: KS of feature %q: %w", f.Name, err)
	}
	src, tgt := ks.Moments(0)
	f.All = ksResult(res[0])
	f.SMD, f.VarianceRatio = smdVRFrom(tgt.Mean, tgt.Var, tgt.N, src.Mean, src.Var, src.N)
	if !inBand {
		f.InBand = stats.KSResult{Statistic: math.NaN(), PValue: math.NaN(), Location: math.NaN()}
		f.SMDInBand, f.VarRatioInBand = math.NaN(), math.NaN()
		f.InBandNote = fmt.Sprintf("no in-band comparison: %d source and %d target jobs in %v", r.NSourceInBand, r.NTargetInBand, r.Band)
		return nil
	}
	src, tgt = ks.Moments(1)
	f.InBand = ksResult(res[1])
	f.SMDInBand, f.VarRatioInBand = smdVRFrom(tgt.Mean, tgt.Var, tgt.N, src.Mean, src.Var, src.N)
	return nil
}

// ksResult converts internal/rank's result, which is stats.KS2Samp's.
func ksResult(r rank.Result) stats.KSResult {
	return stats.KSResult{Statistic: r.Statistic, PValue: r.PValue, Location: r.Location, Sign: r.Sign, Method: stats.KSMethod(r.Method)}
}

// inBandCompare compares feature j on the jobs in band b.
func (r *Result) inBandCompare(j int, b Band) (ks stats.KSResult, smd, vr float64, note string, err error) {
	src, tgt := r.split(r.cols[j], &b)
	if len(src) == 0 || len(tgt) == 0 {
		return stats.KSResult{Statistic: math.NaN(), PValue: math.NaN(), Location: math.NaN()}, math.NaN(), math.NaN(),
			fmt.Sprintf("no in-band comparison: %d source and %d target jobs in %v", len(src), len(tgt), b), nil
	}
	smd, vr = smdVR(tgt, src) // stats.SMD and stats.VarianceRatio, in half the passes
	ks, err = stats.KS2Samp(src, tgt, r.cfg.alt, r.cfg.method)
	if err != nil {
		return ks, smd, vr, "", fmt.Errorf("overlap: in-band KS of feature %q: %w", r.features[j], err)
	}
	return ks, smd, vr, "", nil
}

// propensitySummaries computes the AUC and quantiles from each domain's
// sorted propensities, src and tgt (one sort serves both), and the
// histograms and ESS from the blocks' counts and sums.
func (r *Result) propensitySummaries(src, tgt []float64, counts []blockCounts) {
	r.AUC = rank.AUCSorted(src, tgt) // both domains have rows
	r.quantileLevels = slices.Clone(r.cfg.levels)
	r.SourceQuantiles = make([]float64, len(r.quantileLevels))
	r.TargetQuantiles = make([]float64, len(r.quantileLevels))
	for k, q := range r.quantileLevels {
		r.SourceQuantiles[k] = rank.QuantileSorted(src, q)
		r.TargetQuantiles[k] = rank.QuantileSorted(tgt, q)
	}
	bins := r.cfg.bins
	r.HistEdges = make([]float64, bins+1)
	for k := range r.HistEdges {
		r.HistEdges[k] = float64(k) / float64(bins)
	}
	r.SourceHist, r.TargetHist = make([]int, bins), make([]int, bins)
	var w, w2 [2]float64
	for _, c := range counts {
		for k := range bins {
			r.SourceHist[k] += c.hist[Source][k]
			r.TargetHist[k] += c.hist[Target][k]
		}
		for a := range w {
			w[a] += c.w[a]
			w2[a] += c.w2[a]
		}
	}
	// Kish's ESS of the odds weights p/(1-p), as stats.KishESS.
	r.ESS = balance.Kish(w[0], w2[0])
	if r.NSourceInBand > 0 {
		r.ESSInBand = balance.Kish(w[1], w2[1])
	}
}

// crossFit returns the out-of-fold AUC of k-fold cross-fitting.
func crossFit(cols [][]float64, y []int, positive []bool, cfg config) (float64, error) {
	n, d := len(y), len(cols)
	perm := rand.New(rand.NewPCG(cfg.seed, 0x6f7665726c6170)).Perm(n)
	fold := make([]int, n)
	var dealt [2]int // rows of each domain dealt so far
	for _, i := range perm {
		fold[i] = dealt[y[i]] % cfg.folds
		dealt[y[i]]++
	}
	oof := make([]float64, n)
	for f := range cfg.folds {
		var trainIdx, testIdx []int
		for i := range n {
			if fold[i] == f {
				testIdx = append(testIdx, i)
			} else {
				trainIdx = append(trainIdx, i)
			}
		}
		build := func(idx []int) (*mat.Dense, []int) {
			x := mat.NewDense(len(idx), d, nil)
			yy := make([]int, len(idx))
			for r, i := range idx {
				for j := range d {
					x.Set(r, j, cols[j][i])
				}
				yy[r] = y[i]
			}
			return x, yy
		}
		xTrain, yTrain := build(trainIdx)
		xTest, _ := build(testIdx)
		std, err := stats.FitStandardizer(xTrain)
		if err != nil {
			return math.NaN(), fmt.Errorf("overlap: cross-fit fold %d: %w", f, err)
		}
		standardize(xTrain, std.Mean, std.Scale)
		standardize(xTest, std.Mean, std.Scale)
		lr, err := stats.LogisticRegression(xTrain, yTrain, stats.LogisticConfig{C: cfg.c, ClassWeight: cfg.cw})
		if err != nil {
			return math.NaN(), fmt.Errorf("overlap: cross-fit fold %d: %w", f, err)
		}
		p := lr.PredictProba(nil, xTest)
		for r, i := range testIdx {
			oof[i] = p[r]
		}
	}
	auc, err := stats.AUC(oof, positive, nil)
	if err != nil {
		return math.NaN(), fmt.Errorf("overlap: cross-fitted AUC: %w", err)
	}
	return auc, nil
}
