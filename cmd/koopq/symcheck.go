package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/symcheck"
)

// symcheckOptions holds the flag values of 'koopq symcheck'.
type symcheckOptions struct {
	modelPath, data, envName, out string
	cfg                           symcheck.Config
	epochs, latent                int
	hidden                        []int
	ropts                         dataset.ReadOptions

	flags *pflag.FlagSet // the command's flags, to tell which were given
}

// newSymcheckCmd makes 'koopq symcheck'.
func newSymcheckCmd() *cobra.Command {
	o := new(symcheckOptions)
	*o = defaultSymcheckOptions()
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	o.flags = cmd.Flags()
	symcheckParams().MustRegister(cmd.Flags(), o, defaultSymcheckOptions())
	return cmd
}

// defaultSymcheckOptions is the flag defaults: symcheck.DefaultConfig and
// a small Koopman model (2×256, N = 32, 30 epochs) when none is given.
func defaultSymcheckOptions() symcheckOptions {
	return symcheckOptions{cfg: symcheck.DefaultConfig(""), epochs: 30, latent: 32, hidden: []int{256, 256}}
}

// symcheckParams is the table of 'koopq symcheck' settings. --shift-l2's
// values are checked by symcheck.CheckShiftL2, --train-hidden's emptiness
// and --out by code in validate.
func symcheckParams() param.Table[symcheckOptions] {
	type o = symcheckOptions
	t := param.Table[o]{
		param.New("model", "", "trained Koopman model (koopq koopman train); omitted: train a small one first", func(o *o) any { return &o.modelPath }, param.AnyValue),
		param.New("data", "", "dataset: D4RL-layout HDF5 file or Minari dataset (required)", func(o *o) any { return &o.data }, param.AnyValue),
		param.New("env", "", "simulator the data came from: hopper, walker2d, halfcheetah, ant, pendulum (default: the dataset's env metadata)", func(o *o) any { return &o.envName }, param.AnyValue),
		param.New("out", "", "output directory (default symcheck-ENV)", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("n", "", "transitions sampled", func(o *o) any { return &o.cfg.N }, param.Positive),
		param.New("seed", "", "seed for the sample, ε and the random shifts (and the model, when trained here)", func(o *o) any { return &o.cfg.Seed }, param.AnyValue),
		param.New("shift-sigma", "", "KFC++ shift scale: ε ~ N(0, (shift-sigma·3e-3)²) per eigendirection (as the kfc++ augmenter)", func(o *o) any { return &o.cfg.ShiftSigma }, param.Positive),
		param.New("shift-l2", "", "calibrate shift-sigma so that the kfc++ mean ‖s̃_t − s_t‖₂ over the sample equals each value (e.g. 2.6e-4,1e-3,1e-2): one table per value, with an s4rl-n row", func(o *o) any { return &o.cfg.ShiftL2 }, param.AnyValue),
		param.New("residual", "", "decode shifts as s + D(g̃) − D(g) (the augmenter's --residual) instead of D(g̃)", func(o *o) any { return &o.cfg.Residual }, param.AnyValue),
		param.New("max-cond", "", "eigenbasis condition number above which the scalar fallback generator is used", func(o *o) any { return &o.cfg.Symmetry.MaxCond }, param.Positive),
		param.New("train-epochs", "", "without --model: maximum Koopman training epochs", func(o *o) any { return &o.epochs }, param.Positive),
		param.New("train-hidden", "", "without --model: hidden layer widths of encoder and decoder, e.g. 256,256", func(o *o) any { return &o.hidden }, param.Positive),
		param.New("train-latent", "", "without --model: latent dimension N", func(o *o) any { return &o.latent }, param.Positive),
	}
	return append(t, readParams(func(o *o) *dataset.ReadOptions { return &o.ropts })...)
}

// validate checks the flags before the model and data are read.
func (o *symcheckOptions) validate() error {
	if o.data == "" {
		return fmt.Errorf("--data is required")
	}
	if o.flags.Changed("shift-l2") {
		if err := symcheck.CheckShiftL2(o.cfg.ShiftL2); err != nil {
			return err
		}
	}
	if err := firstErr(needWidths("train-hidden", o.hidden), symcheckParams().Validate(o)); err != nil {
		return err
	}
	if o.out != "" {
		return needOutDir("out", o.out)
	}
	return nil
}

// load reads --model (nil without it) and the dataset, settles --env and
// --out, and checks that model, data and env fit together.
func (o *symcheckOptions) load() (*koopman.Model, *dataset.Dataset, error) {
	var m *koopman.Model
	if o.modelPath != "" {
		var err error
		if m, _, err = koopman.LoadModel(o.modelPath); err != nil {
			return nil, nil, fmt.Errorf("--model: %w", err)
		}
	}
	d, err := run.ReadDataset(o.data, o.ropts)
	if err != nil {
		return nil, nil, err
	}
	if o.envName == "" {
		o.envName = d.Meta["env"]
		if o.envName == "" {
			return nil, nil, fmt.Errorf("--env is required (the dataset names no env)")
		}
	}
	o.cfg.Env = o.envName
	e, err := env.Make(o.envName)
	if err != nil {
		return nil, nil, fmt.Errorf("--env: %w", err)
	}
	if _, _, err := symcheck.Dims(o.envName, d.ObsDim); err != nil {
		return nil, nil, err
	}
	if ad := e.ActionSpace().Dim(); ad != d.ActDim {
		return nil, nil, fmt.Errorf("--env %s takes %d-dimensional actions, dataset %s has %d", o.envName, ad, o.data, d.ActDim)
	}
	if m != nil && (m.S() != d.ObsDim || m.M() != d.ActDim) {
		return nil, nil, fmt.Errorf("--model %s is for states %d / actions %d, dataset %s has %d / %d", o.modelPath, m.S(), m.M(), o.data, d.ObsDim, d.ActDim)
	}
	if o.out == "" {
		o.out = "symcheck-" + o.envName
		if err := needOutDir("out", o.out); err != nil {
			return nil, nil, err
		}
	}
	return m, d, nil
}

// run does the study and writes its files into --out, which it removes
// again on failure if it made it; validate has passed.
func (o *symcheckOptions) run(ctx context.Context, w io.Writer) (err error) {
	m, d, err := o.load()
	if err != nil {
		return err
	}
	out := o.out
	if _, statErr := os.Stat(out); os.IsNotExist(statErr) {
		// Made here: a failure below removes it again.
		defer func() {
			if err != nil && os.RemoveAll(out) == nil {
				err = fmt.Errorf("%w (--out %s, which this command made, was removed with everything in it, a trained model included)", err, out)
			}
		}()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	modelDesc := o.modelPath
	if m == nil {
		if m, modelDesc, err = o.trainModel(ctx, w, d); err != nil {
			return err
		}
	}
	dir := &run.Dir{Path: out}
	if len(o.cfg.ShiftL2) > 0 {
		b := newBar(6, "symcheck")
		res, err := symcheck.Magnitudes(ctx, m, d, o.cfg, func(done, _ int, msg string) { b.set(done, msg) })
		b.finish()
		if err != nil {
			return err
		}
		res.Model, res.Data = modelDesc, o.data
		if err := symcheck.WriteMagnitudes(res, dir); err != nil {
			return err
		}
		fmt.Fprint(w, symcheck.MagnitudesTable(res))
		fmt.Fprintf(w, "wrote %s, %s and per magnitude samples-l2-X.csv, symcheck-l2-X.png in %s\n", dir.File(symcheck.SummaryFile),
			dir.File(symcheck.JSONFile), out)
		return nil
	}
	b := newBar(5, "symcheck")
	res, err := symcheck.Run(ctx, m, d, o.cfg, func(done, _ int, msg string) { b.set(done, msg) })
	b.finish()
	if err != nil {
		return err
	}
	res.Model, res.Data = modelDesc, o.data
	if err := symcheck.Write(res, dir); err != nil {
		return err
	}
	fmt.Fprint(w, symcheck.Table(res))
	fmt.Fprintf(w, "wrote %s, %s, %s, %s\n", dir.File(symcheck.SummaryFile), dir.File(symcheck.JSONFile),
		dir.File(symcheck.CSVFile), dir.File(symcheck.PNGFile))
	return nil
}

// trainModel trains the small Koopman model used without --model and
// saves it as koopman.safetensors in --out; it returns the model and that
// path.
func (o *symcheckOptions) trainModel(ctx context.Context, w io.Writer, d *dataset.Dataset) (*koopman.Model, string, error) {
	tc := koopman.DefaultTrainConfig()
	tc.MaxEpochs, tc.Seed = o.epochs, o.cfg.Seed
	fmt.Fprintf(w, "no --model given: training a small Koopman model (hidden %v, N=%d, ≤%d epochs) on %d transitions first\n",
		o.hidden, o.latent, o.epochs, d.Len())
	b := newBar(o.epochs, "koopman")
	m, err := run.TrainKoopman(ctx, d, tc, o.hidden, o.latent, "", func(done, _ int, msg string) { b.set(done, msg) })
	b.finish()
	if err != nil {
		return nil, "", err
	}
	p := filepath.Join(o.out, "koopman.safetensors")
	if err := m.Save(p, map[string]string{"env": o.envName, "data": o.data, "made_by": "koopq symcheck"}); err != nil {
		return nil, "", err
	}
	fmt.Fprintf(w, "trained model saved to %s\n", p)
	return m, p, nil
}
