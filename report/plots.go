package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/koopq/koopq/internal/plural"
)

var palette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}}

func (r *Report) colour(method string) color.RGBA {
	for i, m := range r.Methods {
		if m == method {
			return palette[i%len(palette)]
		}
	}
	return palette[len(palette)-1]
}

func translucent(c color.RGBA) color.NRGBA { return color.NRGBA{c.R, c.G, c.B, 60} }

// band is a filled polygon between lo and hi over xs.
func band(xs, lo, hi []float64, c color.RGBA) (*plotter.Polygon, error) {
	pts := make(plotter.XYs, 0, 2*len(xs))
	for i := range xs {
		if !math.IsNaN(lo[i]) {
			pts = append(pts, plotter.XY{X: xs[i], Y: lo[i]})
		}
	}
	for i := len(xs) - 1; i >= 0; i-- {
		if !math.IsNaN(hi[i]) {
			pts = append(pts, plotter.XY{X: xs[i], Y: hi[i]})
		}
	}
	if len(pts) < 3 {
		return nil, nil
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		return nil, err
	}
	poly.Color = translucent(c)
	poly.LineStyle.Width = 0
	return poly, nil
}

// save writes p as name.png and name.svg in dir.
func save(p *plot.Plot, dir, name string, w, h vg.Length) ([]string, error) {
	var out []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, name+ext)
		if err := p.Save(w, h, path); err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, path)
	}
	return out, nil
}

func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		case r == '+':
			return 'p'
		}
		return '-'
	}, s)
}

// plots draws the performance profiles, the IQM intervals and one
// learning-curve figure per dataset.
func (r *Report) plots(dir string) ([]string, error) {
	var written []string
	const w, h = 5.5 * vg.Inch, 3.8 * vg.Inch

	// Performance profiles.
	p := plot.New()
	p.Title.Text = "Performance profiles"
	p.X.Label.Text = "normalized score τ"
	p.Y.Label.Text = "fraction of runs with score > τ"
	p.Add(plotter.NewGrid())
	for _, pc := range r.Profiles {
		c := r.colour(pc.Method)
		mean, lo, hi := make([]float64, len(pc.Curve)), make([]float64, len(pc.Curve)), make([]float64, len(pc.Curve))
		pts := make(plotter.XYs, 0, len(pc.Curve))
		for i, v := range pc.Curve {
			mean[i], lo[i], hi[i] = v.Value, v.Lo, v.Hi
			if !math.IsNaN(v.Value) {
				pts = append(pts, plotter.XY{X: r.Taus[i], Y: v.Value})
			}
		}
		if poly, err := band(r.Taus, lo, hi, c); err != nil {
			return written, err
		} else if poly != nil {
			p.Add(poly)
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return written, err
		}
		l.Color, l.Width = c, vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(pc.Method, l)
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	files, err := save(p, dir, "performance-profiles", w, h)
	written = append(written, files...)
	if err != nil {
		return written, err
	}

	// IQM with intervals: one horizontal bar per method.
	p = plot.New()
	p.Title.Text = fmt.Sprintf("IQM of the final normalized score (%.0f%% CI)", 100*r.Settings.Level)
	if r.Settings.Last > 1 {
		p.Title.Text = fmt.Sprintf("IQM of the normalized score, last %d evaluations (%.0f%% CI)", r.Settings.Last, 100*r.Settings.Level)
	}
	p.X.Label.Text = "normalized score"
	p.Add(plotter.NewGrid())
	names := make([]string, len(r.IQM))
	for i, m := range r.IQM {
		names[i] = m.Method
		c := r.colour(m.Method)
		if !math.IsNaN(m.Lo) {
			seg, err := plotter.NewLine(plotter.XYs{{X: m.Lo, Y: float64(i)}, {X: m.Hi, Y: float64(i)}})
			if err != nil {
				return written, err
			}
			seg.Color, seg.Width = c, vg.Points(6)
			p.Add(seg)
		}
		if math.IsNaN(m.Value) {
			continue // no finished run of this method (only runs in progress)
		}
		dot, err := plotter.NewScatter(plotter.XYs{{X: m.Value, Y: float64(i)}})
		if err != nil {
			return written, err
		}
		dot.Color = color.Black
		dot.GlyphStyle.Shape = draw.BoxGlyph{}
		dot.GlyphStyle.Radius = vg.Points(3)
		p.Add(dot)
	}
	p.NominalY(names...)
	files, err = save(p, dir, "iqm", w, vg.Length(1.2+0.45*float64(len(names)))*vg.Inch)
	written = append(written, files...)
	if err != nil {
		return written, err
	}

	// Learning curves, one figure per dataset; with panels of the mean Q on
	// data actions and of CQL's α′ beside it where the runs logged them.
	for _, dc := range r.Curves {
		if len(dc.Curves) == 0 {
			continue
		}
		p, err := r.curvePlot(dc.Dataset, fmt.Sprintf("normalized score (mean, %.0f%% CI)", 100*r.Settings.Level), dc.Curves)
		if err != nil {
			return written, err
		}
		panels := []*plot.Plot{p}
		for _, extra := range []struct {
			label  string
			curves []Curve
		}{
			{"mean Q(s̃, a) on data actions", dc.QCurves},
			{"CQL Lagrange multiplier α′", dc.AlphaPrimeCurves},
		} {
			if len(extra.curves) == 0 {
				continue
			}
			q, err := r.curvePlot(dc.Dataset, extra.label, extra.curves)
			if err != nil {
				return written, err
			}
			panels = append(panels, q)
		}
		var files []string
		if len(panels) == 1 {
			files, err = save(p, dir, "curves-"+fileName(dc.Dataset), w, h)
		} else {
			files, err = saveRow(panels, dir, "curves-"+fileName(dc.Dataset), vg.Length(len(panels))*w, h)
		}
		written = append(written, files...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// curvePlot draws one line (and CI band) per method's curve.
func (r *Report) curvePlot(title, ylabel string, curves []Curve) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "gradient steps"
	p.X.Tick.Marker = stepTicks{}
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	for _, cv := range curves {
		c := r.colour(cv.Method)
		xs := make([]float64, len(cv.Steps))
		pts := make(plotter.XYs, len(cv.Steps))
		for i, s := range cv.Steps {
			xs[i] = float64(s)
			pts[i] = plotter.XY{X: xs[i], Y: cv.Mean[i]}
		}
		if poly, err := band(xs, cv.Lo, cv.Hi, c); err != nil {
			return nil, err
		} else if poly != nil {
			p.Add(poly)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c, vg.Points(1.5)
		p.Add(l)
		label := fmt.Sprintf("%s (%s)", cv.Method, plural.Count(cv.Seeds, "seed"))
		if cv.InProgress {
			label = fmt.Sprintf("%s (%s, in progress)", cv.Method, plural.Count(cv.Seeds, "seed"))
		}
		p.Legend.Add(label, l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// saveRow writes plots side by side, aligned, as name.png and name.svg.
func saveRow(ps []*plot.Plot, dir, name string, w, h vg.Length) ([]string, error) {
	var out []string
	for _, ext := range []string{".png", ".svg"} {
		var c vg.CanvasWriterTo
		if ext == ".png" {
			c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
		} else {
			c = vgsvg.New(w, h)
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(ps), PadX: vg.Millimeter, PadY: vg.Millimeter,
			PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
		cs := plot.Align([][]*plot.Plot{ps}, tiles, draw.New(c))
		for i, p := range ps {
			p.Draw(cs[0][i])
		}
		path := filepath.Join(dir, name+ext)
		f, err := os.Create(path)
		if err != nil {
			return out, err
		}
		if _, err := c.WriteTo(f); err != nil {
			f.Close()
			return out, fmt.Errorf("%s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return out, err
		}
		out = append(out, path)
	}
	return out, nil
}

// stepTicks labels a gradient-step axis: gonum's default tick positions,
// written as plain numbers (2500, not 2500.00 as the default labels a range
// such as 1000–23000).
type stepTicks struct{}

// Ticks implements plot.Ticker.
func (stepTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}
