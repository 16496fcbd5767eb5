package symcheck

import (
	"context"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/run"
)

// CheckShiftL2 checks a list of --shift-l2 targets: not empty, each finite
// and > 0.
func CheckShiftL2(xs []float64) error {
	if len(xs) == 0 {
		return fmt.Errorf("--shift-l2: no value given")
	}
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("--shift-l2: value %d of %d is %v; each must be a finite number > 0 (a mean ‖s̃_t − s_t‖₂, e.g. 2.6e-4)", i+1, len(xs), x)
		}
	}
	return nil
}

// MeanMedian is the mean and median of one quantity.
type MeanMedian struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
}

// Row is one variant of a Magnitude in brief.
type Row struct {
	Name      string     `json:"name"`
	DeltaS    MeanMedian `json:"delta_s"`
	DeltaEPos MeanMedian `json:"delta_e_pos"`
	DeltaEVel MeanMedian `json:"delta_e_vel"`
	DeltaE    MeanMedian `json:"delta_e"`
	// DeltaEOverData is ΔE / ΔE of the data row (mean over mean, median
	// over median); null when the data row's ΔE is 0.
	DeltaEOverData *MeanMedian `json:"delta_e_over_data"`
	Failures       int         `json:"failures"`
}

// Magnitude is the study at one calibrated KFC++ magnitude.
type Magnitude struct {
	// ShiftL2 is the target mean ‖s̃_t − s_t‖₂ of the kfc++ row and
	// ShiftSigma the calibrated scale (augment.Calibrate on the sample).
	ShiftL2     float64             `json:"shift_l2"`
	ShiftSigma  float64             `json:"shift_sigma"`
	Calibration augment.Calibration `json:"calibration"`
	// MeasuredShiftL2 is the kfc++ row's mean ‖s̃_t − s_t‖₂ over all state
	// dimensions as the study computed it (koopman.Shifter, from the ε
	// draws the calibration measured with; Calibration.Measured is the
	// augmenter's own figure, equal up to float32 rounding).
	MeasuredShiftL2 float64 `json:"shift_l2_measured"`
	Rows            []Row   `json:"rows"`
	Detail          *Result `json:"detail"`
}

// MagnitudesResult is the outcome of Magnitudes.
type MagnitudesResult struct {
	Config      Config         `json:"config"`
	Provenance  run.Provenance `json:"provenance"`
	Model       string         `json:"model,omitempty"`
	Data        string         `json:"data,omitempty"`
	Transitions int            `json:"transitions"`
	Samples     int            `json:"samples"`
	Terminals   int            `json:"terminals_excluded"`
	ObsDim      int            `json:"obs_dim"`
	ActDim      int            `json:"act_dim"`
	Latent      int            `json:"latent"`
	PosDims     []int          `json:"position_dims"`
	VelDims     []int          `json:"velocity_dims"`
	Magnitudes  []Magnitude    `json:"magnitudes"`
}

// Magnitudes runs the study of Run once per target in cfg.ShiftL2 on one
// sample and model: for each it calibrates the KFC++
// scale (shift sigma) with augment.Calibrate so that the mean ‖s̃_t − s_t‖₂
// of the kfc++ augmenter over the sampled transitions equals the target,
// then builds the Run variants at that scale plus s4rl-n
// (s̃ = s + σz with independent z for s_t and s_{t+1}, as the gaussian
// augmenter; σ fitted like the random rows' λ so that its mean ΔS equals
// kfc++'s) and compares kfc++ with it too. Every magnitude uses the same
// ε, z and noise draws, scaled.
func Magnitudes(ctx context.Context, m *koopman.Model, data *dataset.Dataset, cfg Config, progress meter.Progress) (*MagnitudesResult, error) {
	if err := CheckShiftL2(cfg.ShiftL2); err != nil {
		return nil, fmt.Errorf("symcheck: %w", err)
	}
	p, err := prepareSymcheck(m, data, cfg)
	if err != nil {
		return nil, err
	}
	defer p.close()
	k, batch, err := p.calibrator()
	if err != nil {
		return nil, err
	}
	out := &MagnitudesResult{Config: p.cfg, Provenance: run.CurrentProvenance(), Transitions: data.Len(), Samples: p.w.n,
		Terminals: data.Len() - p.cands, ObsDim: p.w.S, ActDim: m.M(), Latent: p.w.N, PosDims: p.pos, VelDims: p.vel}
	for _, x := range cfg.ShiftL2 {
		if progress != nil {
			progress(0, 6, fmt.Sprintf("shift-l2 %.3g: calibrating shift sigma", x))
		}
		_, cal, err := augment.Calibrate(k, batch, x)
		if err != nil {
			return nil, fmt.Errorf("symcheck: kfc++ at --shift-l2 %.3g: %w", x, err)
		}
		var pr meter.Progress
		if progress != nil {
			pr = func(done, total int, msg string) { progress(done, total, fmt.Sprintf("shift-l2 %.3g: %s", x, msg)) }
		}
		r, l2, err := p.study(ctx, cal.Scale, true, pr)
		if err != nil {
			return nil, err
		}
		r.Config.ShiftL2 = []float64{x}
		out.Magnitudes = append(out.Magnitudes, Magnitude{ShiftL2: x, ShiftSigma: cal.Scale, Calibration: cal,
			MeasuredShiftL2: l2, Rows: symRows(r), Detail: r})
	}
	return out, nil
}

// calibrator builds a kfc++ augmenter over the sampled transitions alone
// (a dataset of those n rows, all of them in its precompute cache) and the
// batch of them that augment.Calibrate measures on.
func (p *symPrep) calibrator() (*augment.Koopman, *dataset.Batch, error) {
	w, n, S, M := p.w, p.w.n, p.w.S, p.w.m.M()
	sub := &dataset.Dataset{ObsDim: S, ActDim: M, Observations: make([]float32, n*S), NextObservations: make([]float32, n*S),
		Actions: append([]float32(nil), w.act...), Rewards: make([]float32, n), Terminals: make([]float32, n), Timeouts: make([]float32, n)}
	b := dataset.NewBatch(n, S, M)
	for i, r := range p.idx {
		copy(sub.Observations[i*S:(i+1)*S], w.s[2*i*S:(2*i+1)*S])
		copy(sub.NextObservations[i*S:(i+1)*S], w.s[(2*i+1)*S:(2*i+2)*S])
		sub.Rewards[i] = p.data.Rewards[r]
		b.Idx[i] = i
	}
	copy(b.Obs, sub.Observations)
	copy(b.NextObs, sub.NextObservations)
	copy(b.Act, sub.Actions)
	copy(b.Rew, sub.Rewards)
	opts := augment.DefaultOptions()
	opts.Model, opts.Dataset, opts.Env = w.m, sub, p.cfg.Env
	opts.ShiftSigma, opts.Residual, opts.Symmetry, opts.Workers = p.cfg.ShiftSigma, p.cfg.Residual, p.cfg.Symmetry, p.cfg.Workers
	opts.CacheGiB = 1 << 32 // 2⁶² bytes: the n sampled rows, every one cached
	k, err := augment.NewKoopman("kfc++", opts)
	if err != nil {
		return nil, nil, fmt.Errorf("symcheck: %w", err)
	}
	return k, b, nil
}

// symRows summarizes r's variants, with ΔE relative to the data row's.
func symRows(r *Result) []Row {
	data := r.Variant("data")
	rows := make([]Row, 0, len(r.Variants))
	for _, v := range r.Variants {
		row := Row{Name: v.Name, Failures: v.Failures,
			DeltaS:    MeanMedian{v.DeltaS.Mean, v.DeltaS.Median},
			DeltaEPos: MeanMedian{v.DeltaEPos.Mean, v.DeltaEPos.Median},
			DeltaEVel: MeanMedian{v.DeltaEVel.Mean, v.DeltaEVel.Median},
			DeltaE:    MeanMedian{v.DeltaE.Mean, v.DeltaE.Median}}
		if data != nil && data.DeltaE.Mean > 0 && data.DeltaE.Median > 0 {
			row.DeltaEOverData = &MeanMedian{v.DeltaE.Mean / data.DeltaE.Mean, v.DeltaE.Median / data.DeltaE.Median}
		}
		rows = append(rows, row)
	}
	return rows
}

// MagnitudesTable renders one table per magnitude: per row mean
// and median ΔS, ΔE_pos, ΔE_vel and ΔE, ΔE over the data row's, failures;
// then the fitted scales and the paired comparisons of kfc++.
func MagnitudesTable(r *MagnitudesResult) string {
	var b strings.Builder
	dec := "direct decoding s̃ = D(g̃)"
	if r.Config.Residual {
		dec = "residual decoding s̃ = s + D(g̃) − D(g)"
	}
	fmt.Fprintf(&b, "symcheck %s at calibrated magnitudes: %d of %d transitions (%d terminal ones excluded; seed %d), model S=%d m=%d N=%d, %s\n",
		r.Config.Env, r.Samples, r.Transitions, r.Terminals, r.Config.Seed, r.ObsDim, r.ActDim, r.Latent, dec)
	fmt.Fprintf(&b, "positions = obs%v, velocities = obs%v; norms are Euclidean; ΔS = ‖s̃_t − s_t‖ + ‖s̃_{t+1} − s_{t+1}‖, ΔE = ‖s̃_{t+1} − M(s̃_t, a_t)‖; ratios are over the data row's ΔE\n",
		dimRange(r.PosDims), dimRange(r.VelDims))
	for _, mg := range r.Magnitudes {
		d := mg.Detail
		fmt.Fprintf(&b, "\n== shift-l2 %.3g: shift sigma %.4g (ε std %.3g); kfc++ mean ‖s̃_t − s_t‖₂ %.4g (%+.2f%%; augmenter's %.4g); KFC++ fallbacks %d, max eigenbasis cond %.3g\n",
			mg.ShiftL2, mg.ShiftSigma, d.EpsStd, mg.MeasuredShiftL2, 100*(mg.MeasuredShiftL2/mg.ShiftL2-1), mg.Calibration.Measured, d.Fallbacks, d.MaxCond)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "row\tΔS mean\tΔS median\tΔE_pos mean\tΔE_pos median\tΔE_vel mean\tΔE_vel median\tΔE mean\tΔE median\tΔE/data mean\tΔE/data median\tfailures\t")
		for _, row := range mg.Rows {
			rm, rd := "-", "-"
			if row.DeltaEOverData != nil {
				rm, rd = fmt.Sprintf("%.4g", row.DeltaEOverData.Mean), fmt.Sprintf("%.4g", row.DeltaEOverData.Median)
			}
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%s\t%s\t%d\t\n", row.Name, row.DeltaS.Mean, row.DeltaS.Median,
				row.DeltaEPos.Mean, row.DeltaEPos.Median, row.DeltaEVel.Mean, row.DeltaEVel.Median, row.DeltaE.Mean, row.DeltaE.Median, rm, rd, row.Failures)
		}
		tw.Flush()
		writeSymFits(&b, d)
	}
	return b.String()
}

// writeSymFits writes the fitted λ and σ, the paired comparisons and the
// match warning of r (the part of Table below its table).
func writeSymFits(b *strings.Builder, r *Result) {
	for _, name := range []string{"random-shared", "random-independent"} {
		if v := r.Variant(name); v != nil {
			fmt.Fprintf(b, "%s: λ = %.4g, mean ΔS relative mismatch to kfc++ %.2g\n", name, v.LatentScale, r.MatchRelErr[name])
		}
	}
	if v := r.Variant("s4rl-n"); v != nil {
		fmt.Fprintf(b, "s4rl-n: σ = %.4g, mean ΔS relative mismatch to kfc++ %.2g\n", v.NoiseSigma, r.MatchRelErr["s4rl-n"])
	}
	for _, c := range r.Comparisons {
		if !c.Defined {
			fmt.Fprintf(b, "kfc++ vs %s: no comparison (%d pairs; a mean or median ΔE is 0)\n", c.Against, c.Pairs)
			continue
		}
		fmt.Fprintf(b, "kfc++ vs %s, %d paired transitions (ratio kfc++/%s, 95%% bootstrap CI): mean ΔE %.3f [%.3f, %.3f], median ΔE %.3f [%.3f, %.3f]; kfc++ closer on %.1f%% [%.1f, %.1f] of them\n",
			c.Against, c.Pairs, c.Against, c.MeanRatio.Value, c.MeanRatio.Lo, c.MeanRatio.Hi, c.MedianRatio.Value, c.MedianRatio.Lo, c.MedianRatio.Hi,
			100*c.Closer.Value, 100*c.Closer.Lo, 100*c.Closer.Hi)
	}
	if !r.Matched {
		b.WriteString("WARNING: a random variant's mean ΔS could not be matched to kfc++ within 1e-6 (with direct decoding, the reconstruction error alone may exceed the kfc++ ΔS)\n")
	}
}

// symMagnitudeFile names a per-magnitude file: prefix-l2-<X>.ext.
func symMagnitudeFile(prefix string, x float64, ext string) string {
	return fmt.Sprintf("%s-l2-%g.%s", prefix, x, ext)
}

// WriteMagnitudes writes symcheck.json (r), summary.txt
// (MagnitudesTable) and per magnitude X samples-l2-X.csv and
// symcheck-l2-X.png into dir.
func WriteMagnitudes(r *MagnitudesResult, dir *run.Dir) error {
	if err := dir.WriteJSON(JSONFile, r); err != nil {
		return err
	}
	for _, mg := range r.Magnitudes {
		if err := writeSymSamples(mg.Detail, dir.File(symMagnitudeFile("samples", mg.ShiftL2, "csv"))); err != nil {
			return err
		}
		if err := Plot(mg.Detail, dir.File(symMagnitudeFile("symcheck", mg.ShiftL2, "png"))); err != nil {
			return fmt.Errorf("symcheck plot: %w", err)
		}
	}
	return run.WriteFileAtomic(dir.File(SummaryFile), []byte(MagnitudesTable(r)))
}
