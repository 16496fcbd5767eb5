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

// bands are filled polygons between lo and hi over xs, one for each run of
// points where both are known: a point without an interval ends a band
// rather than being bridged, which would shade area outside every interval.
func bands(xs, lo, hi []float64, fill color.Color) ([]*plotter.Polygon, error) {
	var out []*plotter.Polygon
	for i := 0; i < len(xs); {
		if math.IsNaN(lo[i]) || math.IsNaN(hi[i]) {
			i++
			continue
		}
		j := i
		for j < len(xs) && !math.IsNaN(lo[j]) && !math.IsNaN(hi[j]) {
			j++
		}
		if j-i >= 2 {
			pts := make(plotter.XYs, 0, 2*(j-i))
			for k := i; k < j; k++ {
				pts = append(pts, plotter.XY{X: xs[k], Y: lo[k]})
			}
			for k := j - 1; k >= i; k-- {
				pts = append(pts, plotter.XY{X: xs[k], Y: hi[k]})
			}
			poly, err := plotter.NewPolygon(pts)
			if err != nil {
				return nil, err
			}
			poly.Color = fill
			poly.LineStyle.Width = 0
			out = append(out, poly)
		}
		i = j
	}
	return out, nil
}

// figure is one or more plots side by side with one legend to their right,
// outside every plot's data area, so that it never covers a line or band.
type figure struct {
	name    string
	panels  []*plot.Plot
	legend  plot.Legend
	entries int
	// w and h are the size of one panel; the legend adds to the width.
	w, h vg.Length
}

// legendGap is the space on either side of a figure's legend.
const legendGap = 3 * vg.Millimeter

func newFigure(name string, w, h vg.Length, panels ...*plot.Plot) *figure {
	f := &figure{name: name, panels: panels, legend: plot.NewLegend(), w: w, h: h}
	f.legend.Top, f.legend.Left = true, true
	f.legend.TextStyle.Font.Size = vg.Points(10)
	return f
}

// add adds a legend entry; an entry already there (the same method in
// another panel) is not repeated.
func (f *figure) add(label string, seen map[string]bool, thumbs ...plot.Thumbnailer) {
	if seen[label] {
		return
	}
	seen[label] = true
	f.legend.Add(label, thumbs...)
	f.entries++
}

func (f *figure) legendWidth() vg.Length {
	if f.entries == 0 {
		return 0
	}
	r := f.legend.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X + 2*legendGap
}

// size is the figure's width and height.
func (f *figure) size() (vg.Length, vg.Length) {
	return vg.Length(len(f.panels))*f.w + f.legendWidth(), f.h
}

// layout gives the canvases the panels are drawn in, the data area of each
// and the legend's canvas, in c.
func (f *figure) layout(c draw.Canvas) (panels, data []draw.Canvas, legend draw.Canvas) {
	area := draw.Crop(c, 0, -f.legendWidth(), 0, 0)
	tiles := draw.Tiles{Rows: 1, Cols: len(f.panels), PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	panels = plot.Align([][]*plot.Plot{f.panels}, tiles, area)[0]
	for i, p := range f.panels {
		data = append(data, p.DataCanvas(panels[i]))
	}
	legend = c
	legend.Min.X = area.Max.X + legendGap
	legend.Max.X = c.Max.X - legendGap
	legend.Max.Y = data[0].Max.Y
	return panels, data, legend
}

func (f *figure) draw(c draw.Canvas) {
	panels, _, legend := f.layout(c)
	for i, p := range f.panels {
		p.Draw(panels[i])
	}
	if f.entries > 0 {
		f.legend.Draw(legend)
	}
}

// save writes the figure as name.png and name.svg in dir.
func (f *figure) save(dir string) ([]string, error) {
	var out []string
	w, h := f.size()
	for _, ext := range []string{".png", ".svg"} {
		var c vg.CanvasWriterTo
		if ext == ".png" {
			c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
		} else {
			c = vgsvg.New(w, h)
		}
		f.draw(draw.New(c))
		path := filepath.Join(dir, f.name+ext)
		file, err := os.Create(path)
		if err != nil {
			return out, err
		}
		if _, err := c.WriteTo(file); err != nil {
			file.Close()
			return out, fmt.Errorf("%s: %w", path, err)
		}
		if err := file.Close(); err != nil {
			return out, err
		}
		out = append(out, path)
	}
	return out, nil
}

// margin widens an axis's range by 5% of its span on each side, so that no
// plotted value (a band's edge, an interval's end) lies on the frame where
// it reads as cut off; a range of one value (one evaluation) becomes that
// value ± 5% (± 0.5 around 0). gonum's own ±1 around a single value is
// wide enough to lose a point's scale and narrow enough to repeat labels.
func margin(a *plot.Axis) {
	lo, hi := a.Min, a.Max
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
		return // nothing plotted
	}
	d := 0.05 * (hi - lo)
	if d == 0 {
		d = 0.05 * math.Abs(lo)
		if d == 0 {
			d = 0.5
		}
	}
	a.Min, a.Max = lo-d, hi+d
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

// plots draws the performance profiles, the IQM intervals, one
// learning-curve figure per dataset and the dose–response figures.
func (r *Report) plots(dir string) ([]string, error) {
	figs, err := r.figures()
	if err != nil {
		return nil, err
	}
	dose, err := r.doseFigures(5.5*vg.Inch, 3.8*vg.Inch)
	if err != nil {
		return nil, err
	}
	figs = append(figs, dose...)
	var written []string
	for _, f := range figs {
		files, err := f.save(dir)
		written = append(written, files...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// figures builds the figures plots writes.
func (r *Report) figures() ([]*figure, error) {
	const w, h = 5.5 * vg.Inch, 3.8 * vg.Inch
	var figs []*figure

	// Performance profiles. With few runs a profile's interval is wide (with
	// 3 runs, 0 to 1 wherever 1 or 2 of them are above τ): each band is
	// lightly filled and edged by its lower and upper curves, so overlapping
	// bands stay apart.
	p := newPlot("Performance profiles", "normalized score τ", "fraction of runs with score > τ")
	f := newFigure("performance-profiles", w, h, p)
	seen := map[string]bool{}
	for _, pc := range r.Profiles {
		c := r.colour(pc.Method)
		mean, lo, hi := make([]float64, len(pc.Curve)), make([]float64, len(pc.Curve)), make([]float64, len(pc.Curve))
		for i, v := range pc.Curve {
			mean[i], lo[i], hi[i] = v.Value, v.Lo, v.Hi
		}
		polys, err := bands(r.Taus, lo, hi, color.NRGBA{c.R, c.G, c.B, 36})
		if err != nil {
			return nil, err
		}
		for _, poly := range polys {
			p.Add(poly)
		}
		for _, edge := range [][]float64{lo, hi} {
			ls, err := lines(r.Taus, edge)
			if err != nil {
				return nil, err
			}
			for _, l := range ls {
				l.Color, l.Width = color.NRGBA{c.R, c.G, c.B, 140}, vg.Points(0.6)
				l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				p.Add(l)
			}
		}
		ls, err := lines(r.Taus, mean)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			l.Color, l.Width = c, vg.Points(1.5)
			p.Add(l)
		}
		if len(ls) > 0 {
			f.add(pc.Method, seen, ls[0])
		}
	}
	p.Y.Min, p.Y.Max = 0, 1
	margin(&p.X)
	margin(&p.Y)
	figs = append(figs, f)

	// IQM with intervals: one horizontal bar per method.
	score := r.scoreName()
	p = newPlot(fmt.Sprintf("IQM of the final %s (%.0f%% CI)", score, 100*r.Settings.Level), score, "")
	if r.Settings.Last > 1 {
		p.Title.Text = fmt.Sprintf("IQM of the %s, last %d evaluations (%.0f%% CI)", score, r.Settings.Last, 100*r.Settings.Level)
	}
	names := make([]string, len(r.IQM))
	for i, m := range r.IQM {
		names[i] = m.Method
		c := r.colour(m.Method)
		if !math.IsNaN(m.Lo) && !math.IsNaN(m.Hi) {
			seg, err := plotter.NewLine(plotter.XYs{{X: m.Lo, Y: float64(i)}, {X: m.Hi, Y: float64(i)}})
			if err != nil {
				return nil, err
			}
			seg.Color, seg.Width = c, vg.Points(6)
			p.Add(seg)
		}
		if math.IsNaN(m.Value) {
			continue // no finished run of this method (only runs in progress)
		}
		dot, err := plotter.NewScatter(plotter.XYs{{X: m.Value, Y: float64(i)}})
		if err != nil {
			return nil, err
		}
		dot.Color = color.Black
		dot.GlyphStyle.Shape = draw.BoxGlyph{}
		dot.GlyphStyle.Radius = vg.Points(3)
		p.Add(dot)
	}
	margin(&p.X)
	if len(names) > 0 {
		p.NominalY(names...)
	}
	figs = append(figs, newFigure("iqm", w, vg.Length(1.2+0.45*float64(len(names)))*vg.Inch, p))

	// Learning curves, one figure per dataset; with panels of the mean Q on
	// data actions and of CQL's α′ beside it where the runs logged them.
	for _, dc := range r.Curves {
		if len(dc.Curves) == 0 {
			continue
		}
		f := newFigure("curves-"+fileName(dc.Dataset), w, h)
		seen := map[string]bool{}
		for _, panel := range []struct {
			label  string
			curves []Curve
		}{
			{fmt.Sprintf("%s (mean, %.0f%% CI)", r.datasetScoreName(dc.Dataset), 100*r.Settings.Level), dc.Curves},
			{"mean Q(shifted s, a) on data actions", dc.QCurves},
			{"CQL Lagrange multiplier α′", dc.AlphaPrimeCurves},
		} {
			if len(panel.curves) == 0 {
				continue
			}
			p, err := r.curvePlot(f, seen, dc.Dataset, panel.label, panel.curves)
			if err != nil {
				return nil, err
			}
			f.panels = append(f.panels, p)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// newPlot is a plot with a grid and axes labelled by plainTicks.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// lines are the runs of known (non-NaN) ys over xs, one line each.
func lines(xs, ys []float64) ([]*plotter.Line, error) {
	var out []*plotter.Line
	var pts plotter.XYs
	flush := func() error {
		if len(pts) > 0 {
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			out = append(out, l)
		}
		pts = nil
		return nil
	}
	for i, y := range ys {
		if math.IsNaN(y) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		pts = append(pts, plotter.XY{X: xs[i], Y: y})
	}
	return out, flush()
}

// curvePlot draws one line (and CI band) per method's curve, its legend
// entries going to f. A curve of one evaluation is a point with its
// interval as a bar: a line through one point draws nothing.
func (r *Report) curvePlot(f *figure, seen map[string]bool, title, ylabel string, curves []Curve) (*plot.Plot, error) {
	p := newPlot(title, "gradient steps", ylabel)
	for _, cv := range curves {
		c := r.colour(cv.Method)
		xs := make([]float64, len(cv.Steps))
		for i, s := range cv.Steps {
			xs[i] = float64(s)
		}
		polys, err := bands(xs, cv.Lo, cv.Hi, translucent(c))
		if err != nil {
			return nil, err
		}
		for _, poly := range polys {
			p.Add(poly)
		}
		ls, err := lines(xs, cv.Mean)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			l.Color, l.Width = c, vg.Points(1.5)
			p.Add(l)
		}
		if len(xs) == 1 {
			if !math.IsNaN(cv.Lo[0]) && !math.IsNaN(cv.Hi[0]) {
				bar, err := plotter.NewLine(plotter.XYs{{X: xs[0], Y: cv.Lo[0]}, {X: xs[0], Y: cv.Hi[0]}})
				if err != nil {
					return nil, err
				}
				bar.Color, bar.Width = translucent(c), vg.Points(6)
				p.Add(bar)
			}
			if !math.IsNaN(cv.Mean[0]) {
				dot, err := plotter.NewScatter(plotter.XYs{{X: xs[0], Y: cv.Mean[0]}})
				if err != nil {
					return nil, err
				}
				dot.Color = c
				dot.GlyphStyle.Shape = draw.CircleGlyph{}
				dot.GlyphStyle.Radius = vg.Points(3)
				p.Add(dot)
			}
		}
		label := fmt.Sprintf("%s (%s)", cv.Method, plural.Count(cv.Seeds, "seed"))
		if cv.InProgress {
			label = fmt.Sprintf("%s (%s, in progress)", cv.Method, plural.Count(cv.Seeds, "seed"))
		}
		l, err := plotter.NewLine(plotter.XYs{{}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c, vg.Points(1.5)
		f.add(label, seen, l)
	}
	margin(&p.X)
	margin(&p.Y)
	return p, nil
}

// plainTicks are gonum's default tick positions labelled with the fewest
// decimals that write every labelled value exactly (to a millionth of the
// spacing between labels): plain numbers (2500, not gonum's 2500.00 on
// 1000–23000), and never two labels alike (gonum labels 1.05–1.2 as 1.1,
// 1.1, 1.1, 1.1, 1.2, 1.2 and 2.21–2.31 as 2.2, 2.3, 2.3).
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	var at []int
	gap := math.Inf(1)
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		if len(at) > 0 {
			gap = math.Min(gap, ts[i].Value-ts[at[len(at)-1]].Value)
		}
		at = append(at, i)
	}
	tol := 1e-6 * gap
	if math.IsInf(gap, 1) || gap <= 0 {
		tol = 1e-9 * math.Max(1, math.Abs(max-min))
	}
	for prec := 0; prec <= 17; prec++ {
		labels := make([]string, len(at))
		exact := true
		for k, i := range at {
			v := ts[i].Value
			s := strconv.FormatFloat(v, 'f', prec, 64)
			x, _ := strconv.ParseFloat(s, 64)
			if math.Abs(x-v) > tol {
				exact = false
				break
			}
			if x == 0 {
				s = strings.TrimPrefix(s, "-")
			}
			labels[k] = s
		}
		if exact {
			for k, i := range at {
				ts[i].Label = labels[k]
			}
			break
		}
	}
	return ts
}
