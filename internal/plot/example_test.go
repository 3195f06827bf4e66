package plot_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/crosscluster/crosscluster/internal/plot"
)

// New gives the house layout; Render draws into a buffer (a web handler's
// response, say) and Save into a file.
func ExampleRender() {
	p := plot.New("loss", "epoch", "loss")
	l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0.9}, {X: 2, Y: 0.5}, {X: 3, Y: 0.4}})
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Add(l)
	var buf bytes.Buffer
	if err := plot.Render(&buf, p, 4*vg.Inch, 3*vg.Inch, "svg"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Contains(buf.String(), "<svg"), strings.Contains(buf.String(), ">epoch<"))
	fmt.Println(plot.Render(&buf, p, 4*vg.Inch, 3*vg.Inch, "gif"))
	// Output:
	// true true
	// plot: Render: unsupported figure format "gif" (want png or svg)
}

// HoldCodes draws holds per HoldReasonCode; a log without holds has
// nothing to draw, and no file is written.
func ExampleHoldCodes() {
	dir, err := os.MkdirTemp("", "holds")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "holds.svg")
	if err := plot.HoldCodes(path, "held jobs", map[int]int{26: 40, 34: 7, 12: 3}); err != nil {
		fmt.Println(err)
		return
	}
	svg, _ := os.ReadFile(path)
	fmt.Println(strings.Contains(string(svg), "held jobs (50 holds)"))

	err = plot.HoldCodes(filepath.Join(dir, "none.svg"), "held jobs", nil)
	fmt.Println(errors.Is(err, plot.ErrNoData), err)
	// Output:
	// true
	// true plot: HoldCodes: nothing to draw (no holds)
}
