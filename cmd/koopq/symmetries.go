package main

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/env/classic"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/koopman"
)

// newSymmetriesCmd makes 'koopq symmetries' and its subcommand cartpole.
func newSymmetriesCmd() *cobra.Command {
	cmd := groupCommand("symmetries", "Derive Koopman symmetry generators for worked examples")
	cmd.AddCommand(newSymmetriesCartPoleCmd())
	return cmd
}

// symmetriesCartPoleOptions holds the flag values of 'koopq symmetries
// cartpole'.
type symmetriesCartPoleOptions struct {
	seed            uint64
	episodes, steps int
	truncate, eps   float64
	out             string
}

// newSymmetriesCartPoleCmd makes 'koopq symmetries cartpole'.
func newSymmetriesCartPoleCmd() *cobra.Command {
	o := &symmetriesCartPoleOptions{}
	cmd := &cobra.Command{
		Use:   "cartpole",
		Short: "CartPole translation symmetry (paper Sec. 3.4 and appendix)",
		Long: `Collects expert trajectories with the paper's policy family
Θ(0.015x + 0.066ẋ + 1.8θ + 0.32θ̇ + z), z ~ U(−0.2, 0.2) per episode, fits the
Koopman operator K(a) for a = −1, +1 with the trivial embedding g = s by least
squares, sets entries below --truncate to zero as the paper does, derives the
translation generator σ0 (the spectral projector of K's eigenvalue-1 mode,
normalized to σ0[0,0] = −1) and prints both next to the paper's published
matrices. It then checks shifted transitions (1 + εσ0)(s_t, s_{t+1}) against
the true physics and compares with random shifts of the same size.

The paper labels its matrices "a = 0" and "a = 1" (Gym actions); they are
shown next to physical a = −1 and a = +1 respectively.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout())
		},
	}
	symmetriesCartPoleParams().MustRegister(cmd.Flags(), o, defaultSymmetriesCartPoleOptions())
	return cmd
}

// defaultSymmetriesCartPoleOptions is the flag defaults (the paper's 100 × 1000 steps).
func defaultSymmetriesCartPoleOptions() symmetriesCartPoleOptions {
	return symmetriesCartPoleOptions{episodes: 100, steps: 1000, truncate: 1e-3, eps: 0.05}
}

// symmetriesCartPoleParams is the table of 'koopq symmetries cartpole'
// settings.
func symmetriesCartPoleParams() param.Table[symmetriesCartPoleOptions] {
	type o = symmetriesCartPoleOptions
	return param.Table[o]{
		param.New("seed", "", "seed for initial states and policy offsets z", func(o *o) any { return &o.seed }, param.AnyValue),
		param.New("episodes", "", "number of trajectories (paper: 100)", func(o *o) any { return &o.episodes }, param.Positive),
		param.New("steps", "", "steps per trajectory (paper: 1000)", func(o *o) any { return &o.steps }, param.Positive),
		param.New("truncate", "", "zero fitted entries with |K_ij| below this before deriving σ0 (paper: O(1e-4) entries set to zero; 0 disables)", func(o *o) any { return &o.truncate }, param.NonNegative),
		param.New("eps", "", "symmetry shift scale ε for the physics check", func(o *o) any { return &o.eps }, param.Positive),
		param.New("out", "", "also write the results as JSON to this file", func(o *o) any { return &o.out }, param.AnyValue),
	}
}

// validate checks the flags and the output file.
func (o *symmetriesCartPoleOptions) validate() error {
	if err := symmetriesCartPoleParams().Validate(o); err != nil {
		return err
	}
	if o.out != "" {
		return needOutFile("out", o.out)
	}
	return nil
}

// run derives the symmetry and prints it on w.
func (o *symmetriesCartPoleOptions) run(w io.Writer) error {
	cfg := koopman.DefaultCartPoleDataConfig()
	cfg.Seed, cfg.Episodes, cfg.Steps = o.seed, o.episodes, o.steps
	return runCartPoleSymmetries(w, cfg, o.truncate, o.eps, o.out)
}

type cartPoleSymResult struct {
	Config      koopman.CartPoleDataConfig     `json:"config"`
	Truncate    float64                        `json:"truncate"`
	Actions     [2]float64                     `json:"actions"`
	Count       [2]int                         `json:"count"`
	RMS         [2][4]float64                  `json:"rms_residual"`
	KFit        [2][]float64                   `json:"k_fit"`
	KTruncated  [2][]float64                   `json:"k_truncated"`
	KPaper      [2][]float64                   `json:"k_paper"`
	Sigma0      [2][]float64                   `json:"sigma0"`
	Lambda      [2]float64                     `json:"lambda"`
	AlignRaw    [2]float64                     `json:"alignment_untruncated"`
	CommResid   [2]float64                     `json:"commutator_residual"`
	PaperC      [2][3]float64                  `json:"paper_c"`
	PaperSigmaC [2][3]float64                  `json:"paper_sigma0_from_paper_k"`
	Check       koopman.CartPoleSymmetryReport `json:"check"`
}

func runCartPoleSymmetries(w io.Writer, cfg koopman.CartPoleDataConfig, truncate, eps float64, out string) error {
	d, err := koopman.CollectCartPole(classic.CartPoleDynamics, cfg)
	if err != nil {
		return err
	}
	fit, err := koopman.FitCartPoleKoopman(d)
	if err != nil {
		return err
	}
	res := cartPoleSymResult{Config: cfg, Truncate: truncate, Actions: fit.Actions, Count: fit.Count, RMS: fit.RMS}
	fmt.Fprintf(w, "CartPole translation symmetry: %d episodes × %d steps (seed %d), g = s = (x, ẋ, θ, θ̇), no bias term\n\n",
		cfg.Episodes, cfg.Steps, cfg.Seed)
	ft := *fit
	var sigmas [2][]float64
	for ai, a := range fit.Actions {
		kt := fit.K[ai]
		if truncate > 0 {
			kt = koopman.TruncateSmall(kt, truncate)
		}
		ft.K[ai] = kt
		sigma, lambda, align, err := koopman.TranslationGenerator(kt, 4, 0)
		if err != nil {
			return fmt.Errorf("a=%+g: %w", a, err)
		}
		_, _, rawAlign, err := koopman.TranslationGenerator(fit.K[ai], 4, 0)
		if err != nil {
			return fmt.Errorf("a=%+g (untruncated): %w", a, err)
		}
		paperK := koopman.PaperCartPoleK(ai)
		paperSigma, _, _, err := koopman.TranslationGenerator(paperK, 4, 0)
		if err != nil {
			return err
		}
		sigmas[ai] = sigma
		res.KFit[ai], res.KTruncated[ai], res.KPaper[ai], res.Sigma0[ai] = fit.K[ai], kt, paperK, sigma
		res.Lambda[ai], res.AlignRaw[ai] = real(lambda), rawAlign
		res.CommResid[ai] = koopman.CommutatorResidual(sigma, kt, 4)
		res.PaperC[ai] = koopman.PaperCartPoleC(ai)
		copy(res.PaperSigmaC[ai][:], paperSigma[1:4])

		fmt.Fprintf(w, "── physical a = %+g (Gym action %d, force %+g N), %d transitions, RMS residual (x, ẋ, θ, θ̇) = %.2e %.2e %.2e %.2e\n",
			a, ai, a*cfg.ForceMag, fit.Count[ai], fit.RMS[ai][0], fit.RMS[ai][1], fit.RMS[ai][2], fit.RMS[ai][3])
		printSideBySide(w, []string{"K(a) least squares", fmt.Sprintf("truncated |K_ij| < %g", truncate), fmt.Sprintf("paper K(a=%d)", ai)},
			[][]float64{fit.K[ai], kt, paperK}, "%9.5f")
		fmt.Fprintf(w, "translation mode: λ = %.12g, |u_x| = %.6f (untruncated fit: %.4f)\n", real(lambda), align, rawAlign)
		printSideBySide(w, []string{"σ0 derived (commutes with truncated K)", "paper σ0"},
			[][]float64{sigma, paperSigmaFromC(res.PaperC[ai])}, "%9.4f")
		fmt.Fprintf(w, "c = (%.4g, %.4g, %.4g)   paper c = (%.6g, %.6g, %.6g)   σ0 from the paper's own K: (%.6g, %.6g, %.6g)\n",
			sigma[1], sigma[2], sigma[3], res.PaperC[ai][0], res.PaperC[ai][1], res.PaperC[ai][2],
			paperSigma[1], paperSigma[2], paperSigma[3])
		fmt.Fprintf(w, "‖[σ0, K]‖/(‖σ0‖‖K‖) = %.2e\n\n", res.CommResid[ai])
	}
	rep := koopman.CheckCartPoleSymmetry(classic.CartPoleDynamics, cfg.ForceMag, d, sigmas, &ft, eps, 1, rand.New(rand.NewPCG(cfg.Seed, 1)))
	res.Check = rep
	fmt.Fprintf(w, "physics check over %d transitions, ε = %g (random shift: same norm, same δ on s_t and s_{t+1}):\n", rep.Transitions, eps)
	fmt.Fprintf(w, "  mean |s̃_t − s_t|                 %.4e\n", rep.MeanShift)
	fmt.Fprintf(w, "  mean ΔE = |M(s̃_t,a) − s̃_{t+1}|   symmetry %.4e   random %.4e   (ratio %.3f)\n", rep.MeanErrSym, rep.MeanErrRand, rep.MeanErrSym/rep.MeanErrRand)
	fmt.Fprintf(w, "  same, ẋ/θ/θ̇ only                 symmetry %.4e   random %.4e\n", rep.MeanErrSymRest, rep.MeanErrRandRest)
	fmt.Fprintf(w, "  linear-model bound on ΔE_sym      mean %.4e, max excess %.2e (≤ 0: every shifted transition within the model error)\n", rep.MeanErrBound, rep.MaxExcess)
	if out != "" {
		if err := writeJSONFile(out, res); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", out)
	}
	return nil
}

func paperSigmaFromC(c [3]float64) []float64 {
	s := make([]float64, 16)
	s[0], s[1], s[2], s[3] = -1, c[0], c[1], c[2]
	return s
}

// printSideBySide prints 4×4 row-major matrices next to each other under titles.
func printSideBySide(w io.Writer, titles []string, ms [][]float64, format string) {
	const width = 4*10 + 4
	for _, t := range titles {
		fmt.Fprintf(w, "  %-*s", width, t)
	}
	fmt.Fprintln(w)
	for i := range 4 {
		for _, m := range ms {
			line := ""
			for j := range 4 {
				line += fmt.Sprintf(" "+format, m[i*4+j])
			}
			fmt.Fprintf(w, "  %-*s", width, line)
		}
		fmt.Fprintln(w)
	}
}
