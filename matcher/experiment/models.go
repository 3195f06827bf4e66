package experiment

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/crosscluster/crosscluster/matcher"

	"gonum.org/v1/gonum/stat"
)

// errUnknownPackage: a runtime model has no data for a job's package.
var errUnknownPackage = errors.New("no runtime model for package")

// sample is one observed build: the package, the memory it used (bytes;
// the published models used mean memory) and its duration in seconds.
type sample struct {
	Package  string
	Memory   float64
	Duration float64
}

// runtimeModel predicts a package's duration in seconds at a memory size.
// An unknown package is an error wrapping errUnknownPackage.
type runtimeModel interface {
	Predict(pkg string, memory float64) (float64, error)
}

// linearModel holds one least-squares line of duration on memory per package.
type linearModel struct {
	coef map[string][2]float64 // intercept, slope
}

// fitLinear fits duration = alpha + beta·memory per package by ordinary
// least squares (gonum stat.LinearRegression). With intercept false the line
// goes through the origin, as the published scikit-learn fit
// (LinearRegression(fit_intercept=False)) did. A package with fewer than two
// samples, or with constant memory when an intercept is fitted, is an error.
// samples is not modified.
func fitLinear(samples []sample, intercept bool) (*linearModel, error) {
	groups := groupSamples(samples)
	l := &linearModel{coef: make(map[string][2]float64, len(groups))}
	for _, pkg := range sortedKeys(groups) {
		g := groups[pkg]
		if len(g) < 2 {
			return nil, fmt.Errorf("matcher: linear model for %s: %d samples, need at least 2", pkg, len(g))
		}
		x := make([]float64, len(g))
		y := make([]float64, len(g))
		for i, s := range g {
			x[i], y[i] = s.Memory, s.Duration
		}
		if intercept && stat.Variance(x, nil) == 0 {
			return nil, fmt.Errorf("matcher: linear model for %s: memory is constant", pkg)
		}
		a, b := stat.LinearRegression(x, y, nil, !intercept)
		if math.IsNaN(a) || math.IsNaN(b) {
			return nil, fmt.Errorf("matcher: linear model for %s: fit is not finite", pkg)
		}
		l.coef[pkg] = [2]float64{a, b}
	}
	return l, nil
}

// coefficients returns the intercept and slope of pkg's line.
func (l *linearModel) coefficients(pkg string) (alpha, beta float64, ok bool) {
	c, ok := l.coef[pkg]
	return c[0], c[1], ok
}

// Predict evaluates pkg's line at memory.
func (l *linearModel) Predict(pkg string, memory float64) (float64, error) {
	c, ok := l.coef[pkg]
	if !ok {
		return 0, fmt.Errorf("%w: %s", errUnknownPackage, pkg)
	}
	return c[0] + c[1]*memory, nil
}

// knnModel is k-nearest-neighbour regression of duration on memory per package,
// as the published run used (scikit-learn KNeighborsRegressor, k = 5,
// uniform weights): the prediction is the mean duration of the k samples
// whose memory is closest. Distance ties go to the smaller memory, then to
// the earlier sample; scikit-learn leaves ties unspecified. A package with
// fewer than k samples predicts the mean of all of them.
type knnModel struct {
	k    int
	data map[string]knnData
}

type knnData struct{ x, y []float64 }

// fitKNN builds a knnModel model; k < 1 panics. samples is not modified.
func fitKNN(samples []sample, k int) *knnModel {
	if k < 1 {
		panic("matcher: knnModel needs k >= 1")
	}
	groups := groupSamples(samples)
	m := &knnModel{k: k, data: make(map[string]knnData, len(groups))}
	for pkg, g := range groups {
		g = slices.Clone(g)
		slices.SortStableFunc(g, func(a, b sample) int { return cmp.Compare(a.Memory, b.Memory) })
		d := knnData{x: make([]float64, len(g)), y: make([]float64, len(g))}
		for i, s := range g {
			d.x[i], d.y[i] = s.Memory, s.Duration
		}
		m.data[pkg] = d
	}
	return m
}

// Predict returns the mean duration of pkg's k nearest samples in memory.
func (m *knnModel) Predict(pkg string, memory float64) (float64, error) {
	d, ok := m.data[pkg]
	if !ok {
		return 0, fmt.Errorf("%w: %s", errUnknownPackage, pkg)
	}
	n := len(d.x)
	hi, _ := slices.BinarySearch(d.x, memory)
	lo := hi - 1
	sum := 0.0
	for taken := 0; taken < m.k && taken < n; taken++ {
		switch {
		case lo < 0:
			sum += d.y[hi]
			hi++
		case hi >= n:
			sum += d.y[lo]
			lo--
		case memory-d.x[lo] <= d.x[hi]-memory:
			sum += d.y[lo]
			lo--
		default:
			sum += d.y[hi]
			hi++
		}
	}
	return sum / float64(min(m.k, n)), nil
}

// groupSamples groups samples by package, in input order.
func groupSamples(samples []sample) map[string][]sample {
	g := map[string][]sample{}
	for _, s := range samples {
		g[s.Package] = append(g[s.Package], s)
	}
	return g
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// cheapest returns the candidate with the lowest predicted cost,
// m.Predict(pkg, memory) / 3600 × cost per node hour, reading memory and
// cost from the cluster state ("memory_per_node", "cost_per_node_hour"), or
// nil when no candidate has both. Ties go to the first candidate.
func cheapest(m runtimeModel, pkg string, c []*matcher.Cluster) (*matcher.Cluster, error) {
	var best *matcher.Cluster
	bestCost := math.Inf(1)
	for _, cl := range c {
		mem, ok1 := cl.State["memory_per_node"]
		rate, ok2 := cl.State["cost_per_node_hour"]
		if !ok1 || !ok2 {
			continue
		}
		d, err := m.Predict(pkg, mem)
		if err != nil {
			return nil, err
		}
		if cost := d / 3600 * rate; cost < bestCost {
			best, bestCost = cl, cost
		}
	}
	return best, nil
}
