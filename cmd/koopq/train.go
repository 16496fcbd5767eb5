package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

// trainOptions holds the flag values of 'koopq train': the settings flags
// write into flagCfg, copied over the preset or file for the flags given.
type trainOptions struct {
	flagCfg      run.TrainConfig
	preset       string
	configFile   string
	legacy       string
	outRoot      string
	name         string
	resume       string
	allowBackend bool
	quiet        bool
	augCache     string
	seedList     string

	flags *pflag.FlagSet // the command's flags, to tell which were given
	seeds []uint64       // --seeds, parsed by validate
}

// newTrainCmd makes 'koopq train'.
func newTrainCmd() *cobra.Command {
	cmd, _ := newTrainCommand()
	return cmd
}

// checkTrainArgs runs the checks of 'koopq train ARGS' that need no file
// (flags, preset, the settings as a whole: run.TrainConfig.Validate) on a
// fresh command, in this process: sweeps ask it about every run before
// they start one. args begins with "train".
func checkTrainArgs(args []string) error {
	cmd, o := newTrainCommand()
	if len(args) == 0 || args[0] != "train" {
		return fmt.Errorf("not a train command line: %q", args)
	}
	cmd.Flags().SetOutput(io.Discard) // no deprecation notice per run: each run's own log has it
	if err := cmd.ParseFlags(args[1:]); err != nil {
		return flagError(cmd, err)
	}
	if err := o.validate(); err != nil {
		return err
	}
	cfg, _, _, err := o.config()
	if err != nil {
		return err
	}
	return cfg.Validate()
}

// newTrainCommand makes 'koopq train' and returns its options, which the
// command's flags write into.
func newTrainCommand() (*cobra.Command, *trainOptions) {
	o := &trainOptions{flagCfg: run.DefaultTrainConfig()}
	flagCfg := &o.flagCfg
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
trained further), and --data/--koopman naming the run's dataset or model moved to another path (checked to
hold what the run read; config.json follows the move once a checkpoint records it). --preset, --config-file,
--out and --name cannot be combined with --resume.

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
			progressQuiet = o.quiet
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.flags = cmd.Flags()
	f := cmd.Flags()
	// Defaults are the paper preset's.
	run.TrainParams().MustRegister(f, flagCfg, run.DefaultTrainConfig())
	f.StringVar(&o.seedList, "seeds", "", "several seeds, e.g. 0,1,2: one run per seed (<name>-s<seed>), in turn, then their scores side by side")
	for old, cur := range deprecatedTrainFlags {
		p := f.Lookup(cur)
		f.AddFlag(&pflag.Flag{Name: old, Value: p.Value, DefValue: p.DefValue, Usage: "old name of --" + cur})
		_ = f.MarkDeprecated(old, "use --"+cur)
	}
	f.StringVar(&o.preset, "preset", "", "starting settings: "+strings.Join(run.PresetNames(), ", ")+" (default paper, or the config file's preset key)")
	f.StringVar(&o.configFile, "config-file", "", "YAML or JSON file of settings (keys as in a run's config.json); flags override it")
	f.StringVar(&o.legacy, "config", "", "renamed to --preset")
	_ = f.MarkHidden("config")
	f.StringVar(&o.outRoot, "out", "runs", "root directory for run directories")
	f.StringVar(&o.name, "name", "", "run name (default <env>-<augment>-s<seed>)")
	f.StringVar(&o.resume, "resume", "", "continue the run in this directory from its latest checkpoint")
	f.BoolVar(&o.allowBackend, "allow-backend-change", false, "with --resume: continue a run trained under another GEMM backend, precision or kernel "+
		"(its numbers then differ from an uninterrupted run's; results.json's segments record the change)")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bars or progress log lines")
	f.StringVar(&o.augCache, "augment-cache", os.Getenv(sweep.AugmentCacheEnv), "directory that keeps the Koopman precompute cache between runs (default $KOOPQ_AUGMENT_CACHE; empty: none)")
	cmd.SetUsageFunc(groupedUsage(trainFlagGroups()))
	return cmd, o
}

// validate checks the flags that need no file; the settings as a whole
// are checked by run.CheckTrain once the preset, file or resumed run is
// read.
func (o *trainOptions) validate() error {
	f := o.flags
	if f.Changed("config") {
		return fmt.Errorf("--config %s: the flag was renamed: use --preset NAME (%s) for a preset, or --config-file FILE for a YAML/JSON settings file",
			o.legacy, strings.Join(run.PresetNames(), ", "))
	}
	if f.Changed("seeds") {
		var err error
		if o.seeds, err = parseSeeds(o.seedList); err != nil {
			return err
		}
		switch {
		case f.Changed("seed"):
			return fmt.Errorf("--seed and --seeds: give one (--seeds %s runs one run per seed)", o.seedList)
		case o.resume != "":
			return fmt.Errorf("--seeds cannot be used with --resume: resume each seed's run directory on its own")
		}
	}
	if f.Changed("name") && (o.name == "" || o.name == "." || o.name == ".." || strings.ContainsAny(o.name, `/\`) || strings.ContainsRune(o.name, 0)) {
		return fmt.Errorf("--name %q: want one path element (no / or \\, not . or ..): the run directory is --out/NAME-<time>", o.name)
	}
	// Paths given as flags are made absolute, so the run can be resumed from elsewhere.
	if err := o.flagCfg.AbsPaths(); err != nil {
		return err
	}
	if o.allowBackend && o.resume == "" {
		return fmt.Errorf("--allow-backend-change only applies with --resume")
	}
	if o.resume != "" {
		for _, n := range []string{"preset", "config-file", "out", "name"} {
			if f.Changed(n) {
				return fmt.Errorf("--%s cannot be used with --resume: a resumed run keeps the settings in %s", n, filepath.Join(o.resume, "config.json"))
			}
		}
	}
	return nil
}

// movedInputHint is the error for a resumed run (in dir, its config.json
// recorded) whose dataset or used Koopman model is not at the path cfg
// reads: a path given as a flag (--data, --koopman) that does not exist
// is named as the flag's, and a recorded one that is gone gets the flag
// that gives its new path, which the resume checks by content. Every
// missing input is named at once.
func movedInputHint(cfg, recorded run.TrainConfig, dir string) error {
	var given, gone, flags []string
	for _, in := range []struct {
		flag, what, path, was string
		used                  bool
	}{{"data", "dataset", cfg.Data, recorded.Data, true},
		{"koopman", "Koopman model", cfg.KoopmanModel, recorded.KoopmanModel, augment.NeedsKoopman(cfg.Augment)}} {
		if in.path == "" || !in.used {
			continue
		}
		if _, err := os.Stat(in.path); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if in.path != in.was {
			given = append(given, fmt.Sprintf("--%s %s: no such file or directory", in.flag, in.path))
		} else {
			gone = append(gone, fmt.Sprintf("the run's %s %s is not there", in.what, in.path))
			flags = append(flags, "--"+in.flag+" NEWPATH")
		}
	}
	switch {
	case len(given) > 0:
		return errors.New(strings.Join(given, "; "))
	case len(gone) > 0:
		return fmt.Errorf("%s: if it moved, give its new path (koopq train --resume %s %s; the run checks that it holds what it read before)",
			strings.Join(gone, ", and "), dir, strings.Join(flags, " "))
	}
	return nil
}

// apply copies the settings given as flags over cfg.
func (o *trainOptions) apply(cfg *run.TrainConfig) {
	for _, p := range run.TrainParams() {
		if o.flags.Changed(p.Flag) || changedOldName(o.flags, p.Flag) {
			p.Copy(cfg, &o.flagCfg)
		}
	}
	if o.flags.Changed("seed") {
		cfg.KoopmanTrain.Seed = cfg.CQL.Seed
	}
}

// config is the run's settings: those of the run --resume continues, with
// the flags given (dir is that run's directory, recorded its config.json
// as read, for run.TrainOptions.Recorded), else the preset, then
// --config-file, then the flags (dir and recorded are nil).
func (o *trainOptions) config() (cfg run.TrainConfig, dir *run.Dir, recorded *run.TrainConfig, err error) {
	if o.resume != "" {
		if dir, err = run.OpenDir(o.resume); err != nil {
			return cfg, nil, nil, err
		}
		// config.json is read once: the flags change cfg, recorded
		// stays as the file says.
		recorded = new(run.TrainConfig)
		if err := dir.ReadJSONCopies("config.json", recorded, &cfg); err != nil {
			return cfg, nil, nil, err
		}
		o.apply(&cfg)
		if err := run.CheckResume(*recorded, cfg); err != nil {
			return cfg, nil, nil, err
		}
		if augment.Label(cfg.Augment) == augment.Label(recorded.Augment) {
			cfg.Augment = recorded.Augment // --augment cql on a run that says none
		}
		return cfg, dir, recorded, nil
	}
	base := o.preset
	if base == "" {
		base = "paper"
	}
	if cfg, err = run.Preset(base); err != nil {
		return cfg, nil, nil, err
	}
	before := cfg
	var inFile map[string]bool // the keys the config file sets
	if o.configFile != "" {
		if cfg, inFile, err = run.LoadConfigFileKeys(o.configFile, cfg, o.preset); err != nil {
			return cfg, nil, nil, err
		}
	}
	o.apply(&cfg)
	if err := cfg.AbsPaths(); err != nil {
		return cfg, nil, nil, err
	}
	// Intervals nobody chose follow the run's length; one set by a flag
	// or in the config file (even to the preset's value) stays.
	run.ScaleIntervals(&cfg, o.flags.Changed("log-every") || inFile["log_every"] || cfg.LogEvery != before.LogEvery,
		o.flags.Changed("eval-every") || inFile["eval_every"] || cfg.EvalEvery != before.EvalEvery)
	return cfg, nil, nil, nil
}

// run settles the settings, checks them with the data, environment and
// models, then trains one run, or one per --seeds seed; validate has
// passed.
func (o *trainOptions) run(parent context.Context) error {
	cfg, dir, recorded, err := o.config()
	if err != nil {
		return err
	}
	var data *dataset.Dataset
	if cfg.Env == "" && cfg.Data != "" {
		// No --env: the env the dataset records (koopq collect
		// records it), else none: training without a simulator.
		if cfg, data, err = run.ResolveEnv(cfg, nil); err != nil {
			return err
		}
		if data != nil {
			rec := data.Meta["env"]
			if cfg.Env == run.EnvNone {
				fmt.Printf("env none: dataset %s records no known environment (metadata/env %q): training without a simulator, "+
					"with offline diagnostics instead of evaluations (give --env to evaluate in one: %s)\n", cfg.Data, rec, strings.Join(env.Names(), ", "))
			} else {
				fmt.Printf("env %s (from the dataset's metadata/env %q)\n", cfg.Env, rec)
			}
		}
	}
	if dir != nil {
		if err := movedInputHint(cfg, *recorded, dir.Path); err != nil {
			return err
		}
	}
	// Validate settings, data, environment and models before any side
	// effect; TrainWith takes the result instead of checking again.
	checked, err := run.CheckTrain(cfg, data)
	if err != nil {
		return err
	}
	for _, w := range cfg.Unused() {
		fmt.Fprintf(os.Stderr, "koopq: warning: %s\n", w)
	}
	data = checked.Dataset()
	if o.augCache != "" {
		if st, err := os.Stat(o.augCache); err == nil && !st.IsDir() {
			return fmt.Errorf("--augment-cache %s: not a directory (the precompute cache files go there)", o.augCache)
		} else if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("--augment-cache: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal kills at once
	}()
	opts := run.TrainOptions{Resume: o.resume != "", AugmentCache: o.augCache, AllowBackendChange: o.allowBackend, Checked: checked,
		Recorded: recorded}
	if dir != nil {
		_, err := trainOne(ctx, cfg, dir, data, opts)
		return err
	}
	if o.seeds == nil {
		name := o.name
		if name == "" {
			name = fmt.Sprintf("%s-%s-s%d", cfg.Env, augment.Label(cfg.Augment), cfg.CQL.Seed)
		}
		if dir, err = run.NewDir(o.outRoot, name); err != nil {
			return err
		}
		_, err := trainOne(ctx, cfg, dir, data, opts)
		return err
	}
	return trainSeeds(ctx, cfg, o.seeds, o.outRoot, o.name, data, opts)
}

// deprecatedTrainFlags maps the old names of train flags, still accepted
// (hidden from the help, with a deprecation note when used), to the
// current ones.
var deprecatedTrainFlags = map[string]string{
	"koopman-epochs": "koopman-max-epochs", // koopman train --max-epochs, koopman_train.max_epochs
}

// changedOldName tells whether flag was set under one of its old names.
func changedOldName(f *pflag.FlagSet, flag string) bool {
	for old, cur := range deprecatedTrainFlags {
		if cur == flag && f.Changed(old) {
			return true
		}
	}
	return false
}

// parseSeeds reads --seeds: comma-separated seeds, none repeated.
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seeds %s: %q is not a seed; want comma-separated whole numbers, e.g. 0,1,2", s, p)
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("--seeds %s: seed %d is given twice", s, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// trainOne trains (or resumes) the run in dir and prints its summary. The
// run directory is printed first, so that it is known while the run trains.
func trainOne(ctx context.Context, cfg run.TrainConfig, dir *run.Dir, data *dataset.Dataset, opts run.TrainOptions) (*run.TrainResult, error) {
	fmt.Printf("run directory: %s\n", dir.Path)
	bars := &phaseBars{}
	opts.Progress = bars.update
	res, err := run.TrainWith(ctx, cfg, dir, data, opts)
	bars.close()
	var intr *run.Interrupted
	if errors.As(err, &intr) && errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("%w; continue with: koopq train --resume %s", err, dir.Path)
	}
	if _, serr := os.Stat(dir.Path); err != nil && serr == nil {
		return nil, fmt.Errorf("%w (run directory %s)", err, dir.Path)
	} else if err != nil {
		return nil, err // nothing was kept
	}
	if res.AlreadyFinished {
		fmt.Printf("run %s is already finished (%d steps); nothing to do (a larger --steps extends it)\n", dir.Path, res.Steps)
	}
	fmt.Printf("%s on %s, augment %s, seed %d: %d steps (%d behaviour cloning, %d CQL)", cfg.Env, cfg.Data, augment.Label(cfg.Augment),
		cfg.CQL.Seed, res.Steps, res.Phases.BC, res.Phases.CQL)
	if res.StepsPerSec > 0 && !res.AlreadyFinished {
		fmt.Printf(" in %.0fs (%.1f steps/s)", res.WallSeconds, res.StepsPerSec)
	}
	if o := res.Offline; o != nil {
		fmt.Printf("\nno simulator (--env none): on %s held out (%d transitions): mean Q(s, a) %.4g, TD error %.4g, "+
			"log-likelihood %.4g, action MSE %.4g\n", plural.Count(o.HoldoutEpisodes, "episode"), o.Transitions,
			o.QData, o.TDError, o.LogLikelihood, o.ActionMSE)
		fmt.Printf("run directory %s (results.json, history.json, policy.safetensors)\n", dir.Path)
		return res, nil
	}
	fmt.Printf("\nfinal return %.2f ± %.2f over %s", res.Final.Mean, res.Final.Std, plural.Count(res.Final.Episodes, "episode"))
	if !math.IsNaN(float64(res.Final.Normalized)) {
		fmt.Printf(", normalized score %.1f ± %.1f", res.Final.Normalized, res.Final.NormalizedStd)
	}
	if sr := float64(res.Final.SuccessRate); !math.IsNaN(sr) {
		fmt.Printf(", success rate %.1f%%", 100*sr)
	}
	fmt.Printf("\nrun directory %s (results.json, policy.safetensors)\n", dir.Path)
	return res, nil
}

// trainSeeds is --seeds: one run per seed, in turn, in run directories
// <name>-s<seed> (name defaults to <env>-<augment>), then each seed's
// final score and their mean ± standard deviation. A failed or interrupted
// run stops the rest; the error says which seeds did not run.
func trainSeeds(ctx context.Context, cfg run.TrainConfig, seeds []uint64, outRoot, name string, data *dataset.Dataset, opts run.TrainOptions) error {
	if name == "" {
		name = fmt.Sprintf("%s-%s", cfg.Env, augment.Label(cfg.Augment))
	}
	type done struct {
		seed  uint64
		score float64 // normalized score
		ret   float64 // mean return
		succ  float64 // success rate in percent (NaN: the env has no success test)
		dir   string
	}
	var runs []done
	normalized := true
	for i, s := range seeds {
		c := cfg
		c.CQL.Seed, c.KoopmanTrain.Seed = s, s
		fmt.Printf("seed %d (%d of %d)\n", s, i+1, len(seeds))
		dir, err := run.NewDir(outRoot, fmt.Sprintf("%s-s%d", name, s))
		if err != nil {
			return err
		}
		res, err := trainOne(ctx, c, dir, data, opts)
		if err != nil {
			if rest := seeds[i+1:]; len(rest) > 0 {
				err = fmt.Errorf("seed %d: %w; seeds %s not run", s, err, joinSeeds(rest))
			} else {
				err = fmt.Errorf("seed %d: %w", s, err)
			}
			return err
		}
		v := float64(res.Final.Normalized)
		if math.IsNaN(v) {
			normalized = false
		}
		succ := math.NaN()
		if res.Final.Successes != nil {
			succ = 100 * float64(res.Final.SuccessRate)
		}
		runs = append(runs, done{s, v, res.Final.Mean, succ, dir.Path})
	}
	what := "normalized score"
	if !normalized {
		// An env without reference returns: its success rate where it has
		// a success test (as koopq report scores it), else raw returns.
		what = "success rate (%)"
		for _, r := range runs {
			if math.IsNaN(r.succ) {
				what = "return"
			}
		}
		for i := range runs {
			runs[i].score = runs[i].ret
			if what != "return" {
				runs[i].score = runs[i].succ
			}
		}
	}
	var sum, sq float64
	for _, r := range runs {
		sum += r.score
	}
	mean := sum / float64(len(runs))
	for _, r := range runs {
		sq += (r.score - mean) * (r.score - mean)
	}
	std := 0.0
	if len(runs) > 1 {
		std = math.Sqrt(sq / float64(len(runs)-1))
	}
	fmt.Printf("\n%s, augment %s, %s: final %s %.1f ± %.1f (mean ± sample std)\n", cfg.Env, augment.Label(cfg.Augment),
		plural.Count(len(runs), "seed"), what, mean, std)
	for _, r := range runs {
		fmt.Printf("  seed %-4d %8.1f  %s\n", r.seed, r.score, r.dir)
	}
	return nil
}

func joinSeeds(s []uint64) string {
	p := make([]string, len(s))
	for i, v := range s {
		p[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(p, ",")
}

// flagGroup is a heading of a command's help and its flags, in order.
type flagGroup struct {
	title string
	flags []string
}

// trainFlagGroups sorts train's flags under headings: the five that every
// run sets first, then data, method, CQL, Koopman, evaluation and output.
// Settings of run.TrainParams go by their config key.
func trainFlagGroups() []flagGroup {
	main := []string{"data", "env", "augment", "steps", "seed"}
	g := []flagGroup{
		{"Main flags", main},
		{"Data", nil},
		{"Method (settings come from --preset, then --config-file, then flags)", []string{"preset", "config-file", "seeds"}},
		{"CQL", nil},
		{"Koopman", nil},
		{"Evaluation", nil},
		{"Output", []string{"out", "name", "resume", "quiet", "augment-cache", "allow-backend-change"}},
	}
	for _, p := range run.TrainParams() {
		if slices.Contains(main, p.Flag) {
			continue
		}
		i := 2 // method: augment, gaussian_sigma, augment_params.*
		switch k := p.Key; {
		case k == "data" || strings.HasPrefix(k, "read_options.") || p.Flag == "read-timeout":
			i = 1
		case strings.HasPrefix(k, "cql."):
			i = 3
		case strings.HasPrefix(k, "koopman"):
			i = 4
		case strings.HasPrefix(k, "eval_"):
			i = 5
		case k == "log_every" || k == "checkpoint_every":
			i = 6
		}
		g[i].flags = append(g[i].flags, p.Flag)
	}
	return g
}

// groupedUsage prints a command's usage with its flags under the groups'
// headings (in the groups' order; flags in no group last, under "Other
// flags"), then the global flags.
func groupedUsage(groups []flagGroup) func(*cobra.Command) error {
	return func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
		local := c.LocalFlags()
		seen := map[string]bool{}
		section := func(title string, names []string) {
			fs := pflag.NewFlagSet(title, pflag.ContinueOnError)
			fs.SortFlags = false
			for _, n := range names {
				if fl := local.Lookup(n); fl != nil && !fl.Hidden && !seen[n] {
					fs.AddFlag(fl)
					seen[n] = true
				}
			}
			if fs.HasFlags() {
				fmt.Fprintf(w, "\n%s:\n%s", title, fs.FlagUsages())
			}
		}
		for _, g := range groups {
			section(g.title, g.flags)
		}
		var rest []string
		local.VisitAll(func(fl *pflag.Flag) { rest = append(rest, fl.Name) })
		section("Other flags", rest)
		if c.HasAvailableInheritedFlags() {
			fmt.Fprintf(w, "\nGlobal flags:\n%s", c.InheritedFlags().FlagUsages())
		}
		return nil
	}
}
