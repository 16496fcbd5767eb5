package run

import (
	"bytes"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/koopq/koopq/internal/palette"
)

// PlotDemoCurves draws one panel per dataset: the normalized score (or the
// return, when the env has no references) against CQL steps, averaged over
// seeds, one line per method.
func PlotDemoCurves(r *DemoResult, path string) error {
	const w, h = 5 * vg.Inch, 3.5 * vg.Inch
	plots := make([][]*plot.Plot, 1)
	for _, name := range r.Config.Datasets {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s-%s", r.Config.Collect.Env, name)
		p.X.Label.Text = "CQL gradient steps"
		p.Y.Label.Text = "normalized score"
		p.Add(plotter.NewGrid())
		for _, c := range r.Cells {
			if c.Dataset != name || len(c.Curves) == 0 {
				continue
			}
			n := len(c.Curves[0])
			pts := make(plotter.XYs, 0, n)
			for i := 0; i < n; i++ {
				var s float64
				k := 0
				for _, cur := range c.Curves {
					if i < len(cur) {
						v := float64(cur[i].Normalized)
						if math.IsNaN(v) {
							v = cur[i].Mean
							p.Y.Label.Text = "return"
						}
						s += v
						k++
					}
				}
				pts = append(pts, plotter.XY{X: float64(c.Curves[0][i].Step), Y: s / float64(k)})
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = palette.Colors[methodIndex(r.Config.Methods, c.Method)%len(palette.Colors)]
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(methodLabel(c.Method), l)
		}
		p.Legend.Top = true
		p.Legend.Left = true
		plots[0] = append(plots[0], p)
	}
	img := vgimg.New(w*vg.Length(len(plots[0])), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots[0]), PadX: vg.Millimeter, PadY: vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for j, p := range plots[0] {
		p.Draw(canvases[0][j])
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// methodIndex is m's position in methods (its colour in every panel).
func methodIndex(methods []string, m string) int {
	for i, x := range methods {
		if x == m {
			return i
		}
	}
	return len(methods)
}
