package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/lockfile"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/run"
)

// readTransitions reads a D4RL-layout HDF5 file or a Minari dataset
// (directory or main_data.hdf5) into transitions.
func readTransitions(path string, opts dataset.ReadOptions) (*dataset.Dataset, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() || strings.HasSuffix(path, "main_data.hdf5") {
		return dataset.ReadMinari(path, opts)
	}
	return dataset.ReadD4RL(path, opts)
}

func init() {
	kCmd := groupCommand("koopman", "Train and inspect the Koopman forward model (KFC Step 1 and 2)")
	var (
		data, envName, out, modelPath, diagOut string
		epochs, latent                         int
		hidden                                 []int
		batch, patience, nDiag                 int
		seed                                   uint64
		lr, aeWeight, noise, valFrac, epsStd   float64
		lrPatience                             int
		lrFactor, minLR, minDelta              float64
		encHidden, encOut, decHidden           string
		maxCond                                float64
		ropts                                  dataset.ReadOptions
		resume                                 bool
		allowBackend                           bool
	)
	trainCmd := &cobra.Command{
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
			if data == "" {
				return fmt.Errorf("--data is required")
			}
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			if err := needOutFile("out", out); err != nil {
				return err
			}
			if err := needOutFile("out", out+".json"); err != nil {
				return err
			}
			ckpt := out + ".ckpt"
			_, ckErr := os.Stat(ckpt)
			switch {
			case ckErr == nil && !resume:
				return fmt.Errorf("%s holds an interrupted training of --out %s: continue it with --resume, or delete it to start over", ckpt, out)
			case ckErr != nil && resume:
				if modelFinished(out) {
					// As 'koopq train --resume' on a finished run: nothing to do.
					fmt.Fprintf(cmd.OutOrStdout(), "Koopman model %s is already finished (%s.json has its training); nothing to do\n", out, out)
					return nil
				}
				return fmt.Errorf("--resume: no checkpoint %s to continue (%v)", ckpt, unwrapPathErr(ckErr))
			case allowBackend && !resume:
				return fmt.Errorf("--allow-backend-change only applies with --resume")
			}
			for _, c := range []error{
				needPositive("max-epochs", epochs), needPositive("latent", latent), needWidths("hidden", hidden),
				needPositive("batch", batch), needNonNegative("patience", patience), needNonNegative("diag-n", nDiag),
				needPositiveFloat("lr", lr), needNonNegativeFloat("ae-weight", aeWeight), needNonNegativeFloat("noise", noise),
				needNonNegative("lr-patience", lrPatience), needNonNegativeFloat("min-lr", minLR), needNonNegativeFloat("min-delta", minDelta),
				needPositiveFloat("eps-std", epsStd), needPositiveFloat("max-cond", maxCond), needReadOptions(ropts),
			} {
				if c != nil {
					return c
				}
			}
			if envName != "" {
				if _, err := env.Make(envName); err != nil {
					return fmt.Errorf("--env: %w", err)
				}
			}
			if !(valFrac > 0 && valFrac < 1) {
				return fmt.Errorf("--val-fraction %v: must be in (0, 1)", valFrac)
			}
			for flag, a := range map[string]string{"enc-act": encHidden, "enc-out-act": encOut, "dec-act": decHidden} {
				if _, ok := nn.ParseActivation(a); !ok {
					return fmt.Errorf("--%s %q: want tanh, relu or identity", flag, a)
				}
			}
			d, err := readTransitions(data, ropts)
			if err != nil {
				return err
			}
			if envName != "" {
				// The model is labelled with --env: refuse data of another env.
				if err := run.CheckDataEnv(d, data, envName); err != nil {
					return err
				}
			}
			mc := koopman.DefaultModelConfig(d.ObsDim, d.ActDim)
			mc.Latent, mc.Seed = latent, seed
			mc.Hidden = hidden
			mc.EncoderHidden, mc.EncoderOutput, mc.DecoderHidden = encHidden, encOut, decHidden
			m, err := koopman.NewModel(mc)
			if err != nil {
				return err
			}
			tc := koopman.DefaultTrainConfig()
			tc.MaxEpochs, tc.Batch, tc.LR, tc.AEWeight, tc.NoiseSigma = epochs, batch, lr, aeWeight, noise
			tc.ValFraction, tc.Patience, tc.Seed = valFrac, patience, seed
			tc.LRPatience, tc.LRFactor, tc.MinLR, tc.MinDelta = lrPatience, lrFactor, minLR, minDelta
			if err := tc.Validate(); err != nil {
				return err
			}
			// Validated: take the training's lock (nothing is written before).
			unlock, err := lockModel(out)
			if err != nil {
				return err
			}
			finished := false
			defer func() {
				if finished { // the lock file goes with the finished training; a racer re-checks the checkpoint below
					os.Remove(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".lock"))
				}
				unlock()
			}()
			if _, err := os.Stat(ckpt); (err == nil) != resume {
				// Another process finished or started this training between
				// the check above and the lock.
				return fmt.Errorf("%s changed while this command started (another koopq process?): run it again", ckpt)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Koopman model: %d transitions from %s (env %q), S=%d m=%d N=%d hidden %v, %d parameters\n",
				d.Len(), data, envName, d.ObsDim, d.ActDim, mc.Latent, mc.Hidden, nnParams(m))
			if resume {
				fmt.Fprintf(w, "continuing the training checkpointed in %s\n", ckpt)
			}
			ctx, stop := signalContext(cmd.Context(), "stopping the Koopman training (the finished epochs are in "+ckpt+")")
			defer stop()
			start := time.Now()
			res, err := koopman.TrainWith(ctx, m, d.Observations, d.Actions, d.NextObservations, tc, koopman.TrainOptions{
				Checkpoint: ckpt, Backend: run.GEMMIdentity(run.CurrentProvenance()), AllowBackendChange: allowBackend,
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
					return &resumableError{err: fmt.Errorf("%w; continue with the same command and --resume", err)}
				}
				return err
			}

			fmt.Fprintf(w, "stopped: %s (%s); best epoch %d; final lr %.3g; %.1fs\n", res.Stopped, res.StopDetail, res.BestEpoch, res.FinalLR, time.Since(start).Seconds())
			if res.Undertrained {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", res.Warning)
			}
			dc := koopman.DefaultDiagConfig()
			dc.Samples, dc.EpsStd, dc.Seed, dc.Symmetry.MaxCond = nDiag, epsStd, seed, maxCond
			diag, err := m.Diagnose(d.Observations, d.Actions, d.NextObservations, dc)
			if err != nil {
				return err
			}
			printDiagnostics(w, diag, dc)
			best := res.Epochs[res.BestEpoch-1]
			prov := run.CurrentProvenance()
			meta := res.Metadata() // best_epoch, stopped, final_lr, undertrained, train_config, ...
			meta["env"], meta["data"], meta["provenance"] = envName, data, mustJSON(prov)
			meta["val_fwd"], meta["val_ae"] = fmt.Sprint(best.ValFwd), fmt.Sprint(best.ValAE)
			if err := m.Save(out, meta); err != nil {
				return err
			}
			summary := map[string]any{"model": out, "env": envName, "data": data, "transitions": d.Len(),
				"model_config": mc, "train": res, "diagnostics": diag, "provenance": prov}
			if err := writeJSONFile(out+".json", summary); err != nil {
				return err
			}
			if err := os.Remove(ckpt); err != nil {
				return fmt.Errorf("removing the finished training's checkpoint: %w", err)
			}
			fmt.Fprintf(w, "wrote %s and %s.json\n", out, out)
			finished = true
			return nil
		},
	}
	f := trainCmd.Flags()
	f.StringVar(&data, "data", "", "dataset: D4RL-layout HDF5 file or Minari dataset (required)")
	f.StringVar(&envName, "env", "", "environment name, recorded in the model metadata")
	f.StringVar(&out, "out", "", "output model file, e.g. model.safetensors (required)")
	f.IntVar(&epochs, "max-epochs", 75, "maximum epochs (paper: 75; authors' code: up to 400)")
	f.IntVar(&epochs, "epochs", 75, "old name of --max-epochs")
	_ = f.MarkDeprecated("epochs", "use --max-epochs (train: --koopman-max-epochs)")
	f.Uint64Var(&seed, "seed", 0, "seed for weights, split, shuffling and noise")
	f.IntVar(&latent, "latent", 32, "Koopman latent dimension N")
	f.IntSliceVar(&hidden, "hidden", []int{512, 512}, "hidden layer widths of encoder and decoder, e.g. 512,512 (paper)")
	f.IntVar(&batch, "batch", 256, "minibatch size")
	f.Float64Var(&lr, "lr", 3e-4, "Adam learning rate")
	f.Float64Var(&aeWeight, "ae-weight", 10, "γ_ae, weight of the autoencoder loss (authors' code: 10)")
	f.Float64Var(&noise, "noise", 6e-2, "σ of the Gaussian noise on autoencoder inputs (state units)")
	f.Float64Var(&valFrac, "val-fraction", 0.3, "validation share of transitions")
	f.IntVar(&patience, "patience", 10, "early stopping: epochs without a --min-delta relative validation improvement (0: off)")
	f.Float64Var(&minDelta, "min-delta", 1e-3, "relative validation improvement that counts for --patience and --lr-patience")
	f.IntVar(&lrPatience, "lr-patience", 5, "epochs without improvement before the learning rate is multiplied by --lr-factor (0: constant rate)")
	f.Float64Var(&lrFactor, "lr-factor", 0.5, "learning-rate factor on a plateau, in (0, 1) (authors' code: 0.5)")
	f.Float64Var(&minLR, "min-lr", 1e-5, "learning-rate floor; a plateau at it stops training (stopped: min_lr)")
	f.StringVar(&encHidden, "enc-act", "tanh", "encoder hidden activation (tanh, relu, identity)")
	f.StringVar(&encOut, "enc-out-act", "tanh", "encoder output activation")
	f.StringVar(&decHidden, "dec-act", "tanh", "decoder hidden activation (its output is linear)")
	f.IntVar(&nDiag, "diag-n", 1000, "transitions sampled for the final diagnostics (0: all)")
	f.Float64Var(&epsStd, "eps-std", 3e-3, "KFC++ ε std for the shift diagnostics (authors: shift_sigma·3e-3)")
	f.Float64Var(&maxCond, "max-cond", 1e4, "eigenbasis condition number above which the scalar fallback generator is used")
	f.BoolVar(&resume, "resume", false, "continue the interrupted training whose checkpoint is MODEL.ckpt")
	f.BoolVar(&allowBackend, "allow-backend-change", false, "with --resume: continue a training checkpointed under another GEMM backend, precision or kernel")
	addReadFlags(trainCmd, &ropts)

	inspectCmd := &cobra.Command{
		Use:   "inspect",
		Short: "Eigenvalues, commutator residuals, shift sizes and fallbacks of a trained model",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if modelPath == "" {
				return fmt.Errorf("--model is required")
			}
			if data == "" {
				return fmt.Errorf("--data is required")
			}
			for _, c := range []error{needNonNegative("n", nDiag), needPositiveFloat("eps-std", epsStd),
				needPositiveFloat("max-cond", maxCond), needReadOptions(ropts)} {
				if c != nil {
					return c
				}
			}
			if diagOut != "" {
				if err := needOutFile("json", diagOut); err != nil {
					return err
				}
			}
			m, meta, err := koopman.LoadModel(modelPath)
			if err != nil {
				return fmt.Errorf("--model: %w", err)
			}
			d, err := readTransitions(data, ropts)
			if err != nil {
				return err
			}
			if d.ObsDim != m.S() || d.ActDim != m.M() {
				return fmt.Errorf("model %s is for states %d / actions %d, dataset %s has %d / %d", modelPath, m.S(), m.M(), data, d.ObsDim, d.ActDim)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "model %s: S=%d m=%d N=%d hidden %v (env %q, best epoch %s)\n", modelPath, m.S(), m.M(), m.N(), m.Cfg.Hidden, meta["env"], meta["best_epoch"])
			printTrainingEnd(w, meta)
			dc := koopman.DefaultDiagConfig()
			dc.Samples, dc.EpsStd, dc.Seed, dc.Symmetry.MaxCond = nDiag, epsStd, seed, maxCond
			start := time.Now()
			diag, err := m.Diagnose(d.Observations, d.Actions, d.NextObservations, dc)
			if err != nil {
				return err
			}
			printDiagnostics(w, diag, dc)
			fmt.Fprintf(os.Stderr, "diagnosed %d transitions in %.1fs\n", diag.Samples, time.Since(start).Seconds())
			if diagOut != "" {
				return writeJSONFile(diagOut, diag)
			}
			return nil
		},
	}
	g := inspectCmd.Flags()
	g.StringVar(&modelPath, "model", "", "model written by 'koopq koopman train' (required)")
	g.StringVar(&data, "data", "", "dataset: D4RL-layout HDF5 file or Minari dataset (required)")
	g.IntVar(&nDiag, "n", 1000, "transitions to sample (0: all)")
	g.Uint64Var(&seed, "seed", 0, "seed for the sample and the ε draws")
	g.Float64Var(&epsStd, "eps-std", 3e-3, "KFC++ ε std per eigen-direction (authors: shift_sigma·3e-3)")
	g.Float64Var(&maxCond, "max-cond", 1e4, "eigenbasis condition number above which the scalar fallback generator is used")
	g.StringVar(&diagOut, "json", "", "also write the diagnostics as JSON to this file")
	addReadFlags(inspectCmd, &ropts)

	kCmd.AddCommand(trainCmd, inspectCmd)
	rootCmd.AddCommand(kCmd)
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

func addReadFlags(c *cobra.Command, o *dataset.ReadOptions) {
	f := c.Flags()
	f.BoolVar(&o.DropInvalid, "drop-invalid", false, "drop transitions with NaN/Inf instead of failing")
	f.BoolVar(&o.TerminateOnEnd, "terminate-on-end", false, "keep time-limit steps (d4rl's terminate_on_end)")
	f.BoolVar(&o.UseNextObservations, "use-next-observations", false, "take s' from the stored next_observations")
	f.IntVar(&o.MaxEpisodeSteps, "max-episode-steps", 0, "time limit for files without a timeouts key (d4rl's env._max_episode_steps fallback)")
}

// needReadOptions checks the dataset reading flags.
func needReadOptions(o dataset.ReadOptions) error {
	return needNonNegative("max-episode-steps", o.MaxEpisodeSteps)
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
