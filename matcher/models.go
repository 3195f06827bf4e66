package matcher

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Sample is one observed build: the package, the memory it used (bytes;
// the published models used mean memory) and its duration in seconds.
type Sample struct {
	Package  string
	Memory   float64
	Duration float64
}

// RuntimeModel predicts a package's duration in seconds at a memory size.
// An unknown package is an error wrapping ErrUnknownPackage.
type RuntimeModel interface {
	Predict(pkg string, memory float64) (float64, error)
}

// Linear holds one least-squares line of duration on memory per package.
type Linear struct {
	coef map[string][2]float64 // intercept, slope
}

// FitLinear fits duration = alpha + beta·memory per package by ordinary
// least squares (gonum stat.LinearRegression). With intercept false the line
// goes through the origin, as the published scikit-learn fit
// (LinearRegression(fit_intercept=False)) did. A package with fewer than two
// samples, or with constant memory when an intercept is fitted, is an error.
// samples is not modified.
func FitLinear(samples []Sample, intercept bool) (*Linear, error) {
	groups := groupSamples(samples)
	l := &Linear{coef: make(map[string][2]float64, len(groups))}
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

// Coefficients returns the intercept and slope of pkg's line.
func (l *Linear) Coefficients(pkg string) (alpha, beta float64, ok bool) {
	c, ok := l.coef[pkg]
	return c[0], c[1], ok
}

// Predict evaluates pkg's line at memory.
func (l *Linear) Predict(pkg string, memory float64) (float64, error) {
	c, ok := l.coef[pkg]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrUnknownPackage, pkg)
	}
	return c[0] + c[1]*memory, nil
}

// KNN is k-nearest-neighbour regression of duration on memory per package,
// as the published run used (scikit-learn KNeighborsRegressor, k = 5,
// uniform weights): the prediction is the mean duration of the k samples
// whose memory is closest. Distance ties go to the smaller memory, then to
// the earlier sample; scikit-learn leaves ties unspecified. A package with
// fewer than k samples predicts the mean of all of them.
type KNN struct {
	k    int
	data map[string]knnData
}

type knnData struct{ x, y []float64 }

// FitKNN builds a KNN model; k < 1 panics. samples is not modified.
func FitKNN(samples []Sample, k int) *KNN {
	if k < 1 {
		panic("matcher: KNN needs k >= 1")
	}
	groups := groupSamples(samples)
	m := &KNN{k: k, data: make(map[string]knnData, len(groups))}
	for pkg, g := range groups {
		g = slices.Clone(g)
		slices.SortStableFunc(g, func(a, b Sample) int { return cmp.Compare(a.Memory, b.Memory) })
		d := knnData{x: make([]float64, len(g)), y: make([]float64, len(g))}
		for i, s := range g {
			d.x[i], d.y[i] = s.Memory, s.Duration
		}
		m.data[pkg] = d
	}
	return m
}

// Predict returns the mean duration of pkg's k nearest samples in memory.
func (m *KNN) Predict(pkg string, memory float64) (float64, error) {
	d, ok := m.data[pkg]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrUnknownPackage, pkg)
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
func groupSamples(samples []Sample) map[string][]Sample {
	g := map[string][]Sample{}
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
