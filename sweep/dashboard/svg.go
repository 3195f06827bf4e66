package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"slices"
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
	if a.lo == a.hi {
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

func (a axis) label() string {
	if a.log {
		return " (log)"
	}
	return ""
}

// plotBox is a figure of w×h pixels with margins for the axis labels.
// Data are drawn inset pixels inside the axes, so that dots at the extreme
// values do not sit on the axis lines; the end labels mark those values.
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
	fmt.Fprintf(&p.b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/>`, x0, y0, x1, y0, x0, y0, x0, y1)
	anchor := map[bool][2]string{false: {"start", "end"}, true: {"middle", "middle"}}[inset > 0]
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="%s">%s</text>`, x0+inset, y0+14, anchor[0], esc(fmtf(x.lo)))
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="%s">%s</text>`, x1-inset, y0+14, anchor[1], esc(fmtf(x.hi)))
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="middle">%s</text>`, (x0+x1)/2, h-4, esc(p.xl))
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, x0-4, y0-inset+min(inset, 4), esc(fmtf(y.lo)))
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, x0-4, y1+inset+9-min(inset, 5), esc(fmtf(y.hi)))
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

func (p *plotBox) note(text string) {
	fmt.Fprintf(&p.b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, p.w-p.right, p.top+10, esc(text))
}

func (p *plotBox) html() template.HTML {
	p.b.WriteString(`</svg>`)
	return template.HTML(p.b.String()) // every text above went through esc
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// curvesSVG draws every run's curve of metric, thin and grey, the best run
// thick and black and named.
func curvesSVG(runs []sweep.RunSummary, curves map[string]sweep.Series, best, metric string) template.HTML {
	var xs, ys []float64
	for _, c := range curves {
		xs = append(xs, c.Step...)
		ys = append(ys, c.Value...)
	}
	xa, okx := newAxis(xs)
	ya, oky := newAxis(ys)
	if !okx || !oky {
		return template.HTML(`<p class="empty">No ` + esc(metric) + ` values streamed yet.</p>`)
	}
	p := newBox(760, 340, xa, ya, fmt.Sprintf("%s of every run (%d), the best in black", metric, len(curves)), "step", metric)
	ids := make([]string, 0, len(curves))
	for id := range curves {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	slug := map[string]string{}
	for _, r := range runs {
		slug[r.ID] = r.Slug
	}
	for _, id := range ids {
		if id != best {
			p.line(curves[id].Step, curves[id].Value, "#9ab", 1, slug[id])
		}
	}
	if c, ok := curves[best]; ok {
		p.line(c.Step, c.Value, "#000", 2.5, slug[best])
		p.note("best: " + slug[best])
	}
	return p.html()
}

// scatterSVG draws a numeric parameter against the final metric, one dot
// per run coloured by state, the best run larger; false when the parameter
// is not numeric or no run has a final value.
func scatterSVG(runs []sweep.RunSummary, param, metric, best string) (template.HTML, bool) {
	var xs, ys []float64
	type pt struct {
		x, y  float64
		state sweep.State
		slug  string
		best  bool
	}
	var pts []pt
	for i := range runs {
		v, ok := runs[i].Params()[param]
		if !ok || (v.Kind != sweep.Int && v.Kind != sweep.Float) {
			continue
		}
		y, ok := final(&runs[i], metric)
		if !ok {
			continue
		}
		pts = append(pts, pt{v.Float(), y, runs[i].State, runs[i].Slug, runs[i].ID == best})
		xs, ys = append(xs, v.Float()), append(ys, y)
	}
	if len(pts) == 0 || slices.Min(xs) == slices.Max(xs) {
		return "", false // one value of the parameter says nothing
	}
	xa, okx := newAxis(xs)
	ya, oky := newAxis(ys)
	if !okx || !oky {
		return "", false
	}
	p := newInsetBox(300, 220, 9, xa, ya, param+" against "+metric, param, metric)
	for _, q := range pts {
		r := 3.0
		color := stateColors[q.state]
		if q.best {
			r, color = 6, "#000"
		}
		p.dot(q.x, q.y, color, r, fmt.Sprintf("%s: %s=%s, %s=%s", q.slug, param, fmtf(q.x), metric, fmtf(q.y)))
	}
	return p.html(), true
}

// seriesSVG draws one series of one run.
func seriesSVG(name string, s sweep.Series) template.HTML {
	xa, okx := newAxis(s.Step)
	ya, oky := newAxis(s.Value)
	if !okx || !oky {
		return template.HTML(`<p class="empty">` + esc(name) + `: no finite values.</p>`)
	}
	p := newBox(380, 240, xa, ya, name, "step", name)
	p.line(s.Step, s.Value, "#0072b2", 1.5, name)
	return p.html()
}
