package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

func init() {
	var (
		flagCfg      = run.DefaultTrainConfig() // flags write here; copied over the preset/file when given
		preset       string
		configFile   string
		legacy       string
		outRoot      string
		name         string
		resume       string
		allowBackend bool
		quiet        bool
		augCache     string
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train offline CQL on a dataset, optionally with state augmentation (S4RL-N, KFC, KFC++, ...)",
		Long: `train runs offline Conservative Q-learning (SAC-based CQL(H), the KFC authors' settings by default)
on a D4RL-layout or Minari dataset and evaluates the policy in the simulator (--env; by default the env the dataset
records). With --env none (or when the dataset records no known env) no simulator is needed: the dataset may have any
dimensions, action bounds come from the data (or --action-low/--action-high), and every evaluation interval logs offline
diagnostics on held-out episodes (--holdout-fraction) instead of returns: mean Q on the data's actions, TD error, the
policy's log-likelihood and MSE of the data's actions (history.json; results.json's "offline"). --augment picks the state shift used
in the Bellman update (Step 3 of the paper): ` + strings.Join(augment.Names(), ", ") + `.

Settings come from a preset (--preset, default paper), then a YAML or JSON file (--config-file; a run
directory's config.json works), then flags; each later source overrides the earlier. Flag defaults shown
below are the paper preset's. Presets:
` + run.PresetHelp() + `
Everything is checked before the run directory <out>/<name>-<time>/ is created. It holds config.json,
metrics.jsonl/.csv, history.json, checkpoints/latest.safetensors (atomic, every --checkpoint-every steps),
koopman.safetensors (when a model was trained for the run), policy.safetensors and results.json.

SIGINT/SIGTERM stop training after the current step with a checkpoint. 'koopq train --resume DIR' continues
a stopped or killed run and ends with the same numbers as an uninterrupted one; with --resume, setting flags
must match the run's config.json, except a larger --steps, which extends the run (a finished run is then
trained further). --preset, --config-file, --out and --name cannot be combined with --resume.

The Koopman augmentations precompute per-transition eigenbases before training (minutes on 1M rows).
--augment-cache DIR (default $KOOPQ_AUGMENT_CACHE) keeps that cache in a file in DIR (as large as the cache: up to
--cache-gib, 4 GiB by default), and a later run on the same model, dataset and GEMM backend (another seed, a resumed run, a
sweep's next run) loads it in seconds, with the same numbers; results.json records the file used
(segments[].augment.precompute). koopq never deletes these files.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			switch strings.ToLower(args[0]) {
			case "true", "false", "yes", "no", "1", "0":
				return fmt.Errorf("unexpected argument %q: boolean flags are switches (--lagrange, --lagrange=false) and take no separate value", args[0])
			}
			return fmt.Errorf("unexpected argument %q (train takes only flags)", args[0])
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			progressQuiet = quiet
			f := cmd.Flags()
			if f.Changed("config") {
				return fmt.Errorf("--config %s: the flag was renamed: use --preset NAME (%s) for a preset, or --config-file FILE for a YAML/JSON settings file",
					legacy, strings.Join(run.PresetNames(), ", "))
			}
			// Paths given as flags are made absolute, so the run can be resumed from elsewhere.
			if err := flagCfg.AbsPaths(); err != nil {
				return err
			}
			apply := func(cfg *run.TrainConfig) {
				for _, p := range run.TrainParams() {
					if f.Changed(p.Flag) {
						run.CopyParam(p, cfg, &flagCfg)
					}
				}
				if f.Changed("seed") {
					cfg.KoopmanTrain.Seed = cfg.CQL.Seed
				}
			}
			var cfg run.TrainConfig
			var dir *run.Dir
			var err error
			if allowBackend && resume == "" {
				return fmt.Errorf("--allow-backend-change only applies with --resume")
			}
			if resume != "" {
				for _, n := range []string{"preset", "config-file", "out", "name"} {
					if f.Changed(n) {
						return fmt.Errorf("--%s cannot be used with --resume: a resumed run keeps the settings in %s", n, filepath.Join(resume, "config.json"))
					}
				}
				if dir, err = run.OpenDir(resume); err != nil {
					return err
				}
				var recorded run.TrainConfig
				if err := dir.ReadJSON("config.json", &recorded); err != nil {
					return err
				}
				if err := dir.ReadJSON("config.json", &cfg); err != nil {
					return err
				}
				apply(&cfg)
				if err := run.CheckResume(recorded, cfg); err != nil {
					return err
				}
			} else {
				base := preset
				if base == "" {
					base = "paper"
				}
				if cfg, err = run.Preset(base); err != nil {
					return err
				}
				if configFile != "" {
					if cfg, err = run.LoadConfigFile(configFile, cfg, preset); err != nil {
						return err
					}
				}
				apply(&cfg)
				if err := cfg.AbsPaths(); err != nil {
					return err
				}
			}
			// Validate settings, data, environment and models before any side effect.
			// No --env: the env the dataset records, else none (no simulator).
			cfg, data, err := run.ResolveEnv(cfg, nil)
			if err != nil {
				return err
			}
			if data, err = run.CheckTrain(cfg, data); err != nil {
				return err
			}
			if augCache != "" {
				if st, err := os.Stat(augCache); err == nil && !st.IsDir() {
					return fmt.Errorf("--augment-cache %s: not a directory (the precompute cache files go there)", augCache)
				} else if err != nil && !os.IsNotExist(err) {
					return fmt.Errorf("--augment-cache: %w", err)
				}
			}
			if dir == nil {
				if name == "" {
					name = fmt.Sprintf("%s-%s-s%d", cfg.Env, cfg.Augment, cfg.CQL.Seed)
				}
				if dir, err = run.NewDir(outRoot, name); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				<-ctx.Done()
				stop() // a second signal kills at once
			}()
			bars := &phaseBars{}
			res, err := run.TrainWith(ctx, cfg, dir, data, run.TrainOptions{Resume: resume != "", Progress: bars.update, AugmentCache: augCache,
				AllowBackendChange: allowBackend})
			bars.close()
			var intr *run.Interrupted
			if errors.As(err, &intr) && errors.Is(err, context.Canceled) {
				return fmt.Errorf("%w; continue with: koopq train --resume %s", err, dir.Path)
			}
			if _, serr := os.Stat(dir.Path); err != nil && serr == nil {
				return fmt.Errorf("%w (run directory %s)", err, dir.Path)
			} else if err != nil {
				return err // nothing was kept
			}
			if res.AlreadyFinished {
				fmt.Printf("run %s is already finished (%d steps); nothing to do (a larger --steps extends it)\n", dir.Path, res.Steps)
			}
			fmt.Printf("%s on %s, augment %s, seed %d: %d steps (%d behaviour cloning, %d CQL)", cfg.Env, cfg.Data, cfg.Augment,
				cfg.CQL.Seed, res.Steps, res.Phases.BC, res.Phases.CQL)
			if res.StepsPerSec > 0 && !res.AlreadyFinished {
				fmt.Printf(" in %.0fs (%.1f steps/s)", res.WallSeconds, res.StepsPerSec)
			}
			if o := res.Offline; o != nil {
				fmt.Printf("\nno simulator (--env none): on %s held out (%d transitions): mean Q(s, a) %.4g, TD error %.4g, "+
					"log-likelihood %.4g, action MSE %.4g\n", plural.Count(o.HoldoutEpisodes, "episode"), o.Transitions,
					o.QData, o.TDError, o.LogLikelihood, o.ActionMSE)
				fmt.Printf("run directory %s (results.json, history.json, policy.safetensors)\n", dir.Path)
				return nil
			}
			fmt.Printf("\nfinal return %.2f ± %.2f over %s", res.Final.Mean, res.Final.Std, plural.Count(res.Final.Episodes, "episode"))
			if !math.IsNaN(float64(res.Final.Normalized)) {
				fmt.Printf(", normalized score %.1f ± %.1f", res.Final.Normalized, res.Final.NormalizedStd)
			}
			if sr := float64(res.Final.SuccessRate); !math.IsNaN(sr) {
				fmt.Printf(", success rate %.1f%%", 100*sr)
			}
			fmt.Printf("\nrun directory %s (results.json, policy.safetensors)\n", dir.Path)
			return nil
		},
	}
	f := cmd.Flags()
	for _, p := range run.TrainParams() {
		switch v := p.Field(&flagCfg).(type) {
		case *string:
			f.StringVar(v, p.Flag, *v, p.Usage)
		case *bool:
			f.BoolVar(v, p.Flag, *v, p.Usage)
		case *int:
			f.IntVar(v, p.Flag, *v, p.Usage)
		case *uint64:
			f.Uint64Var(v, p.Flag, *v, p.Usage)
		case *float64:
			f.Float64Var(v, p.Flag, *v, p.Usage)
		case *[]int:
			f.IntSliceVar(v, p.Flag, *v, p.Usage)
		case *[]float64:
			f.Float64SliceVar(v, p.Flag, *v, p.Usage)
		default:
			panic(fmt.Sprintf("train: flag %s has unsupported type %T", p.Flag, v))
		}
	}
	f.StringVar(&preset, "preset", "", "starting settings: "+strings.Join(run.PresetNames(), ", ")+" (default paper, or the config file's preset key)")
	f.StringVar(&configFile, "config-file", "", "YAML or JSON file of settings (keys as in a run's config.json); flags override it")
	f.StringVar(&legacy, "config", "", "renamed to --preset")
	_ = f.MarkHidden("config")
	f.StringVar(&outRoot, "out", "runs", "root directory for run directories")
	f.StringVar(&name, "name", "", "run name (default <env>-<augment>-s<seed>)")
	f.StringVar(&resume, "resume", "", "continue the run in this directory from its latest checkpoint")
	f.BoolVar(&allowBackend, "allow-backend-change", false, "with --resume: continue a run trained under another GEMM backend, precision or kernel "+
		"(its numbers then differ from an uninterrupted run's; results.json's segments record the change)")
	f.BoolVar(&quiet, "quiet", false, "no progress bars or progress log lines")
	f.StringVar(&augCache, "augment-cache", os.Getenv(sweep.AugmentCacheEnv), "directory that keeps the Koopman precompute cache between runs (default $KOOPQ_AUGMENT_CACHE; empty: none)")
	rootCmd.AddCommand(cmd)
}
