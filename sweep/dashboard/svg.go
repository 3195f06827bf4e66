package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/crosscluster/crosscluster/sweep"
)

// axis maps data values to pixels, on a log scale when every value is
// positive and they span more than a factor 50.
type axis struct {
	lo, hi float64
	log    bool
}

func newAxis(vals []float64) (axis, bool) {
	a := axis{lo: math.Inf(1), hi: math.Inf(-1), log: true}
	n := 0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		n++
		a.lo, a.hi = min(a.lo, v), max(a.hi, v)
		if v <= 0 {
			a.log = false
		}
	}
	if n == 0 {
		return a, false
	}
	if a.log && a.hi/a.lo < 50 {
		a.log = false
	}
	// A range too narrow to tell its ends apart in print is drawn as one
	// value.
	if a.hi-a.lo <= 1e-9*math.Max(math.Abs(a.lo), math.Abs(a.hi)) {
		d := math.Max(math.Abs(a.lo)*0.1, 1e-9)
		a.lo, a.hi = a.lo-d, a.hi+d
		if a.log && a.lo <= 0 {
			a.log = false
		}
	}
	return a, true
}

func (a axis) t(v float64) float64 {
	if a.log {
		return (math.Log(v) - math.Log(a.lo)) / (math.Log(a.hi) - math.Log(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// inv is t's inverse: the value at fraction f of the axis.
func (a axis) inv(f float64) float64 {
	if a.log {
		return math.Exp(math.Log(a.lo) + f*(math.Log(a.hi)-math.Log(a.lo)))
	}
	return a.lo + f*(a.hi-a.lo)
}

func (a axis) label() string {
	if a.log {
		return " (log)"
	}
	return ""
}

// tick is a labelled position on an axis.
type tick struct {
	v    float64
	text string
}

// ticks returns the axis's labelled positions: powers of ten (with 2 and
// 5 between them when there are few decades) on a log axis, else
// multiples of a step of 1, 2 or 5 times a power of ten chosen so that
// there are between 3 and about 10, as Heckbert's "nice numbers" (Graphics
// Gems, 1990) choose them.
func (a axis) ticks() []tick {
	if a.log {
		if t := logTicks(a.lo, a.hi); len(t) >= 3 {
			return t
		}
	}
	t, _ := linearTicks(a.lo, a.hi)
	return t
}

// niceStep returns 1, 2 or 5 times a power of ten near raw.
func niceStep(raw float64) float64 {
	e := math.Floor(math.Log10(raw))
	mag := math.Pow(10, e)
	switch f := raw / mag; {
	case f < 1.5:
		return mag
	case f < 3:
		return 2 * mag
	case f < 7:
		return 5 * mag
	}
	return math.Pow(10, e+1)
}

// linearTicks returns the ticks between lo and hi and their step.
func linearTicks(lo, hi float64) ([]tick, float64) {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []tick{{lo, fmtf(lo)}}, 0
	}
	var out []tick
	var step float64
	for target := 5.0; target <= 40; target *= 2 {
		step = niceStep((hi - lo) / target)
		out = out[:0]
		for k := math.Ceil(lo / step); k*step <= hi && len(out) < 50; k++ {
			out = append(out, tick{k * step, fmtStep(k, step)})
		}
		if len(out) >= 3 {
			break
		}
	}
	return out, step
}

// fmtStep formats k×step with as many digits as step needs, so that
// 0.1+0.2 prints 0.3 and ticks 0.001 apart near a million differ.
func fmtStep(k, step float64) string {
	v := k * step
	if k == 0 {
		return "0"
	}
	se := math.Floor(math.Log10(step) + 1e-9)
	if a := math.Abs(v); a >= 1e5 || a < 1e-3 {
		digits := int(math.Floor(math.Log10(a)+1e-9)-se) + 1
		return strconv.FormatFloat(v, 'g', min(max(digits, 1), 17), 64)
	}
	return strconv.FormatFloat(v, 'f', max(0, -int(se)), 64)
}

// logTicks returns powers of ten between lo and hi (every k-th when there
// are more than 8), or 1, 2 and 5 times them when there are fewer than 3.
func logTicks(lo, hi float64) []tick {
	e0, e1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	every := math.Max(math.Ceil((e1-e0)/6), 1)
	var out []tick
	for _, mults := range [][]float64{{1}, {1, 2, 5}} {
		out = out[:0]
		for e := e0; e <= e1; e++ {
			if math.Mod(e, every) != 0 {
				continue
			}
			for _, m := range mults {
				v := m * math.Pow(10, e)
				if v >= lo*(1-1e-12) && v <= hi*(1+1e-12) {
					out = append(out, tick{v, strconv.FormatFloat(v, 'g', 3, 64)})
				}
			}
		}
		if len(out) >= 3 {
			break
		}
	}
	return out
}

// plotBox is a figure of w×h pixels with margins for the axis labels.
// Data are drawn inset pixels inside the axes, so that dots at the extreme
// values do not sit on the axis lines.
type plotBox struct {
	w, h          float64
	left, bottom  float64
	right, top    float64
	inset         float64
	x, y          axis
	title, xl, yl string
	b             strings.Builder
}

func newBox(w, h float64, x, y axis, title, xl, yl string) *plotBox {
	return newInsetBox(w, h, 0, x, y, title, xl, yl)
}

func newInsetBox(w, h, inset float64, x, y axis, title, xl, yl string) *plotBox {
	p := &plotBox{w: w, h: h, left: 56, bottom: 34, right: 12, top: 24, inset: inset, x: x, y: y, title: title, xl: xl + x.label(), yl: yl + y.label()}
	fmt.Fprintf(&p.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" role="img"><title>%s</title>`, w, h, w, h, esc(title))
	fmt.Fprintf(&p.b, `<rect x="0" y="0" width="%g" height="%g" fill="white"/>`, w, h)
	fmt.Fprintf(&p.b, `<text x="%g" y="15" font-size="13" text-anchor="middle">%s</text>`, w/2, esc(title))
	x0, x1, y0, y1 := p.left, w-p.right, h-p.bottom, p.top
	for _, t := range x.ticks() {
		px, _ := p.px(t.v, y.lo)
		fmt.Fprintf(&p.b, `<line class="tick" x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#eee"/><line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#333"/>`, px, y1, px, y0, px, y0, px, y0+4)
		fmt.Fprintf(&p.b, `<text x="%.1f" y="%g" font-size="11" text-anchor="middle">%s</text>`, px, y0+15, esc(t.text))
	}
	for _, t := range y.ticks() {
		_, py := p.px(x.lo, t.v)
		fmt.Fprintf(&p.b, `<line class="tick" x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eee"/><line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#333"/>`, x0, py, x1, py, x0-4, py, x0, py)
		fmt.Fprintf(&p.b, `<text x="%g" y="%.1f" font-size="11" text-anchor="end">%s</text>`, x0-6, py+4, esc(t.text))
	}
	fmt.Fprintf(&p.b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/>`, x0, y0, x1, y0, x0, y0, x0, y1)
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="middle">%s</text>`, (x0+x1)/2, h-4, esc(p.xl))
	fmt.Fprintf(&p.b, `<text x="12" y="%g" font-size="11" text-anchor="middle" transform="rotate(-90 12 %g)">%s</text>`, (y0+y1)/2, (y0+y1)/2, esc(p.yl))
	return p
}

func (p *plotBox) px(x, y float64) (float64, float64) {
	return p.left + p.inset + p.x.t(x)*(p.w-p.left-p.right-2*p.inset), p.h - p.bottom - p.inset - p.y.t(y)*(p.h-p.bottom-p.top-2*p.inset)
}

func (p *plotBox) ok(x, y float64) bool {
	fin := !math.IsNaN(x) && !math.IsNaN(y) && !math.IsInf(x, 0) && !math.IsInf(y, 0)
	return fin && (!p.x.log || x > 0) && (!p.y.log || y > 0)
}

func (p *plotBox) line(xs, ys []float64, color string, width float64, label string) {
	var pts []string
	for i := range xs {
		if p.ok(xs[i], ys[i]) {
			x, y := p.px(xs[i], ys[i])
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
	}
	if len(pts) == 0 {
		return
	}
	fmt.Fprintf(&p.b, `<polyline fill="none" stroke="%s" stroke-width="%g" points="%s"><title>%s</title></polyline>`, color, width, strings.Join(pts, " "), esc(label))
}

func (p *plotBox) dot(x, y float64, color string, r float64, label string) {
	if !p.ok(x, y) {
		return
	}
	cx, cy := p.px(x, y)
	fmt.Fprintf(&p.b, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s" fill-opacity="0.8"><title>%s</title></circle>`, cx, cy, r, color, esc(label))
}

// rect draws the box between data corners (x0, y0) and (x1, y1).
func (p *plotBox) rect(x0, y0, x1, y1 float64, color, label string) {
	if !p.ok(x0, y0) || !p.ok(x1, y1) {
		return
	}
	ax, ay := p.px(x0, y0)
	bx, by := p.px(x1, y1)
	fmt.Fprintf(&p.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.7"><title>%s</title></rect>`,
		min(ax, bx), min(ay, by), max(math.Abs(bx-ax), 1), max(math.Abs(by-ay), 1), color, esc(label))
}

func (p *plotBox) note(text string) {
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, p.w-p.right, p.top+10, esc(text))
}

func (p *plotBox) html() template.HTML {
	p.b.WriteString(`</svg>`)
	return template.HTML(p.b.String()) // every text above went through esc
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// curve is one run's series to draw.
type curve struct {
	slug string
	s    sweep.Series
}

// curvesSVG draws the given runs' curves of metric, thin and grey, the
// first (the best) thick and black and named; title says which runs they
// are.
func curvesSVG(curves []curve, title, metric, stepName string) template.HTML {
	var xs, ys []float64
	for _, c := range curves {
		xs = append(xs, c.s.Step...)
		ys = append(ys, c.s.Value...)
	}
	xa, okx := newAxis(xs)
	ya, oky := newAxis(ys)
	if !okx || !oky {
		return template.HTML(`<p class="empty">No finite ` + esc(metric) + ` values streamed yet.</p>`)
	}
	p := newBox(760, 340, xa, ya, title, stepName, metric)
	for i := len(curves) - 1; i > 0; i-- {
		p.line(curves[i].s.Step, curves[i].s.Value, "#9ab", 1, curves[i].slug)
	}
	p.line(curves[0].s.Step, curves[0].s.Value, "#000", 2.5, curves[0].slug)
	p.note("best: " + curves[0].slug)
	return p.html()
}

// histSVG draws how the runs' final values of metric fall into bins, the
// best value marked.
func histSVG(vals []float64, best float64, title, metric string) template.HTML {
	xa, ok := newAxis(vals)
	if !ok {
		return ""
	}
	const bins = 40
	counts := make([]float64, bins)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		counts[min(int(xa.t(v)*bins), bins-1)]++
	}
	ya := axis{lo: 0, hi: max(slices.Max(counts), 1)}
	p := newBox(460, 240, xa, ya, title, "final "+metric, "runs")
	for i, n := range counts {
		if n == 0 {
			continue
		}
		lo, hi := xa.inv(float64(i)/bins), xa.inv(float64(i+1)/bins)
		p.rect(lo, 0, hi, n, "#0072b2", fmt.Sprintf("%s in [%s, %s): %d runs", metric, fmtf(lo), fmtf(hi), int(n)))
	}
	if p.ok(best, 0) {
		x, _ := p.px(best, 0)
		fmt.Fprintf(&p.b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#000" stroke-width="2"><title>best: %s</title></line>`, x, p.top, x, p.h-p.bottom, esc(fmtf(best)))
	}
	return p.html()
}

// point is one run in a scatter of a parameter against the final metric.
type point struct {
	x, y  float64
	state sweep.State
	slug  string
}

// maxDots is the most runs a scatter draws one by one; beyond it the runs
// are summarised in bins of the parameter.
const maxDots = 400

// scatterSVG draws a numeric parameter against the final metric, one dot
// per run coloured by state, or, beyond maxDots runs, each of up to 30
// bins of the parameter as its runs' range (line), quartiles (box) and
// median (tick). The best run, pts[best], is drawn in black on top. False
// when the parameter takes one value only.
func scatterSVG(pts []point, best int, param, metric string) (template.HTML, bool) {
	xs := make([]float64, len(pts))
	ys := make([]float64, len(pts))
	for i, q := range pts {
		xs[i], ys[i] = q.x, q.y
	}
	if len(pts) == 0 || slices.Min(xs) == slices.Max(xs) {
		return "", false // one value of the parameter says nothing
	}
	xa, okx := newAxis(xs)
	ya, oky := newAxis(ys)
	if !okx || !oky {
		return "", false
	}
	title := fmt.Sprintf("%s against %s (%d runs)", param, metric, len(pts))
	if len(pts) > maxDots {
		title = fmt.Sprintf("%s against %s: %d runs in bins", param, metric, len(pts))
	}
	p := newInsetBox(300, 220, 9, xa, ya, title, param, metric)
	if len(pts) <= maxDots {
		for i, q := range pts {
			if i != best {
				p.dot(q.x, q.y, stateColors[q.state], 3, fmt.Sprintf("%s: %s=%s, %s=%s", q.slug, param, fmtf(q.x), metric, fmtf(q.y)))
			}
		}
	} else {
		binSummary(p, pts, param, metric)
	}
	if best >= 0 {
		q := pts[best]
		p.dot(q.x, q.y, "#000", 6, fmt.Sprintf("best, %s: %s=%s, %s=%s", q.slug, param, fmtf(q.x), metric, fmtf(q.y)))
	}
	return p.html(), true
}

// binSummary draws the runs of each bin of the parameter (its distinct
// values when there are at most 30, else 30 equal bins of the axis) as
// range, quartiles and median of the metric.
func binSummary(p *plotBox, pts []point, param, metric string) {
	const maxBins = 30
	distinct := map[float64][]float64{}
	for _, q := range pts {
		if len(distinct) <= maxBins || distinct[q.x] != nil {
			distinct[q.x] = append(distinct[q.x], q.y)
		}
	}
	type bin struct {
		lo, hi, at float64
		ys         []float64
	}
	var bins []bin
	if len(distinct) <= maxBins {
		for x, ys := range distinct {
			bins = append(bins, bin{x, x, x, ys})
		}
	} else {
		bins = make([]bin, maxBins)
		for i := range bins {
			bins[i].lo, bins[i].hi = p.x.inv(float64(i)/maxBins), p.x.inv(float64(i+1)/maxBins)
			bins[i].at = p.x.inv((float64(i) + 0.5) / maxBins)
		}
		for _, q := range pts {
			if p.ok(q.x, q.y) {
				i := min(int(p.x.t(q.x)*maxBins), maxBins-1)
				bins[i].ys = append(bins[i].ys, q.y)
			}
		}
	}
	slices.SortFunc(bins, func(a, b bin) int { return cmpFloat(a.at, b.at) })
	for _, b := range bins {
		ys := slices.Clone(b.ys)
		ys = slices.DeleteFunc(ys, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
		if len(ys) == 0 {
			continue
		}
		slices.Sort(ys)
		q := func(f float64) float64 { return ys[int(math.Round(f*float64(len(ys)-1)))] }
		where := param + "=" + fmtf(b.at)
		if b.lo != b.hi {
			where = fmt.Sprintf("%s in [%s, %s)", param, fmtf(b.lo), fmtf(b.hi))
		}
		label := fmt.Sprintf("%s: %d runs; %s min %s, quartiles %s, %s, %s, max %s", where, len(ys), metric, fmtf(ys[0]), fmtf(q(0.25)), fmtf(q(0.5)), fmtf(q(0.75)), fmtf(ys[len(ys)-1]))
		x, _ := p.px(b.at, ys[0])
		_, ylo := p.px(b.at, ys[0])
		_, yhi := p.px(b.at, ys[len(ys)-1])
		_, q1 := p.px(b.at, q(0.25))
		_, q3 := p.px(b.at, q(0.75))
		_, md := p.px(b.at, q(0.5))
		fmt.Fprintf(&p.b, `<g><title>%s</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#0072b2"/><rect x="%.1f" y="%.1f" width="6" height="%.1f" fill="#56b4e9"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000"/></g>`,
			esc(label), x, ylo, x, yhi, x-3, min(q1, q3), max(math.Abs(q1-q3), 1), x-4, md, x+4, md)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// seriesSVG draws one series of one run.
func seriesSVG(name string, s sweep.Series, stepName string) template.HTML {
	xa, okx := newAxis(s.Step)
	ya, oky := newAxis(s.Value)
	if !okx || !oky {
		return template.HTML(`<p class="empty">` + esc(name) + `: no finite values.</p>`)
	}
	p := newBox(380, 240, xa, ya, name, stepName, name)
	p.line(s.Step, s.Value, "#0072b2", 1.5, name)
	return p.html()
}

// fmtf formats a number briefly.
func fmtf(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
