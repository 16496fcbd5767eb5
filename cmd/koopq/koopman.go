package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/lockfile"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/run"
)

// newKoopmanCmd makes 'koopq koopman' and its subcommands train and inspect.
func newKoopmanCmd() *cobra.Command {
	kCmd := groupCommand("koopman", "Train and inspect the Koopman forward model (KFC Step 1 and 2)")
	kCmd.AddCommand(newKoopmanTrainCmd(), newKoopmanInspectCmd())
	return kCmd
}

// koopmanTrainOptions holds the flag values of 'koopq koopman train'.
// The settings of koopmanTrainParams write straight into the model and
// training configs.
type koopmanTrainOptions struct {
	data, envName, out string
	model              koopman.ModelConfig // Latent, Hidden and activations; dimensions come from the data, Seed from tc
	tc                 koopman.TrainConfig
	nDiag              int     // transitions for the final diagnostics (0: all)
	epsStd, maxCond    float64 // diagnostics: KFC++ ε std, eigenbasis condition limit
	ropts              dataset.ReadOptions
	resume             bool
	allowBackend       bool

	// finished is set by validate when --resume finds the model already
	// trained: run then only says so.
	finished bool
}

// defaultKoopmanTrainOptions is the flag defaults: paper sizes, the
// authors' activations and koopman.DefaultTrainConfig.
func defaultKoopmanTrainOptions() koopmanTrainOptions {
	return koopmanTrainOptions{model: koopman.DefaultModelConfig(0, 0), tc: koopman.DefaultTrainConfig(), nDiag: 1000, epsStd: 3e-3, maxCond: 1e4}
}

// activations are the names nn.ParseActivation accepts.
var activations = param.OneOf("tanh", "relu", "identity", "linear", "none")

// koopmanTrainParams is the table of 'koopq koopman train' settings: its
// flags, defaults (defaultKoopmanTrainOptions) and range checks. The
// training settings are koopman.TrainParams, shared with 'koopq train'
// (--koopman-…); checks across settings (min-lr ≤ lr) are
// koopman.TrainConfig.Validate's, whose errors param.Explain renames to
// the flags.
func koopmanTrainParams() param.Table[koopmanTrainOptions] {
	type o = koopmanTrainOptions
	t := param.Table[o]{
		param.New("data", "", "dataset: D4RL-layout HDF5 file or Minari dataset (required)", func(o *o) any { return &o.data }, param.AnyValue),
		param.New("env", "", "environment name, recorded in the model metadata", func(o *o) any { return &o.envName }, param.AnyValue),
		param.New("out", "", "output model file, e.g. model.safetensors (required)", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("seed", "", "seed for weights, split, shuffling and noise", func(o *o) any { return &o.tc.Seed }, param.AnyValue),
		param.New("latent", "", "Koopman latent dimension N", func(o *o) any { return &o.model.Latent }, param.Positive),
		param.New("hidden", "", "hidden layer widths of encoder and decoder, e.g. 512,512 (paper)", func(o *o) any { return &o.model.Hidden }, param.Positive),
		param.New("enc-act", "", "encoder hidden activation (tanh, relu, identity)", func(o *o) any { return &o.model.EncoderHidden }, activations),
		param.New("enc-out-act", "", "encoder output activation", func(o *o) any { return &o.model.EncoderOutput }, activations),
		param.New("dec-act", "", "decoder hidden activation (its output is linear)", func(o *o) any { return &o.model.DecoderHidden }, activations),
		param.New("diag-n", "", "transitions sampled for the final diagnostics (0: all)", func(o *o) any { return &o.nDiag }, param.NonNegative),
		param.New("eps-std", "", "KFC++ ε std for the shift diagnostics (authors: shift_sigma·3e-3)", func(o *o) any { return &o.epsStd }, param.Positive),
		param.New("max-cond", "", "eigenbasis condition number above which the scalar fallback generator is used", func(o *o) any { return &o.maxCond }, param.Positive),
		param.New("resume", "", "continue the interrupted training whose checkpoint is MODEL.ckpt", func(o *o) any { return &o.resume }, param.AnyValue),
		param.New("allow-backend-change", "", "with --resume: continue a training checkpointed under another GEMM backend, precision or kernel", func(o *o) any { return &o.allowBackend }, param.AnyValue),
	}
	return slices.Concat(t[:3], param.Nest(koopman.TrainParams(), func(o *o) *koopman.TrainConfig { return &o.tc }, koopmanTrainPrefix),
		t[3:], readParams(func(o *o) *dataset.ReadOptions { return &o.ropts }))
}

// koopmanTrainPrefix mounts koopman.TrainParams in 'koopq koopman train':
// plain flags (--lr), no config keys.
var koopmanTrainPrefix = param.Prefix{NoKey: true}

// newKoopmanTrainCmd makes 'koopq koopman train'.
func newKoopmanTrainCmd() *cobra.Command {
	o := new(koopmanTrainOptions)
	*o = defaultKoopmanTrainOptions() // the fields without a flag too (e.g. tc.HuberDelta)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Fit E, K(a) = K0 + Σ a_i K_i, D on an offline dataset",
		Long: `Trains the bilinear Koopman forward model of the KFC paper (Eq. Fwdmodel) with
the loss Huber(D(K(a)E(s)), s') + γ_ae·Huber(D(E(x̃)), x̃), x̃ = [s; s'] + N(0, σ²),
on a seeded 70/30 train/validation split, with early stopping on the
validation loss (the best epoch's weights are kept) and the learning rate
halved on plateaus. Prints losses per epoch and Koopman diagnostics at the
end; writes MODEL (safetensors, config and stop reason in the metadata) and
MODEL.json (config, per-epoch losses and learning rates, why training
stopped, diagnostics).

Training ends at --max-epochs (75, the paper's figure; the KFC authors'
code allows 400: --max-epochs 400), by early stopping (--patience epochs
without a --min-delta relative improvement of the validation loss), or when
a plateau finds the learning rate at --min-lr (after --lr-patience epochs
without improvement the rate is multiplied by --lr-factor). The reason is
recorded as train.stopped (max_epochs, early_stopping, min_lr); a model
that reached the cap while still improving gets train.undertrained and a
warning.

The training state is checkpointed to MODEL.ckpt after every epoch. SIGINT or
SIGTERM stops within one minibatch (exit status 75) and keeps the finished
epochs there; the same command with --resume continues from them and ends
with the same model, bit for bit, as an uninterrupted training. The
checkpoint is removed once MODEL is written; --resume of a finished model
says so and exits 0. A training holds a lock (<dir>/.<MODEL name>.lock): a
second process on the same MODEL fails at once, naming the first's pid.

Defaults: paper sizes (N = 32, 2×512), the authors' tanh activations (the
paper's text says ReLU), lr 3e-4 halved after 5 epochs of plateau down to
1e-5, batch 256, at most 75 epochs (paper), γ_ae = 10
(authors' code; the paper gives no value), σ = 0.06 (paper and code).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd)
		},
	}
	registerKoopmanTrainFlags(cmd.Flags(), o)
	return cmd
}

// registerKoopmanTrainFlags registers the flags of 'koopq koopman train'
// on f, writing into o (which holds the defaults).
func registerKoopmanTrainFlags(f *pflag.FlagSet, o *koopmanTrainOptions) {
	koopmanTrainParams().MustRegister(f, o, defaultKoopmanTrainOptions())
	f.IntVar(&o.tc.MaxEpochs, "epochs", o.tc.MaxEpochs, "old name of --max-epochs")
	_ = f.MarkDeprecated("epochs", "use --max-epochs (train: --koopman-max-epochs)")
}

// checkpoint is the file the training of --out is checkpointed to.
func (o *koopmanTrainOptions) checkpoint() string { return o.out + ".ckpt" }

// validate checks the flags, and that the checkpoint's presence fits
// --resume, before anything is read or written.
func (o *koopmanTrainOptions) validate() error {
	if o.data == "" {
		return fmt.Errorf("--data is required")
	}
	if o.out == "" {
		return fmt.Errorf("--out is required")
	}
	if err := needOutFile("out", o.out, inFile{"data", o.data}); err != nil {
		return err
	}
	if err := needOutFile("out", o.out+".json", inFile{"data", o.data}); err != nil {
		return err
	}
	ckpt := o.checkpoint()
	_, ckErr := os.Stat(ckpt)
	switch {
	case ckErr == nil && !o.resume:
		return fmt.Errorf("%s holds an interrupted training of --out %s: continue it with --resume, or delete it to start over", ckpt, o.out)
	case ckErr != nil && o.resume:
		if modelFinished(o.out) {
			o.finished = true
			return nil
		}
		return fmt.Errorf("--resume: no checkpoint %s to continue (%v)", ckpt, unwrapPathErr(ckErr))
	case o.allowBackend && !o.resume:
		return fmt.Errorf("--allow-backend-change only applies with --resume")
	}
	tcErr := param.Explain(o.tc.Validate(), koopman.TrainParams(), koopmanTrainPrefix)
	if err := firstErr(needWidths("hidden", o.model.Hidden), koopmanTrainParams().Validate(o), tcErr); err != nil {
		return err
	}
	if o.envName != "" {
		if _, err := env.Make(o.envName); err != nil {
			return fmt.Errorf("--env: %w", err)
		}
	}
	return nil
}

// prepare reads the dataset and makes the untrained model and the
// training config.
func (o *koopmanTrainOptions) prepare() (*dataset.Dataset, *koopman.Model, koopman.TrainConfig, error) {
	var tc koopman.TrainConfig
	d, err := run.ReadDataset(o.data, o.ropts)
	if err != nil {
		return nil, nil, tc, err
	}
	if o.envName != "" {
		// The model is labelled with --env: refuse data of another env.
		if err := run.CheckDataEnv(d, o.data, o.envName); err != nil {
			return nil, nil, tc, err
		}
	}
	mc := o.model
	mc.ObsDim, mc.ActDim, mc.Seed = d.ObsDim, d.ActDim, o.tc.Seed
	m, err := koopman.NewModel(mc)
	if err != nil {
		return nil, nil, tc, err
	}
	return d, m, o.tc, nil
}

// run trains the model under the training's lock, then diagnoses and
// writes it; validate has passed.
func (o *koopmanTrainOptions) run(cmd *cobra.Command) error {
	w := cmd.OutOrStdout()
	if o.finished {
		// As 'koopq train --resume' on a finished run: nothing to do.
		fmt.Fprintf(w, "Koopman model %s is already finished (%s.json has its training); nothing to do\n", o.out, o.out)
		return nil
	}
	d, m, tc, err := o.prepare()
	if err != nil {
		return err
	}
	if _, err := koopman.ValidationSize(tc.ValFraction, d.Len()); err != nil {
		return fmt.Errorf("--val-fraction: %w", err)
	}
	// Validated: take the training's lock (nothing is written before).
	unlock, err := lockModel(o.out)
	if err != nil {
		return err
	}
	finished := false
	defer func() {
		if finished { // the lock file goes with the finished training; a racer re-checks the checkpoint below
			os.Remove(filepath.Join(filepath.Dir(o.out), "."+filepath.Base(o.out)+".lock"))
		}
		unlock()
	}()
	ckpt := o.checkpoint()
	if _, err := os.Stat(ckpt); (err == nil) != o.resume {
		// Another process finished or started this training between
		// the check above and the lock.
		return fmt.Errorf("%s changed while this command started (another koopq process?): run it again", ckpt)
	}
	fmt.Fprintf(w, "Koopman model: %d transitions from %s (env %q), S=%d m=%d N=%d hidden %v, %d parameters\n",
		d.Len(), o.data, o.envName, d.ObsDim, d.ActDim, m.Cfg.Latent, m.Cfg.Hidden, nnParams(m))
	if o.resume {
		fmt.Fprintf(w, "continuing the training checkpointed in %s\n", ckpt)
	}
	res, err := o.train(cmd, m, d, tc)
	if err != nil {
		return err
	}
	if err := o.write(w, m, d, res); err != nil {
		return err
	}
	finished = true
	return nil
}

// train fits m on d, checkpointing every epoch; a signal stops it with a
// resumable error.
func (o *koopmanTrainOptions) train(cmd *cobra.Command, m *koopman.Model, d *dataset.Dataset, tc koopman.TrainConfig) (*koopman.TrainResult, error) {
	w := cmd.OutOrStdout()
	ckpt := o.checkpoint()
	ctx, stop := signalContext(cmd.Context(), "stopping the Koopman training (the finished epochs are in "+ckpt+")")
	defer stop()
	start := time.Now()
	res, err := koopman.TrainWith(ctx, m, d.Observations, d.Actions, d.NextObservations, tc, koopman.TrainOptions{
		Checkpoint: ckpt, Backend: run.GEMMIdentity(run.CurrentProvenance()), AllowBackendChange: o.allowBackend,
		OnEpoch: func(st koopman.EpochStats) {
			mark := ""
			if st.Best {
				mark = " *"
			}
			fmt.Fprintf(w, "epoch %3d/%d  lr %.3g  train %.5f (fwd %.5f, ae %.5f)  val %.5f (fwd %.5f, ae %.5f)  %.1fs, %.0f samples/s%s\n",
				st.Epoch, tc.MaxEpochs, st.LR, st.TrainTotal, st.TrainFwd, st.TrainAE, st.ValTotal, st.ValFwd, st.ValAE, st.Seconds, st.SamplesPerSec, mark)
			run.CrashPoint(ctx, "koopman-epoch")
		}})
	if err != nil {
		if ctx.Err() != nil {
			return nil, &resumableError{err: fmt.Errorf("%w; continue with the same command and --resume", err)}
		}
		return nil, err
	}
	fmt.Fprintf(w, "stopped: %s (%s); best epoch %d; final lr %.3g; %.1fs\n", res.Stopped, res.StopDetail, res.BestEpoch, res.FinalLR, time.Since(start).Seconds())
	if res.Undertrained {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", res.Warning)
	}
	return res, nil
}

// write diagnoses the trained model, saves it with its record MODEL.json
// and removes the checkpoint.
func (o *koopmanTrainOptions) write(w io.Writer, m *koopman.Model, d *dataset.Dataset, res *koopman.TrainResult) error {
	dc := koopman.DefaultDiagConfig()
	dc.Samples, dc.EpsStd, dc.Seed, dc.Symmetry.MaxCond = o.nDiag, o.epsStd, o.tc.Seed, o.maxCond
	diag, err := m.Diagnose(d.Observations, d.Actions, d.NextObservations, dc)
	if err != nil {
		return err
	}
	printDiagnostics(w, diag, dc)
	best := res.Epochs[res.BestEpoch-1]
	prov := run.CurrentProvenance()
	meta := res.Metadata() // best_epoch, stopped, final_lr, undertrained, train_config, ...
	meta["env"], meta["data"], meta["provenance"] = o.envName, o.data, mustJSON(prov)
	meta[koopman.MetaDataContent] = d.ContentSHA256()
	meta["val_fwd"], meta["val_ae"] = fmt.Sprint(best.ValFwd), fmt.Sprint(best.ValAE)
	if err := m.Save(o.out, meta); err != nil {
		return err
	}
	summary := map[string]any{"model": o.out, "env": o.envName, "data": o.data, "transitions": d.Len(), koopman.MetaDataContent: meta[koopman.MetaDataContent],
		"model_config": m.Cfg, "train": res, "diagnostics": diag, "provenance": prov}
	if err := writeJSONFile(o.out+".json", summary); err != nil {
		return err
	}
	if err := os.Remove(o.checkpoint()); err != nil {
		return fmt.Errorf("removing the finished training's checkpoint: %w", err)
	}
	fmt.Fprintf(w, "wrote %s and %s.json\n", o.out, o.out)
	return nil
}

// koopmanInspectOptions holds the flag values of 'koopq koopman inspect'.
type koopmanInspectOptions struct {
	modelPath, data, diagOut string
	nDiag                    int
	seed                     uint64
	epsStd, maxCond          float64
	ropts                    dataset.ReadOptions
}

// newKoopmanInspectCmd makes 'koopq koopman inspect'.
func newKoopmanInspectCmd() *cobra.Command {
	o := &koopmanInspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Eigenvalues, commutator residuals, shift sizes and fallbacks of a trained model",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.OutOrStdout())
		},
	}
	koopmanInspectParams().MustRegister(cmd.Flags(), o, defaultKoopmanInspectOptions())
	return cmd
}

// defaultKoopmanInspectOptions is the flag defaults (1000 sampled transitions and the authors' diagnostics settings).
func defaultKoopmanInspectOptions() koopmanInspectOptions {
	return koopmanInspectOptions{nDiag: 1000, epsStd: 3e-3, maxCond: 1e4}
}

// koopmanInspectParams is the table of 'koopq koopman inspect' settings.
func koopmanInspectParams() param.Table[koopmanInspectOptions] {
	type o = koopmanInspectOptions
	t := param.Table[o]{
		param.New("model", "", "model written by 'koopq koopman train' (required)", func(o *o) any { return &o.modelPath }, param.AnyValue),
		param.New("data", "", "dataset: D4RL-layout HDF5 file or Minari dataset (required)", func(o *o) any { return &o.data }, param.AnyValue),
		param.New("n", "", "transitions to sample (0: all)", func(o *o) any { return &o.nDiag }, param.NonNegative),
		param.New("seed", "", "seed for the sample and the ε draws", func(o *o) any { return &o.seed }, param.AnyValue),
		param.New("eps-std", "", "KFC++ ε std per eigen-direction (authors: shift_sigma·3e-3)", func(o *o) any { return &o.epsStd }, param.Positive),
		param.New("max-cond", "", "eigenbasis condition number above which the scalar fallback generator is used", func(o *o) any { return &o.maxCond }, param.Positive),
		param.New("json", "", "also write the diagnostics as JSON to this file", func(o *o) any { return &o.diagOut }, param.AnyValue),
	}
	return append(t, readParams(func(o *o) *dataset.ReadOptions { return &o.ropts })...)
}

// validate checks the flags before the model and data are read.
func (o *koopmanInspectOptions) validate() error {
	if o.modelPath == "" {
		return fmt.Errorf("--model is required")
	}
	if o.data == "" {
		return fmt.Errorf("--data is required")
	}
	if err := koopmanInspectParams().Validate(o); err != nil {
		return err
	}
	if o.diagOut != "" {
		return needOutFile("json", o.diagOut, inFile{"model", o.modelPath}, inFile{"data", o.data})
	}
	return nil
}

// run diagnoses the model on the data and prints (and with --json writes)
// the diagnostics.
func (o *koopmanInspectOptions) run(w io.Writer) error {
	m, meta, err := koopman.LoadModel(o.modelPath)
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	d, err := run.ReadDataset(o.data, o.ropts)
	if err != nil {
		return err
	}
	if d.ObsDim != m.S() || d.ActDim != m.M() {
		return fmt.Errorf("model %s is for states %d / actions %d, dataset %s has %d / %d", o.modelPath, m.S(), m.M(), o.data, d.ObsDim, d.ActDim)
	}
	fmt.Fprintf(w, "model %s: S=%d m=%d N=%d hidden %v (env %q, best epoch %s)\n", o.modelPath, m.S(), m.M(), m.N(), m.Cfg.Hidden, meta["env"], meta["best_epoch"])
	printTrainingEnd(w, meta)
	dc := koopman.DefaultDiagConfig()
	dc.Samples, dc.EpsStd, dc.Seed, dc.Symmetry.MaxCond = o.nDiag, o.epsStd, o.seed, o.maxCond
	start := time.Now()
	diag, err := m.Diagnose(d.Observations, d.Actions, d.NextObservations, dc)
	if err != nil {
		return err
	}
	printDiagnostics(w, diag, dc)
	fmt.Fprintf(os.Stderr, "diagnosed %d transitions in %.1fs\n", diag.Samples, time.Since(start).Seconds())
	if o.diagOut != "" {
		return writeJSONFile(o.diagOut, diag)
	}
	return nil
}

// modelFinished reports whether the Koopman training of out has ended: the
// model and its record out.json are both there.
func modelFinished(out string) bool {
	for _, p := range []string{out, out + ".json"} {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// lockModel takes the lock of the Koopman training of out (flock on
// <dir>/.<name>.lock, released by the returned function or when the process
// dies), so that two processes never train one model and write its
// lockModel takes the lock of the Koopman training of out (flock on
// <dir>/.<name>.lock, released by the returned function or when the process
// dies), so that two processes never train one model and write its
// checkpoint at once; a second one fails at once naming the holder's pid.
func lockModel(out string) (unlock func(), err error) {
	p := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".lock")
	unlock, holder, err := lockfile.TryLock(p)
	switch {
	case errors.Is(err, lockfile.ErrBusy):
		if holder == "" {
			holder = "unknown"
		}
		return nil, fmt.Errorf("--out %s: another koopq process (pid %s) is training this model (lock %s); wait for it to end or stop it first", out, holder, p)
	case err != nil:
		return nil, fmt.Errorf("--out %s: locking %s: %w", out, p, err)
	}
	return unlock, nil
}

func nnParams(m *koopman.Model) int {
	n := 0
	for _, p := range m.Params() {
		n += len(p.Data)
	}
	return n
}

// printTrainingEnd prints why the model's training stopped and its final
// learning rate, from the metadata `koopman train` writes (models trained
// before these keys existed say so).
func printTrainingEnd(w io.Writer, meta map[string]string) {
	if meta["stopped"] == "" {
		fmt.Fprintln(w, "training: stop reason and final learning rate not recorded (trained by an older koopq)")
		return
	}
	fmt.Fprintf(w, "training: stopped %s after %s epochs, final lr %s", meta["stopped"], meta["epochs"], meta["final_lr"])
	if meta["undertrained"] == "true" {
		fmt.Fprint(w, "; UNDERTRAINED: the validation loss was still improving at the max_epochs cap")
	}
	fmt.Fprintln(w)
}

func printDiagnostics(w io.Writer, d *koopman.ModelDiagnostics, cfg koopman.DiagConfig) {
	fmt.Fprintf(w, "\nKoopman diagnostics over %d transitions (ε std %.3g):\n", d.Samples, cfg.EpsStd)
	fmt.Fprintf(w, "  reconstruction  mean ‖D(E(s)) − s‖      %.4g\n", d.ReconL2)
	fmt.Fprintf(w, "  forward         mean ‖D(K(a)E(s)) − s'‖  %.4g  (s' = s baseline %.4g)\n", d.ForwardL2, d.BaselineL2)
	fmt.Fprintf(w, "  eigenvalues |λ| %v; %.0f%% complex\n", d.EigAbs, 100*d.ComplexFraction)
	fmt.Fprintf(w, "  cond₁(P)        %v\n", d.Cond)
	fmt.Fprintf(w, "  ‖[σ,K]‖ rel     KFC++ %v\n", d.CommKFCpp)
	fmt.Fprintf(w, "                  KFC   %v\n", d.CommKFC)
	fmt.Fprintf(w, "  shift ‖D(g̃) − D(g)‖ %v  (paper: mean 2.6e-4)\n", d.ShiftL2)
	fmt.Fprintf(w, "  total ‖D(g̃) − s‖ mean %.4g (includes reconstruction error)\n", d.ShiftL2Total)
	fmt.Fprintf(w, "  the KFC++ shift of s is made of: model-error part mean ‖D(E(s)) − s‖ %.4g (direct decoding only; --residual leaves it out)"+
		" + symmetry part mean ‖D((1+σ)E(s)) − D(E(s))‖ %.4g\n", d.ReconL2, d.ShiftL2.Mean)
	fmt.Fprintf(w, "  fallbacks       %d", d.Fallbacks)
	for r, c := range d.FallbackReasons {
		fmt.Fprintf(w, "; %s: %d", r, c)
	}
	fmt.Fprintln(w)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
