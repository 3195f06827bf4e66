package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Default figure size: readable on a laptop screen and in a paper column at
// 100 dpi (600×400 pixels).
const (
	Width  = 6 * vg.Inch
	Height = 4 * vg.Inch
	DPI    = 100
)

// margin keeps the title and the outermost tick labels inside the image;
// gonum/plot draws them flush with the canvas edge.
const margin = 4 * vg.Millimeter

// New returns a plot with the house layout: the title padded from the data
// and both axis labels set.
func New(title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.Padding = 3 * vg.Millimeter
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	return p
}

// Palette is a colour-blind-safe qualitative palette (Okabe and Ito, 2008),
// used in this order by every figure with several series.
var Palette = [...]color.RGBA{
	{0, 114, 178, 255},   // blue
	{230, 159, 0, 255},   // orange
	{0, 158, 115, 255},   // bluish green
	{204, 121, 167, 255}, // reddish purple
	{86, 180, 233, 255},  // sky blue
	{213, 94, 0, 255},    // vermillion
	{240, 228, 66, 255},  // yellow
	{0, 0, 0, 255},       // black
}

// Color returns the i-th colour of Palette, cycling.
func Color(i int) color.Color { return Palette[i%len(Palette)] }

// IntTicks marks integer positions only (counts, epochs, levels), with at
// most about eight labelled ticks, so that a count never reads "2.50".
type IntTicks struct{}

// Ticks implements gplot.Ticker.
func (IntTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi >= lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	span := math.Ceil(hi) - math.Floor(lo)
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6} {
		step = s
		if span/s <= 8 {
			break
		}
	}
	var t []gplot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		t = append(t, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return t
}

// Save renders p at w×h into path. The format follows the extension (.png,
// .svg); the file is written to a temporary name beside path and renamed, so
// that path holds a whole figure or nothing.
func Save(p *gplot.Plot, w, h vg.Length, path string) error {
	var buf bytes.Buffer
	if err := render(&buf, p, w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")); err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("plot: %w", err) // an *os.PathError naming the file
	}
	return nil
}

// Render writes p at w×h in format ("png" or "svg") to buf, inside the
// house margin.
func Render(buf *bytes.Buffer, p *gplot.Plot, w, h vg.Length, format string) error {
	if err := render(buf, p, w, h, format); err != nil {
		return fmt.Errorf("plot: Render: %w", err)
	}
	return nil
}

func render(buf *bytes.Buffer, p *gplot.Plot, w, h vg.Length, format string) error {
	c, err := canvas(w, h, format)
	if err != nil {
		return err
	}
	p.Draw(draw.Crop(draw.New(c), margin, -margin, margin, -margin))
	_, err = c.WriteTo(buf)
	return err
}

// canvas returns a w×h canvas that writes format ("png" or "svg").
func canvas(w, h vg.Length, format string) (vg.CanvasWriterTo, error) {
	switch format {
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))}, nil
	case "svg":
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("unsupported figure format %q (want png or svg)", format)
}

// saveTiles renders a row-major grid of plots, aligned so that their data
// areas line up, under a title, at w×h into path as Save does.
func saveTiles(plots [][]*gplot.Plot, title string, w, h vg.Length, path string) error {
	c, err := canvas(w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	dc := draw.Crop(draw.New(c), margin, -margin, margin, -margin)
	if title != "" {
		sty := New(title, "", "").Title.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, title)
		dc = draw.Crop(dc, 0, 0, 0, -(sty.Height(title) + 4*vg.Millimeter))
	}
	t := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: 8 * vg.Millimeter, PadY: 6 * vg.Millimeter}
	cs := gplot.Align(plots, t, dc)
	for r := range plots {
		for k := range plots[r] {
			plots[r][k].Draw(cs[r][k])
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
