package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/stats"
)

// DosePoint is one method's place on a dose–response figure: its
// augmentation's measured size against its score, over its seeds.
type DosePoint struct {
	Method string `json:"method"`
	// Augment is the method's augmentation (Result.Augment): the line the
	// point belongs to.
	Augment string `json:"augment"`
	// Seeds is the number of runs the point is over.
	Seeds int `json:"seeds"`
	// Magnitude is the mean over seeds of each run's shift_l2_mean
	// (mean ‖s̃ − s‖₂ over its training rows, raw state units); 0 for the
	// baseline.
	Magnitude float64 `json:"shift_l2_mean"`
	// Score is the mean run score over seeds (as the tables count it), Lo
	// and Hi its Student-t interval at the report's level (NaN for one
	// seed).
	Score float64 `json:"score"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// MarshalJSON writes undefined bounds as null.
func (p DosePoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"method": p.Method, "augment": p.Augment, "seeds": p.Seeds,
		"shift_l2_mean": p.Magnitude, "score": stats.NullIfNaN(p.Score), "lo": stats.NullIfNaN(p.Lo), "hi": stats.NullIfNaN(p.Hi)})
}

// DoseResponse is one dataset's dose–response: score against the
// augmentation's measured size, for every augmented method whose runs
// recorded it, beside the baseline (plain CQL).
type DoseResponse struct {
	Dataset string `json:"dataset"`
	// Points are the augmented methods, by augment (in order of first
	// appearance) and then by magnitude.
	Points []DosePoint `json:"points"`
	// Baseline is the plain-CQL method (the report's baseline when it is
	// one); nil when the dataset has none.
	Baseline *DosePoint `json:"baseline,omitempty"`
}

// dosePoint is method's point on dataset over rs, or false when none of
// its runs recorded shift_l2_mean (unless baseline, which needs none).
func dosePoint(rs []Result, dataset, method string, level float64, baseline bool) (DosePoint, bool) {
	sel := runsOf(rs, dataset, method)
	if len(sel) == 0 {
		return DosePoint{}, false
	}
	p := DosePoint{Method: method, Augment: sel[0].Augment, Seeds: len(sel)}
	var scores, mags []float64
	for _, r := range sel {
		scores = append(scores, r.Score)
		if v, ok := r.Magnitude[rundir.ShiftL2Mean]; ok && !math.IsNaN(v) {
			mags = append(mags, v)
		}
	}
	p.Score = stats.Mean(scores)
	p.Lo, p.Hi = stats.TInterval(scores, level)
	if baseline {
		return p, true
	}
	p.Magnitude = stats.Mean(mags)
	return p, len(mags) > 0 && p.Magnitude > 0 && !math.IsInf(p.Magnitude, 0)
}

// doseResponses builds the dose–response of each dataset on which some
// augmentation has methods at two or more distinct measured magnitudes
// (main runs only: an ablation varies something else). The baseline is
// baseline when it is plain CQL, else the first plain-CQL method.
func doseResponses(rs []Result, datasets, methods []string, baseline string, level float64) []DoseResponse {
	var out []DoseResponse
	for _, d := range datasets {
		dr := DoseResponse{Dataset: d}
		var augments []string
		for _, m := range methods {
			sel := runsOf(rs, d, m)
			if len(sel) == 0 {
				continue
			}
			if rundir.IsPlainCQL(sel[0].Augment) {
				if dr.Baseline == nil || m == baseline {
					if p, ok := dosePoint(rs, d, m, level, true); ok {
						dr.Baseline = &p
					}
				}
				continue
			}
			if p, ok := dosePoint(rs, d, m, level, false); ok {
				dr.Points = append(dr.Points, p)
				if !slices.Contains(augments, p.Augment) {
					augments = append(augments, p.Augment)
				}
			}
		}
		sort.SliceStable(dr.Points, func(i, j int) bool {
			a, b := dr.Points[i], dr.Points[j]
			ia, ib := slices.Index(augments, a.Augment), slices.Index(augments, b.Augment)
			return ia < ib || ia == ib && a.Magnitude < b.Magnitude
		})
		if doseQualifies(dr.Points) {
			out = append(out, dr)
		}
	}
	return out
}

// doseQualifies says some augment has points at two or more distinct
// magnitudes.
func doseQualifies(pts []DosePoint) bool {
	mags := map[string]map[float64]bool{}
	for _, p := range pts {
		if mags[p.Augment] == nil {
			mags[p.Augment] = map[float64]bool{}
		}
		mags[p.Augment][p.Magnitude] = true
		if len(mags[p.Augment]) >= 2 {
			return true
		}
	}
	return false
}

// DoseCSV renders the dose–response points: one line per dataset ×
// method (role "augmented" or "baseline"), with the number of seeds, the
// mean shift_l2_mean, and the mean score with its interval.
func (r *Report) DoseCSV() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"dataset", "method", "augment", "role", "seeds", "shift_l2_mean", "score", "lo", "hi"})
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	for _, dr := range r.DoseResponse {
		row := func(p DosePoint, role string) {
			_ = w.Write([]string{dr.Dataset, p.Method, p.Augment, role, strconv.Itoa(p.Seeds), f(p.Magnitude), f(p.Score), f(p.Lo), f(p.Hi)})
		}
		for _, p := range dr.Points {
			row(p, "augmented")
		}
		if dr.Baseline != nil {
			row(*dr.Baseline, "baseline")
		}
	}
	w.Flush()
	return b.String()
}

// doseFigures draws one dose–response figure per DoseResponse: named
// dose-response, or dose-response-<dataset> when there are several.
func (r *Report) doseFigures(w, h vg.Length) ([]*figure, error) {
	var figs []*figure
	for _, dr := range r.DoseResponse {
		name := "dose-response"
		if len(r.DoseResponse) > 1 {
			name += "-" + fileName(dr.Dataset)
		}
		f, err := r.doseFigure(name, dr, w, h)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// doseFigure draws dr: score against log magnitude, one line with interval
// bars and band per augment, the baseline as a horizontal line and band.
func (r *Report) doseFigure(name string, dr DoseResponse, w, h vg.Length) (*figure, error) {
	level := fmt.Sprintf("%.0f%%", 100*r.Settings.Level)
	// Plot text is drawn glyph by glyph: a combining tilde (s̃) would
	// land beside its letter, so figures say "shifted s".
	p := newPlot(dr.Dataset, "mean ‖shifted s − s‖₂ over training (shift_l2_mean, log scale)", fmt.Sprintf("score (mean over seeds, %s t-interval)", level))
	// x is log10 of the magnitude on a linear axis with decade ticks:
	// gonum's LogScale sizes the axis label as if it sat at the linear
	// midpoint of the range, which on a log axis squeezed the data area
	// to two thirds of the panel.
	p.X.Tick.Marker = decadeTicks{}
	f := newFigure(name, w, h, p)
	seen := map[string]bool{}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, pt := range dr.Points {
		xlo, xhi = math.Min(xlo, math.Log10(pt.Magnitude)), math.Max(xhi, math.Log10(pt.Magnitude))
	}
	// The x range is widened by 5% of its span each side, at least a
	// factor 1.25 of the magnitude.
	pad := math.Max(math.Log10(1.25), 0.05*(xhi-xlo))
	p.X.Min, p.X.Max = xlo-pad, xhi+pad
	if b := dr.Baseline; b != nil {
		c := color.RGBA{90, 90, 90, 255}
		xs := []float64{p.X.Min, p.X.Max}
		polys, err := bands(xs, []float64{b.Lo, b.Lo}, []float64{b.Hi, b.Hi}, translucent(c))
		if err != nil {
			return nil, err
		}
		for _, poly := range polys {
			p.Add(poly)
		}
		l, err := plotter.NewLine(plotter.XYs{{X: xs[0], Y: b.Score}, {X: xs[1], Y: b.Score}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = c, vg.Points(1.5), []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		f.add(fmt.Sprintf("%s (baseline, %s)", b.Method, plural.Count(b.Seeds, "seed")), seen, l)
	}
	var augments []string
	for _, pt := range dr.Points {
		if !slices.Contains(augments, pt.Augment) {
			augments = append(augments, pt.Augment)
		}
	}
	for i, a := range augments {
		if err := doseLine(p, f, seen, dr.Points, a, palette[i%len(palette)]); err != nil {
			return nil, err
		}
	}
	margin(&p.Y)
	return f, nil
}

// doseLine draws augment a's points of pts on p: a band and a bar per
// point for the intervals, a line through the means, a dot at each.
func doseLine(p *plot.Plot, f *figure, seen map[string]bool, pts []DosePoint, a string, c color.RGBA) error {
	var xs, lo, hi []float64
	var means plotter.XYs
	for _, pt := range pts {
		if pt.Augment == a {
			x := math.Log10(pt.Magnitude)
			xs, lo, hi = append(xs, x), append(lo, pt.Lo), append(hi, pt.Hi)
			means = append(means, plotter.XY{X: x, Y: pt.Score})
		}
	}
	polys, err := bands(xs, lo, hi, translucent(c))
	if err != nil {
		return err
	}
	for _, poly := range polys {
		p.Add(poly)
	}
	for i := range xs {
		if math.IsNaN(lo[i]) || math.IsNaN(hi[i]) {
			continue
		}
		bar, err := plotter.NewLine(plotter.XYs{{X: xs[i], Y: lo[i]}, {X: xs[i], Y: hi[i]}})
		if err != nil {
			return err
		}
		bar.Color, bar.Width = c, vg.Points(0.8)
		p.Add(bar)
	}
	l, err := plotter.NewLine(means)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.5)
	p.Add(l)
	dots, err := plotter.NewScatter(l.XYs)
	if err != nil {
		return err
	}
	dots.Color, dots.GlyphStyle.Shape, dots.GlyphStyle.Radius = c, draw.CircleGlyph{}, vg.Points(2.5)
	p.Add(dots)
	f.add(doseLabel(pts, a), seen, l)
	return nil
}

// magnitudeSuffix is a method name's trailing magnitude, as a sweep names
// the methods of a dose (S4RL-N-2.6e-4, KFC++_3e-3, kfc 0.01).
var magnitudeSuffix = regexp.MustCompile(`[-_ ]\d+(\.\d*)?([eE][-+]?\d+)?$`)

// doseLabel is the legend entry of augment a's line: the name its methods
// share once their magnitude suffixes are cut (e.g. "S4RL-N (gaussian, 3
// magnitudes)"), or the augment alone when they share none.
func doseLabel(pts []DosePoint, a string) string {
	name, n := "", 0
	for _, pt := range pts {
		if pt.Augment != a {
			continue
		}
		base := magnitudeSuffix.ReplaceAllString(pt.Method, "")
		switch {
		case n == 0:
			name = base
		case base != name:
			name = ""
		}
		n++
	}
	if name == "" || name == a {
		return fmt.Sprintf("%s (%s)", a, plural.Count(n, "magnitude"))
	}
	return fmt.Sprintf("%s (%s, %s)", name, a, plural.Count(n, "magnitude"))
}

// decadeTicks marks an axis whose values are log10 of a quantity: a
// labelled tick at every power of ten (labelled with the quantity, e.g.
// 0.001), minor ticks at its multiples 2–9, and when fewer than two powers
// of ten fall in the range, labels at the multiples 2 and 5 as well, so
// that a range within one decade still reads.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	if !(min <= max) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return nil
	}
	const eps = 1e-9 // a tick at an end of the range, up to rounding, is in it
	min, max = min-eps, max+eps
	lo, hi := int(math.Floor(min)), int(math.Ceil(max))
	majors := 0
	for k := lo; k <= hi; k++ {
		if v := float64(k); v >= min && v <= max {
			majors++
		}
	}
	var ts []plot.Tick
	for k := lo; k <= hi; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(k) + math.Log10(float64(m))
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || majors < 2 && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(float64(m)*math.Pow(10, float64(k)), 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}
