// Package plottest checks figures written by the plot package and the
// examples: that a PNG decodes, has the size it was drawn at and is not
// blank.
package plottest

import (
	"image"
	_ "image/png" // PNG decoder for image.Decode
	"os"
	"testing"
)

// minInk is the share of pixels that must differ from the background for a
// figure to count as drawn: axes and labels alone cover about 2% of a
// 600×400 figure, a plotted series adds more.
const minInk = 0.01

// Check fails t unless path is a PNG of w×h pixels (0 skips the size check)
// with at least minInk of its pixels off the background colour (the
// top-left pixel's).
func Check(t testing.TB, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("figure: %v", err)
	}
	defer f.Close()
	img, format, err := image.Decode(f)
	if err != nil {
		t.Fatalf("figure %s: %v", path, err)
	}
	if format != "png" {
		t.Fatalf("figure %s: format %s, want png", path, format)
	}
	b := img.Bounds()
	if (w > 0 && b.Dx() != w) || (h > 0 && b.Dy() != h) {
		t.Errorf("figure %s: %d×%d pixels, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	if ink := Ink(img); ink < minInk {
		t.Errorf("figure %s: %.4f of pixels drawn, want at least %.2f (blank figure?)", path, ink, minInk)
	}
}

// Ink returns the share of img's pixels whose colour differs from the
// top-left pixel's.
func Ink(img image.Image) float64 {
	b := img.Bounds()
	if b.Empty() {
		return 0
	}
	r0, g0, b0, a0 := img.At(b.Min.X, b.Min.Y).RGBA()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, a := img.At(x, y).RGBA()
			if r != r0 || g != g0 || bb != b0 || a != a0 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}
