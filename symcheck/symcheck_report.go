package symcheck

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/koopq/koopq/internal/palette"
	"github.com/koopq/koopq/run"
)

// Files Write writes into its directory.
const (
	JSONFile    = "symcheck.json"
	CSVFile     = "samples.csv"
	PNGFile     = "symcheck.png"
	SummaryFile = "summary.txt"
)

// Table renders the result as a text table: per variant mean ΔS,
// mean and median ΔE_pos, ΔE_vel and ΔE, and simulator failures.
func Table(r *Result) string {
	var b strings.Builder
	dec := "direct decoding s̃ = D(g̃)"
	if r.Config.Residual {
		dec = "residual decoding s̃ = s + D(g̃) − D(g)"
	}
	fmt.Fprintf(&b, "symcheck %s: %d of %d transitions (%d terminal ones excluded; seed %d), model S=%d m=%d N=%d, ε std %.3g (shift sigma %g), %s\n",
		r.Config.Env, r.Samples, r.Transitions, r.Terminals, r.Config.Seed, r.ObsDim, r.ActDim, r.Latent, r.EpsStd, r.Config.ShiftSigma, dec)
	fmt.Fprintf(&b, "positions = obs%v, velocities = obs%v; norms are Euclidean; KFC++ fallbacks %d, max eigenbasis cond %.3g\n",
		dimRange(r.PosDims), dimRange(r.VelDims), r.Fallbacks, r.MaxCond)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\t‖Δg_t‖ mean\tΔS mean\tΔE_pos mean\tΔE_pos median\tΔE_vel mean\tΔE_vel median\tΔE mean\tfailures\t")
	for _, v := range r.Variants {
		fmt.Fprintf(tw, "%s\t%.3g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%d\t\n", v.Name, v.LatentShift.Mean, v.DeltaS.Mean,
			v.DeltaEPos.Mean, v.DeltaEPos.Median, v.DeltaEVel.Mean, v.DeltaEVel.Median, v.DeltaE.Mean, v.Failures)
	}
	tw.Flush()
	writeSymFits(&b, r)
	return b.String()
}

func dimRange(d []int) string {
	if len(d) == 0 {
		return "[]"
	}
	return fmt.Sprintf("[%d:%d]", d[0], d[len(d)-1]+1)
}

// Write writes the result into dir: symcheck.json (numbers, config,
// provenance), samples.csv (per-sample ΔS, ΔE_pos, ΔE_vel of every
// variant), symcheck.png (histograms) and summary.txt (Table).
func Write(r *Result, dir *run.Dir) error {
	if err := dir.WriteJSON(JSONFile, r); err != nil {
		return err
	}
	if err := writeSymSamples(r, dir.File(CSVFile)); err != nil {
		return err
	}
	if err := Plot(r, dir.File(PNGFile)); err != nil {
		return fmt.Errorf("symcheck plot: %w", err)
	}
	return run.WriteFileAtomic(dir.File(SummaryFile), []byte(Table(r)))
}

// writeSymSamples writes the per-sample ΔS, ΔE_pos, ΔE_vel of every
// variant of r as CSV to path.
func writeSymSamples(r *Result, path string) error {
	var csv bytes.Buffer
	csv.WriteString("sample")
	for _, v := range r.Variants {
		fmt.Fprintf(&csv, ",%s_delta_s,%s_delta_e_pos,%s_delta_e_vel", v.Name, v.Name, v.Name)
	}
	csv.WriteString("\n")
	for i := 0; i < r.Samples; i++ {
		fmt.Fprint(&csv, i)
		for _, v := range r.Variants {
			fmt.Fprintf(&csv, ",%g,%g,%g", v.SampleDS[i], v.SampleEPos[i], v.SampleEVel[i])
		}
		csv.WriteString("\n")
	}
	return run.WriteFileAtomic(path, csv.Bytes())
}

// Plot draws the paper's figure: one row per random variant (shared,
// independent latent draw), panels for log10 ΔE_pos, log10 ΔE_vel and
// log10 ΔS, each overlaying the KFC++ symmetry shift, the random shift and
// (for ΔE) the unshifted reconstruction baseline as histograms (fraction of
// samples per bin).
func Plot(r *Result, path string) error {
	sym, recon := r.Variant("kfc++"), r.Variant("reconstruction")
	if sym == nil || recon == nil {
		return fmt.Errorf("result has no kfc++ or reconstruction variant")
	}
	rows := []string{"random-shared", "random-independent"}
	rowTitle := map[string]string{"random-shared": "shared random draw", "random-independent": "independent random draws"}
	colors := []color.RGBA{palette.Colors[0], palette.Colors[1], palette.Colors[7]}
	plots := make([][]*plot.Plot, len(rows))
	for ri, name := range rows {
		rnd := r.Variant(name)
		if rnd == nil {
			return fmt.Errorf("result has no %s variant", name)
		}
		panels := []struct {
			title  string
			series [][]float64
			labels []string
		}{
			{"ΔE position", [][]float64{sym.SampleEPos, rnd.SampleEPos, recon.SampleEPos}, []string{"KFC++ symmetry", "random latent", "no shift D(E(s))"}},
			{"ΔE velocity", [][]float64{sym.SampleEVel, rnd.SampleEVel, recon.SampleEVel}, []string{"KFC++ symmetry", "random latent", "no shift D(E(s))"}},
			{"ΔS", [][]float64{sym.SampleDS, rnd.SampleDS}, []string{"KFC++ symmetry", "random latent"}},
		}
		for _, pn := range panels {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s %s: %s", r.Config.Env, pn.title, rowTitle[name])
			p.X.Label.Text = "log10 " + pn.title
			p.Y.Label.Text = "fraction of samples"
			p.Add(plotter.NewGrid())
			edges := logBins(pn.series, 40)
			for si, s := range pn.series {
				if edges == nil {
					break
				}
				l, err := histLine(s, edges)
				if err != nil {
					return err
				}
				c := colors[si]
				l.Color = c
				l.Width = vg.Points(1.2)
				if si < 2 {
					l.FillColor = color.NRGBA{c.R, c.G, c.B, 70}
				} else {
					l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				}
				p.Add(l)
				p.Legend.Add(pn.labels[si], l)
			}
			p.Legend.Top = true
			p.Legend.Left = true
			p.Legend.TextStyle.Font.Size = vg.Points(8)
			plots[ri] = append(plots[ri], p)
		}
	}
	const w, h = 4.5 * vg.Inch, 3.2 * vg.Inch
	cols := len(plots[0])
	img := vgimg.New(w*vg.Length(cols), h*vg.Length(len(rows)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			p.Draw(canvases[i][j])
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return run.WriteFileAtomic(path, buf.Bytes())
}

// logBins returns nb+1 equal-width edges in log10 spanning the positive
// finite values of all series (nil when there are none).
func logBins(series [][]float64, nb int) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s {
			if v > 0 && !math.IsInf(v, 0) {
				l := math.Log10(v)
				lo, hi = math.Min(lo, l), math.Max(hi, l)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return nil
	}
	if hi-lo < 1e-6 {
		lo, hi = lo-0.5, hi+0.5
	}
	e := make([]float64, nb+1)
	for i := range e {
		e[i] = lo + (hi-lo)*float64(i)/float64(nb)
	}
	return e
}

// histLine is a step line of the fraction of s's values per log10 bin
// (values ≤ 0 go to the first bin; NaN and ±Inf are skipped).
func histLine(s []float64, edges []float64) (*plotter.Line, error) {
	nb := len(edges) - 1
	counts := make([]float64, nb)
	tot := 0
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		tot++
		b := 0
		if v > 0 {
			b = int((math.Log10(v) - edges[0]) / (edges[nb] - edges[0]) * float64(nb))
		}
		counts[max(0, min(b, nb-1))]++
	}
	pts := make(plotter.XYs, 0, nb+1)
	for i := 0; i <= nb; i++ {
		c := counts[min(i, nb-1)]
		if tot > 0 {
			c /= float64(tot)
		}
		pts = append(pts, plotter.XY{X: edges[i], Y: c})
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	return l, nil
}
