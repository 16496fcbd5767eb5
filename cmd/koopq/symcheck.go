package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/run"
)

func init() {
	var (
		modelPath, data, envName, out string
		cfg                           = run.DefaultSymcheckConfig("")
		epochs, latent                int
		hidden                        []int
		ropts                         dataset.ReadOptions
	)
	cmd := &cobra.Command{
		Use:   "symcheck",
		Short: "ΔS/ΔE study: do KFC++ symmetry shifts stay on the simulator's dynamics better than random latent shifts?",
		Long: `symcheck reproduces the paper's appendix study "Local precision symmetry shifts
Mujoco". For --n transitions sampled from --data it builds shifted pairs
(s̃_t, s̃_{t+1}):

  data                s̃ = s (checks that --env reproduces the dataset)
  reconstruction      s̃ = D(E(s)) (the autoencoder's error alone)
  kfc++               s̃ = D((1 + σ_a(ε)) E(s)), as the kfc++ augmenter shifts
                      (ε ~ N(0, (shift-sigma·3e-3)²) per eigendirection, the
                      same ε for s_t and s_{t+1})
  random-shared       s̃ = D(E(s) + λz), one z ~ N(0, I) for s_t and s_{t+1}
  random-independent  independent z for s_t and s_{t+1}

where λ is fitted so that the mean ΔS = ‖s̃_t − s_t‖ + ‖s̃_{t+1} − s_{t+1}‖
equals the kfc++ one. It sets the simulator to s̃_t (MuJoCo: x = 0, the
dynamics do not depend on it; pendulum: θ = atan2(sin, cos)), steps with a_t
and measures ΔE = ‖s̃_{t+1} − M(s̃_t, a_t)‖ split into positions and
velocities. Writes summary.txt (the table, also printed), symcheck.json
(numbers, config, provenance), samples.csv and symcheck.png (histograms like
the paper's figure) into --out.

With --shift-l2 X[,Y…] the kfc++ shift scale is calibrated per value (as
koopq train --shift-l2 calibrates the augmenter; --shift-sigma is only the
starting point) so that the mean ‖s̃_t − s_t‖₂ of kfc++ over the sample
equals it, and one more row is built:

  s4rl-n              s̃ = s + σz, independent z ~ N(0, I) for s_t and s_{t+1}
                      (the gaussian augmenter), σ fitted like λ

Model and sample are shared; every value gets its table (with ΔE over the
data row's ΔE) in summary.txt and its numbers in symcheck.json
("magnitudes"), plus samples-l2-X.csv and symcheck-l2-X.png.

Without --model a small Koopman model is trained on the dataset first
(--train-epochs, --train-hidden, --train-latent) and saved as
koopman.safetensors in --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if data == "" {
				return fmt.Errorf("--data is required")
			}
			if cmd.Flags().Changed("shift-l2") {
				if err := run.CheckShiftL2(cfg.ShiftL2); err != nil {
					return err
				}
			}
			for _, c := range []error{needPositive("n", cfg.N), needPositiveFloat("shift-sigma", cfg.ShiftSigma),
				needPositiveFloat("max-cond", cfg.Symmetry.MaxCond), needPositive("train-epochs", epochs),
				needPositive("train-latent", latent), needWidths("train-hidden", hidden), needReadOptions(ropts)} {
				if c != nil {
					return c
				}
			}
			if out != "" {
				if err := needOutDir("out", out); err != nil {
					return err
				}
			}
			var m *koopman.Model
			if modelPath != "" {
				if m, _, err = koopman.LoadModel(modelPath); err != nil {
					return fmt.Errorf("--model: %w", err)
				}
			}
			d, err := readTransitions(data, ropts)
			if err != nil {
				return err
			}
			if envName == "" {
				envName = d.Meta["env"]
				if envName == "" {
					return fmt.Errorf("--env is required (the dataset names no env)")
				}
			}
			cfg.Env = envName
			e, err := env.Make(envName)
			if err != nil {
				return fmt.Errorf("--env: %w", err)
			}
			if _, _, err := run.SymcheckDims(envName, d.ObsDim); err != nil {
				return err
			}
			if ad := e.ActionSpace().Dim(); ad != d.ActDim {
				return fmt.Errorf("--env %s takes %d-dimensional actions, dataset %s has %d", envName, ad, data, d.ActDim)
			}
			if m != nil && (m.S() != d.ObsDim || m.M() != d.ActDim) {
				return fmt.Errorf("--model %s is for states %d / actions %d, dataset %s has %d / %d", modelPath, m.S(), m.M(), data, d.ObsDim, d.ActDim)
			}
			if out == "" {
				out = "symcheck-" + envName
				if err := needOutDir("out", out); err != nil {
					return err
				}
			}
			if _, statErr := os.Stat(out); os.IsNotExist(statErr) {
				// Made here: a failure below removes it again.
				defer func() {
					if err != nil {
						os.RemoveAll(out)
					}
				}()
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			dir := &run.Dir{Path: out}
			w := cmd.OutOrStdout()
			modelDesc := modelPath
			if m == nil {
				tc := koopman.DefaultTrainConfig()
				tc.MaxEpochs, tc.Seed = epochs, cfg.Seed
				fmt.Fprintf(w, "no --model given: training a small Koopman model (hidden %v, N=%d, ≤%d epochs) on %d transitions first\n",
					hidden, latent, epochs, d.Len())
				b := newBar(epochs, "koopman")
				m, err = run.TrainKoopman(cmd.Context(), d, tc, hidden, latent, "", func(done, _ int, msg string) { b.set(done, msg) })
				b.finish()
				if err != nil {
					return err
				}
				modelDesc = filepath.Join(out, "koopman.safetensors")
				if err := m.Save(modelDesc, map[string]string{"env": envName, "data": data, "made_by": "koopq symcheck"}); err != nil {
					return err
				}
				fmt.Fprintf(w, "trained model saved to %s\n", modelDesc)
			}
			if len(cfg.ShiftL2) > 0 {
				b := newBar(6, "symcheck")
				res, err := run.SymcheckMagnitudes(cmd.Context(), m, d, cfg, func(done, _ int, msg string) { b.set(done, msg) })
				b.finish()
				if err != nil {
					return err
				}
				res.Model, res.Data = modelDesc, data
				if err := run.WriteSymcheckMagnitudes(res, dir); err != nil {
					return err
				}
				fmt.Fprint(w, run.SymcheckMagnitudesTable(res))
				fmt.Fprintf(w, "wrote %s, %s and per magnitude samples-l2-X.csv, symcheck-l2-X.png in %s\n", dir.File(run.SymcheckSummary),
					dir.File(run.SymcheckJSON), out)
				return nil
			}
			b := newBar(5, "symcheck")
			res, err := run.Symcheck(cmd.Context(), m, d, cfg, func(done, _ int, msg string) { b.set(done, msg) })
			b.finish()
			if err != nil {
				return err
			}
			res.Model, res.Data = modelDesc, data
			if err := run.WriteSymcheck(res, dir); err != nil {
				return err
			}
			fmt.Fprint(w, run.SymcheckTable(res))
			fmt.Fprintf(w, "wrote %s, %s, %s, %s\n", dir.File(run.SymcheckSummary), dir.File(run.SymcheckJSON),
				dir.File(run.SymcheckCSV), dir.File(run.SymcheckPNG))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&modelPath, "model", "", "trained Koopman model (koopq koopman train); omitted: train a small one first")
	f.StringVar(&data, "data", "", "dataset: D4RL-layout HDF5 file or Minari dataset (required)")
	f.StringVar(&envName, "env", "", "simulator the data came from: hopper, walker2d, halfcheetah, ant, pendulum (default: the dataset's env metadata)")
	f.StringVar(&out, "out", "", "output directory (default symcheck-ENV)")
	f.IntVar(&cfg.N, "n", cfg.N, "transitions sampled")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed for the sample, ε and the random shifts (and the model, when trained here)")
	f.Float64Var(&cfg.ShiftSigma, "shift-sigma", cfg.ShiftSigma, "KFC++ shift scale: ε ~ N(0, (shift-sigma·3e-3)²) per eigendirection (as the kfc++ augmenter)")
	f.Float64SliceVar(&cfg.ShiftL2, "shift-l2", nil, "calibrate shift-sigma so that the kfc++ mean ‖s̃_t − s_t‖₂ over the sample equals each value (e.g. 2.6e-4,1e-3,1e-2): one table per value, with an s4rl-n row")
	f.BoolVar(&cfg.Residual, "residual", false, "decode shifts as s + D(g̃) − D(g) (the augmenter's --residual) instead of D(g̃)")
	f.Float64Var(&cfg.Symmetry.MaxCond, "max-cond", cfg.Symmetry.MaxCond, "eigenbasis condition number above which the scalar fallback generator is used")
	f.IntVar(&epochs, "train-epochs", 30, "without --model: maximum Koopman training epochs")
	f.IntSliceVar(&hidden, "train-hidden", []int{256, 256}, "without --model: hidden layer widths of encoder and decoder, e.g. 256,256")
	f.IntVar(&latent, "train-latent", 32, "without --model: latent dimension N")
	addReadFlags(cmd, &ropts)
	rootCmd.AddCommand(cmd)
}
