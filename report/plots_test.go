package report

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// render draws f at 72 dpi (one pixel a point), as the PNG is drawn, and
// returns the image and the layout it was drawn with. Drawing settles each
// axis's final range (gonum widens a range of one value at draw time).
func render(t *testing.T, f *figure) (image.Image, []draw.Canvas, draw.Canvas) {
	t.Helper()
	w, h := f.size()
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(72))
	dc := draw.New(c)
	f.draw(dc)
	_, data, legend := f.layout(dc)
	return c.Image(), data, legend
}

// pixel is the image's colour at canvas point (x, y).
func pixel(img image.Image, x, y vg.Length) color.RGBA {
	b := img.Bounds()
	r, g, bl, a := img.At(int(x), b.Max.Y-1-int(y)).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}
}

// plotReports are the reports the plot tests draw: runs of several
// evaluations, runs of one evaluation each (2.21–2.31 once read 2.2, 2.3,
// 2.3 on its axis), and curves whose values span 1.05–1.2 (an α′ panel
// whose axis read 1.1 four times).
func plotReports(t *testing.T) map[string]*Report {
	t.Helper()
	reps := map[string]*Report{}

	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 80, []float64{40, 60, 80}, true)
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, 90, []float64{50, 70, 90}, true)
	writeRun(t, root, 2, "hopper-medium", "CQL", "", 2, 95, []float64{45, 75, 95}, true)
	writeRun(t, root, 3, "hopper-medium", "KFC++", "", 0, 60, []float64{30, 50, 60}, true)
	writeRun(t, root, 4, "hopper-medium", "KFC++", "", 1, 40, []float64{20, 40, 40}, true)
	_, reps["several evaluations"] = collectAndBuild(t, root, Options{Reps: 200, Seed: 1})

	root = t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 2.21, []float64{2.21}, true)
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, 2.31, []float64{2.31}, true)
	writeRun(t, root, 2, "hopper-medium", "CQL", "", 2, 2.26, []float64{2.26}, true)
	writeRun(t, root, 3, "walker-medium", "CQL", "", 0, 2.25, []float64{2.25}, true)
	_, reps["one evaluation"] = collectAndBuild(t, root, Options{Reps: 200, Seed: 1})

	r := &Report{Methods: []string{"CQL", "KFC++"}}
	r.Settings.Level = 0.95
	narrow := func(method string, off float64) Curve {
		cv := Curve{Method: method, Seeds: 3}
		for i := 0; i <= 10; i++ {
			v := 1.08 + off + 0.01*float64(i)
			cv.Steps = append(cv.Steps, 1000*(i+1))
			cv.Mean = append(cv.Mean, v)
			cv.Lo = append(cv.Lo, v-0.03)
			cv.Hi = append(cv.Hi, v+0.01)
		}
		return cv
	}
	r.Curves = []DatasetCurves{{Dataset: "hopper-medium",
		Curves:           []Curve{narrow("CQL", 0.005), narrow("KFC++", 0)},
		AlphaPrimeCurves: []Curve{narrow("CQL", 0), narrow("KFC++", -0.01)}}}
	r.IQM = []MethodCI{{Method: "CQL", CI: stats.CI{Value: 1.1, Lo: 1.05, Hi: 1.2}}, {Method: "KFC++", CI: stats.CI{Value: 1.12, Lo: 1.08, Hi: 1.15}}}
	reps["narrow ranges"] = r
	return reps
}

// plotted is every value a figure's panel plots, x and y apart: the
// points of its lines and the edges of its bands and intervals.
func plotted(r *Report, f *figure, panel int) (xs, ys []float64) {
	switch {
	case f.name == "performance-profiles":
		xs = append(xs, r.Taus...)
		for _, pc := range r.Profiles {
			for _, v := range pc.Curve {
				ys = append(ys, v.Value, v.Lo, v.Hi)
			}
		}
	case f.name == "iqm":
		for _, m := range r.IQM {
			xs = append(xs, m.Value, m.Lo, m.Hi)
		}
	default:
		for _, dc := range r.Curves {
			if "curves-"+fileName(dc.Dataset) != f.name {
				continue
			}
			var lists [][]Curve
			for _, l := range [][]Curve{dc.Curves, dc.QCurves, dc.AlphaPrimeCurves} {
				if len(l) > 0 {
					lists = append(lists, l)
				}
			}
			for _, cv := range lists[panel] {
				for i, s := range cv.Steps {
					xs = append(xs, float64(s))
					ys = append(ys, cv.Mean[i], cv.Lo[i], cv.Hi[i])
				}
			}
		}
	}
	return xs, ys
}

// Every axis of every figure holds every plotted value, band and interval
// edges included, clear of the frame (the CQL band once touched the top of
// the score panel and the KFC++ interval both ends of iqm.png's axis, where
// they read as cut off); and the labels gonum's Ticker gives on the final
// ranges, the labels the PNG shows, are at least two and all different.
func TestPlotAxesHoldEveryValueWithDistinctTicks(t *testing.T) {
	for name, r := range plotReports(t) {
		figs, err := r.figures()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range figs {
			render(t, f)
			for i, p := range f.panels {
				where := func(axis string) string { return name + ": " + f.name + " panel " + string(rune('1'+i)) + " " + axis }
				xs, ys := plotted(r, f, i)
				for _, ax := range []struct {
					name string
					a    *plot.Axis
					vs   []float64
				}{{"x", &p.X, xs}, {"y", &p.Y, ys}} {
					if f.name == "iqm" && ax.name == "y" {
						continue // one row per method
					}
					room := 0.01 * (ax.a.Max - ax.a.Min)
					for _, v := range ax.vs {
						if math.IsNaN(v) {
							continue
						}
						if !(v-ax.a.Min >= room && ax.a.Max-v >= room) {
							t.Errorf("%s: range [%g, %g] does not hold %g clear of its ends", where(ax.name), ax.a.Min, ax.a.Max, v)
						}
					}
					var labels []string
					seen := map[string]bool{}
					for _, tk := range ax.a.Tick.Marker.Ticks(ax.a.Min, ax.a.Max) {
						if tk.Label == "" {
							continue
						}
						if seen[tk.Label] {
							t.Errorf("%s: tick label %q repeated", where(ax.name), tk.Label)
						}
						seen[tk.Label] = true
						labels = append(labels, tk.Label)
					}
					if len(labels) < 2 {
						t.Errorf("%s: tick labels %v on [%g, %g], want at least two", where(ax.name), labels, ax.a.Min, ax.a.Max)
					}
				}
			}
		}
	}
}

// plainTicks never repeats a label, on the ranges gonum's default labels
// repeat, and writes each labelled value exactly.
func TestPlainTicksDistinct(t *testing.T) {
	for _, rg := range [][2]float64{{1.05, 1.2}, {2.21, 2.31}, {0.99, 1.01}, {-0.04, 1.04}, {1e-7, 3e-7}, {99990, 100010}, {2.1375, 2.3625}} {
		seen := map[string]bool{}
		for _, tk := range (plainTicks{}).Ticks(rg[0], rg[1]) {
			if tk.Label == "" {
				continue
			}
			if seen[tk.Label] || strings.HasPrefix(tk.Label, "-0") && tk.Value == 0 {
				t.Errorf("range %v: label %q repeated or a negative zero", rg, tk.Label)
			}
			seen[tk.Label] = true
		}
		if len(seen) < 2 {
			t.Errorf("range %v: labels %v", rg, seen)
		}
	}
}

// A curve of one evaluation is drawn as a point in its method's colour
// inside the data area (a line through one point drew nothing: empty axes).
func TestOneEvaluationDrawsAPoint(t *testing.T) {
	r := plotReports(t)["one evaluation"]
	figs, err := r.figures()
	if err != nil {
		t.Fatal(err)
	}
	want := r.colour("CQL")
	drawn := 0
	for _, f := range figs {
		if !strings.HasPrefix(f.name, "curves-") {
			continue
		}
		drawn++
		img, data, _ := render(t, f)
		n := 0
		for x := data[0].Min.X; x < data[0].Max.X; x++ {
			for y := data[0].Min.Y; y < data[0].Max.Y; y++ {
				if pixel(img, x, y) == want {
					n++
				}
			}
		}
		if n < 9 {
			t.Errorf("%s: %d pixels of CQL's colour in the data area, want a visible point", f.name, n)
		}
	}
	if drawn != 2 {
		t.Fatalf("%d curve figures, want 2", drawn)
	}
}

// Legends lie outside every panel's data area (they once sat over the
// lines) and inside the figure.
func TestLegendOutsideData(t *testing.T) {
	for name, r := range plotReports(t) {
		figs, err := r.figures()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range figs {
			if f.entries == 0 {
				if strings.HasPrefix(f.name, "curves-") {
					t.Errorf("%s: %s has no legend", name, f.name)
				}
				continue
			}
			w, h := f.size()
			_, data, legend := render(t, f)
			lr := f.legend.Rectangle(legend)
			if lr.Min.X < 0 || lr.Min.Y < 0 || lr.Max.X > w || lr.Max.Y > h {
				t.Errorf("%s: %s legend %v outside the figure %v×%v", name, f.name, lr, w, h)
			}
			for i, d := range data {
				if lr.Min.X < d.Max.X && d.Min.X < lr.Max.X && lr.Min.Y < d.Max.Y && d.Min.Y < lr.Max.Y {
					t.Errorf("%s: %s legend %v covers panel %d's data area %v", name, f.name, lr, i+1, d.Rectangle)
				}
			}
		}
	}
}

// A performance profile's shading is the band between its lower and upper
// curves: inside it tinted, above it and where the interval is unknown
// untouched (the band once bridged unknown points, shading area outside
// every interval).
func TestProfileShadingIsTheBand(t *testing.T) {
	r := &Report{Methods: []string{"CQL"}}
	r.Settings.Level = 0.95
	pc := ProfileCurve{Method: "CQL"}
	for i := 0; i <= 10; i++ {
		r.Taus = append(r.Taus, float64(i))
		ci := stats.CI{Value: 0.5, Lo: 0.4, Hi: 0.6}
		if i >= 4 && i <= 6 {
			ci.Lo, ci.Hi = math.NaN(), math.NaN()
		}
		pc.Curve = append(pc.Curve, ci)
	}
	r.Profiles = []ProfileCurve{pc}
	figs, err := r.figures()
	if err != nil {
		t.Fatal(err)
	}
	f := figs[0]
	if f.name != "performance-profiles" {
		t.Fatalf("first figure %s", f.name)
	}
	img, data, _ := render(t, f)
	tx, ty := f.panels[0].Transforms(&data[0])
	white := color.RGBA{255, 255, 255, 255}
	for _, c := range []struct {
		x, y   float64
		tinted bool
	}{{1.6, 0.55, true}, {8.6, 0.45, true}, {1.6, 0.8, false}, {1.6, 0.2, false}, {4.6, 0.55, false}, {5.4, 0.45, false}} {
		got := pixel(img, tx(c.x), ty(c.y))
		if (got != white) != c.tinted {
			t.Errorf("τ %g, fraction %g: colour %v, want tinted %v", c.x, c.y, got, c.tinted)
		}
	}
}

// The figures are written as PNG and SVG, the legend widening them.
func TestFigureFilesWidenForLegend(t *testing.T) {
	r := plotReports(t)["several evaluations"]
	out := t.TempDir()
	files, err := r.plots(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Errorf("files %v, want 3 figures × PNG and SVG", files)
	}
	if w, h := pngSize(t, filepath.Join(out, "performance-profiles.png")); float64(w) <= float64(h)*5.5/3.8 {
		t.Errorf("performance-profiles.png is %d×%d: no room beside the plot for the legend", w, h)
	}
}
