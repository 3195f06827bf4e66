package plot

import (
	"fmt"
	"slices"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// HoldCodes writes a bar chart of holds per HoldReasonCode to path (PNG or
// SVG, Width × Height), codes in increasing order, the count above each
// bar. No holds is an error wrapping ErrNoData (and no file).
func HoldCodes(path, title string, holds map[int]int) error {
	codes := make([]int, 0, len(holds))
	total := 0
	for c, n := range holds {
		if n > 0 {
			codes = append(codes, c)
			total += n
		}
	}
	if len(codes) == 0 {
		return fmt.Errorf("plot: HoldCodes: %w (no holds)", ErrNoData)
	}
	slices.Sort(codes)
	vals := make(plotter.Values, len(codes))
	names := make([]string, len(codes))
	for i, c := range codes {
		vals[i] = float64(holds[c])
		names[i] = strconv.Itoa(c)
	}
	p := New(fmt.Sprintf("%s (%d holds)", title, total), "HoldReasonCode", "holds")
	p.Y.Min = 0
	p.Y.Tick.Marker = IntTicks{}
	bars, err := plotter.NewBarChart(vals, vg.Points(max(6, min(24, 360/float64(len(codes))))))
	if err != nil {
		return fmt.Errorf("plot: HoldCodes: %w", err)
	}
	bars.Color = Color(0)
	p.Add(bars)
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: barTops(vals), Labels: countLabels(vals)})
	if err == nil {
		labels.Offset.Y = vg.Points(3)
		for i := range labels.TextStyle {
			labels.TextStyle[i].XAlign = -0.5
		}
		p.Add(labels)
	}
	p.NominalX(names...)
	return Save(p, Width, Height, path)
}

func barTops(vals plotter.Values) plotter.XYs {
	xy := make(plotter.XYs, len(vals))
	for i, v := range vals {
		xy[i] = plotter.XY{X: float64(i), Y: v}
	}
	return xy
}

func countLabels(vals plotter.Values) []string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = strconv.Itoa(int(v))
	}
	return s
}
