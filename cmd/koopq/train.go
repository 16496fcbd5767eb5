package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/cql"
	"github.com/koopq/koopq/run"
)

func init() {
	var (
		cfg      = run.DefaultTrainConfig()
		preset   string
		outRoot  string
		name     string
		resume   string
		hidden   []int
		steps    int
		seed     uint64
		batch    int
		bcSteps  int
		lagrange string
		minQ     float64
		norm     string
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train offline CQL on a dataset, optionally with state augmentation (S4RL-N, KFC, KFC++, ...)",
		Long: `train runs offline Conservative Q-learning (SAC-based CQL(H), the KFC authors' settings by default)
on a D4RL-layout dataset and evaluates the policy in the simulator. --augment picks the state shift used in
the Bellman update (Step 3 of the paper): ` + strings.Join(augment.Names(), ", ") + `.

Each run gets a directory <out>/<name>-<time>/ with config.json, metrics.jsonl/.csv, checkpoints/latest.safetensors
(written atomically every --checkpoint-every steps), policy.safetensors and results.json. A killed run continues
with 'koopq train --resume DIR' and ends with the same numbers as an uninterrupted one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var dir *run.Dir
			var err error
			if resume != "" {
				if dir, err = run.OpenDir(resume); err != nil {
					return err
				}
				if err := dir.ReadJSON("config.json", &cfg); err != nil {
					return err
				}
			} else {
				if cfg.Data == "" {
					return fmt.Errorf("--data is required (a D4RL-layout HDF5 file; 'koopq collect' makes some)")
				}
				switch preset {
				case "paper":
					cfg.CQL = cql.DefaultConfig()
				case "corl":
					cfg.CQL = cql.CORLConfig()
				default:
					return fmt.Errorf("--config %q: want paper or corl", preset)
				}
				f := cmd.Flags()
				if f.Changed("hidden") {
					cfg.CQL.Net.Hidden = hidden
				}
				if f.Changed("steps") {
					cfg.CQL.Steps = steps
				}
				if f.Changed("batch") {
					cfg.CQL.Batch = batch
				}
				if f.Changed("bc-steps") {
					cfg.CQL.BCSteps = bcSteps
				}
				if f.Changed("min-q-weight") {
					cfg.CQL.MinQWeight = minQ
				}
				if err := setBool(&cfg.CQL.Lagrange, "lagrange", lagrange); err != nil {
					return err
				}
				if err := setBool(&cfg.CQL.Normalize, "normalize-states", norm); err != nil {
					return err
				}
				cfg.CQL.Seed = seed
				cfg.KoopmanTrain.Seed = seed
				if cfg.Env == "" {
					return fmt.Errorf("--env is required (the simulator the policy is evaluated in)")
				}
				if name == "" {
					name = fmt.Sprintf("%s-%s-s%d", cfg.Env, cfg.Augment, seed)
				}
				if dir, err = run.NewDir(outRoot, name); err != nil {
					return err
				}
			}
			b := newBar(cfg.CQL.Steps, "cql")
			res, err := run.Train(cmd.Context(), cfg, dir, nil, resume != "", func(done, total int, msg string) { b.set(done, msg) })
			b.finish()
			if err != nil {
				return fmt.Errorf("%w (run directory %s)", err, dir.Path)
			}
			fmt.Printf("%s on %s, augment %s, seed %d: %d steps in %.0fs (%.1f steps/s)\n", cfg.Env, cfg.Data, cfg.Augment,
				cfg.CQL.Seed, res.Steps, res.WallSeconds, res.StepsPerSec)
			fmt.Printf("final return %.2f ± %.2f over %d episodes", res.Final.Mean, res.Final.Std, res.Final.Episodes)
			if !math.IsNaN(float64(res.Final.Normalized)) {
				fmt.Printf(", normalized score %.1f ± %.1f", res.Final.Normalized, res.Final.NormalizedStd)
			}
			fmt.Printf("\nrun directory %s (results.json, policy.safetensors)\n", dir.Path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "dataset file (D4RL-layout HDF5)")
	f.StringVar(&cfg.Env, "env", "", "environment to evaluate in (e.g. pendulum, hopper)")
	f.StringVar(&cfg.Augment, "augment", "none", "state augmentation: "+strings.Join(augment.Names(), ", "))
	f.Float64Var(&cfg.GaussianSigma, "gaussian-sigma", 3e-3, "S4RL-N noise σ (also KFC's non-Koopman branch)")
	f.StringVar(&cfg.KoopmanModel, "koopman", "", "trained Koopman model (koopq koopman train); trained first when empty and needed")
	f.Float64Var(&cfg.AugmentParams.KoopmanProb, "koopman-prob", cfg.AugmentParams.KoopmanProb, "p_K: per-batch probability of the Koopman shift (else S4RL-N)")
	f.Float64Var(&cfg.AugmentParams.ShiftSigma, "shift-sigma", cfg.AugmentParams.ShiftSigma, "KFC/KFC++ ε scale in units of 3e-3 (authors' code 1.0, README 0.5)")
	f.BoolVar(&cfg.AugmentParams.Residual, "residual", false, "gauge-corrected decoding s̃ = s + D(g̃) − D(g) (removes the autoencoder error from the shift)")
	f.Float64Var(&cfg.AugmentParams.AdvEps, "adv-eps", cfg.AugmentParams.AdvEps, "S4RL-Adv step size ε")
	f.Float64Var(&cfg.AugmentParams.CacheGiB, "cache-gib", cfg.AugmentParams.CacheGiB, "memory budget of the per-transition Koopman cache (GiB)")
	f.IntVar(&cfg.KoopmanTrain.MaxEpochs, "koopman-epochs", cfg.KoopmanTrain.MaxEpochs, "max epochs when a Koopman model is trained for the run")
	f.IntSliceVar(&cfg.KoopmanHidden, "koopman-hidden", nil, "override encoder/decoder widths of a trained Koopman model (paper 512,512)")
	f.StringVar(&preset, "config", "paper", "CQL preset: paper (KFC authors: 2×256, Lagrange, BC 40k) or corl (3×256, auto-α, normalized states)")
	f.IntSliceVar(&hidden, "hidden", nil, "override hidden widths of actor and critics, e.g. 256,256")
	f.IntVar(&steps, "steps", 1000000, "gradient steps")
	f.IntVar(&batch, "batch", 256, "minibatch size")
	f.IntVar(&bcSteps, "bc-steps", 40000, "behaviour-cloning warm-up steps of the actor")
	f.Float64Var(&minQ, "min-q-weight", 10, "CQL regularizer weight")
	f.StringVar(&lagrange, "lagrange", "", "true/false: tune α' with the Lagrange threshold (default from --config)")
	f.StringVar(&norm, "normalize-states", "", "true/false: standardize states (default from --config)")
	f.Uint64Var(&seed, "seed", 0, "random seed (minibatches, policy noise, augmentation, evaluation)")
	f.IntVar(&cfg.EvalEvery, "eval-every", 5000, "steps between evaluations (0: only at the end)")
	f.IntVar(&cfg.EvalEpisodes, "eval-episodes", 10, "episodes per evaluation")
	f.IntVar(&cfg.LogEvery, "log-every", 1000, "steps between metric rows")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", 5000, "steps between checkpoints")
	f.BoolVar(&cfg.ReadOptions.UseNextObservations, "use-next-observations", false, "take s' from the file's next_observations instead of d4rl's observations[i+1]")
	f.StringVar(&outRoot, "out", "runs", "root directory for run directories")
	f.StringVar(&name, "name", "", "run name (default <env>-<augment>-s<seed>)")
	f.StringVar(&resume, "resume", "", "continue the run in this directory from its latest checkpoint")
	rootCmd.AddCommand(cmd)
}

func setBool(dst *bool, flag, v string) error {
	switch v {
	case "":
	case "true", "1", "yes":
		*dst = true
	case "false", "0", "no":
		*dst = false
	default:
		return fmt.Errorf("--%s %q: want true or false", flag, v)
	}
	return nil
}
