package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/collect"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/manip"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

// collectOptions holds the flag values of 'koopq collect'.
type collectOptions struct {
	envName     string
	out         string
	sacSteps    int
	transitions int
	evalEvery   int
	seed        uint64
	hidden      []int
	medium      float64
	runDir      string
	resume      bool
	allowBLAS   bool
	fromRun     string
	mediumScore float64
	ckptEvery   int
	export      string
	mediumBy    string
	mediumBand  float64
	mediumEps   int
	expertBy    string
	goalPolicy  string
	episodes    int
	noise       float64
	randomFrac  float64

	flags *pflag.FlagSet // the command's flags, to tell which were given
}

// newCollectCmd makes 'koopq collect'.
func newCollectCmd() *cobra.Command {
	o := new(collectOptions)
	*o = defaultCollectOptions()
	cmd := &cobra.Command{
		Use:   "collect [DATASET...]",
		Short: "Make D4RL-style datasets: from committed SAC policies (hopper-medium-v2, ...), a resumable 1M-step SAC run, or a small in-memory SAC pipeline",
		Long: `collect has three modes.

1. D4RL datasets by name (no training):
     koopq collect hopper-medium-v2 walker2d-expert-v2 --out data/ [--transitions N] [--seed S]
   writes data/<name>.hdf5 in D4RL v2's layout (observations, actions, rewards,
   next_observations, terminals, timeouts, infos/qpos, infos/qvel,
   infos/action_log_probs, metadata/*). Names: <env>-<kind>-v2 with env hopper,
   halfcheetah, walker2d (ant with --from-run) and kind
     random         a randomly initialized SAC actor (seeded by --seed)
     medium         the committed SAC medium policy (first snapshot of the SAC run
                    whose deterministic return reached D4RL's medium level)
     expert         the committed final policy of the 1M-step SAC run
     medium-expert  medium (cut after its last complete episode) then expert
     medium-replay  the SAC run's replay buffer up to the medium snapshot  (needs --from-run)
     full-replay    the SAC run's whole replay buffer                      (needs --from-run)
   Policies act stochastically, as D4RL's did. The bytes depend only on the
   name, --transitions and --seed. With --from-run DIR the policies and replay
   buffer come from that SAC run directory instead of the committed files.

   AntMaze datasets (D4RL's recipe: a goal-reaching ant policy steered
   through the maze by a waypoint planner, action noise N(0, 0.2²),
   1000-step episodes, rewards relabelled to the evaluation goal):
     antmaze-umaze-v2                  fixed start and goal
     antmaze-umaze-diverse-v2, antmaze-medium-diverse-v2, antmaze-large-diverse-v2
                                       random starts and goals
     antmaze-medium-play-v2, antmaze-large-play-v2
                                       random starts, hand-picked goals
   with keys observations, actions, rewards, terminals, timeouts,
   infos/goal, infos/qpos, infos/qvel, metadata/*. The goal-reaching policy
   is the committed one, or --goal-policy FILE (a snapshot of a
   'koopq collect --env antgoal --run-dir DIR' run).

   Manipulation datasets (MetaWorld- and RoboSuite-style tasks of koopq's
   own arms): the task's scripted controller with action noise N(0, --noise²) clipped to
   [-1, 1], except a --random-fraction share of the episodes (picked per
   episode from the seed) acted by uniformly random actions in [-1, 1];
   --episodes episodes of 500 steps (timeouts, never terminals), with keys
   observations, actions, rewards, next_observations, terminals, timeouts,
   infos/success (1 where the task's success test holds after the step),
   metadata/*. Per-task defaults of --noise and --random-fraction, chosen
   so that about half the episodes reach the goal:
` + manipRecipeHelp() + `
   A task without a row gets noise ` + fmt.Sprint(collect.DefaultManipNoise) + ` and no random episodes; the flags
   override the table.

2. The SAC run that makes the behaviour policies (D4RL's recipe, resumable):
     koopq collect --env hopper --run-dir DIR [--sac-steps 1000000] [--seed 0]
     koopq collect --run-dir DIR --resume          # after an interruption (even kill -9)
   It evaluates and saves the actor every --snapshot-every steps, picks the
   medium policy online (--medium-score, default D4RL's medium dataset level;
   --medium-by stochastic: the first snapshot whose stochastic return is within
   --medium-band normalized points of it; deterministic: the first whose
   deterministic return reaches it),
   keeps every transition, and checkpoints every --checkpoint-every steps.
     koopq collect --run-dir DIR --export-policies policies/data
   copies its medium/expert policies into the committed set (manifest.json).

3. Without DATASET or --run-dir: the small in-memory pipeline (classic control,
   toy scale): SAC for --sac-steps, then random/medium/expert/medium-replay/
   medium-expert datasets of --transitions rows in --out.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return err
			}
			return o.run(cmd.Context(), args)
		},
	}
	o.flags = cmd.Flags()
	collectParams().MustRegister(cmd.Flags(), o, defaultCollectOptions())
	return cmd
}

// manipRecipeHelp lists each manipulation dataset's default noise and
// random fraction for collect's help, one indented line per task.
func manipRecipeHelp() string {
	var b strings.Builder
	for _, n := range collect.ManipDatasetNames() {
		r, own := collect.ManipDefaultRecipe(n)
		note := ""
		if !own {
			note = "  (no row: the generic default)"
		}
		fmt.Fprintf(&b, "     %-27s --noise %-4g --random-fraction %g%s\n", n, r.Noise, r.RandomFraction, note)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// defaultCollectOptions is the flag defaults (the in-memory pipeline's
// sizes; the --run-dir recipe run and D4RL names have their own, applied
// when the flags are not given).
func defaultCollectOptions() collectOptions {
	return collectOptions{envName: "pendulum", out: "data", sacSteps: 20000, transitions: 100000, evalEvery: 1000,
		hidden: []int{256, 256}, medium: 1.0 / 3, mediumBand: collect.D4RLMediumBand, expertBy: "final", ckptEvery: 10000,
		episodes: collect.DefaultManipEpisodes}
}

// collectParams is the table of 'koopq collect' settings. Checks that
// depend on the mode (--medium-level in the in-memory pipeline, flags a
// resumed run cannot change) are code in validate.
func collectParams() param.Table[collectOptions] {
	type o = collectOptions
	return param.Table[o]{
		param.New("env", "", "environment (see 'koopq eval --help' for names)", func(o *o) any { return &o.envName }, param.AnyValue),
		param.New("out", "", "output directory for datasets", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("sac-steps", "", "online SAC environment steps (the --run-dir recipe run defaults to 1000000)", func(o *o) any { return &o.sacSteps }, param.Positive),
		param.New("transitions", "", "transitions in the random, medium and expert datasets (default 1000000 for D4RL names, as D4RL)", func(o *o) any { return &o.transitions }, param.Positive),
		param.New("snapshot-every", "", "SAC steps between policy snapshots (the --run-dir recipe run defaults to 5000)", func(o *o) any { return &o.evalEvery }, param.Positive),
		param.New("seed", "", "random seed (SAC run, or dataset rollouts)", func(o *o) any { return &o.seed }, param.AnyValue),
		param.New("hidden", "", "SAC hidden layer widths, comma-separated (e.g. 256,256)", func(o *o) any { return &o.hidden }, param.Positive),
		param.New("medium-level", "", "in-memory mode: medium policy's level between random (0) and expert (1) return", func(o *o) any { return &o.medium }, param.AnyValue),
		param.New("run-dir", "", "directory of the resumable D4RL-recipe SAC run (checkpoints, snapshots, replay buffer)", func(o *o) any { return &o.runDir }, param.AnyValue),
		param.New("resume", "", "continue the SAC run in --run-dir from its last checkpoint", func(o *o) any { return &o.resume }, param.AnyValue),
		param.New("allow-backend-change", "", "with --resume: continue a run made under another GEMM backend/kernel "+
			"(no longer bit-identical to an uninterrupted run; recorded in result.json's blas_history)", func(o *o) any { return &o.allowBLAS }, param.AnyValue),
		param.New("from-run", "", "take policies and replay buffer for dataset names from this SAC run directory", func(o *o) any { return &o.fromRun }, param.AnyValue),
		param.New("medium-score", "", "D4RL-normalized return at which the run picks its medium policy (default: D4RL v2's medium dataset: hopper 44, halfcheetah 41, walker2d 62)", func(o *o) any { return &o.mediumScore }, param.NonNegative),
		param.New("medium-by", "", "medium rule: stochastic (first snapshot whose stochastic return is within --medium-band of the level; default for new runs) or deterministic (first whose deterministic return reaches it); with --from-run/--export-policies it overrides the run's rule", func(o *o) any { return &o.mediumBy }, param.OneOf("", "stochastic", "deterministic")),
		param.New("medium-band", "", "half-width of the stochastic medium rule's band, in D4RL-normalized points", func(o *o) any { return &o.mediumBand }, param.NonNegative),
		param.New("expert-by", "", fmt.Sprintf("with --export-policies: the expert is the run's final actor (final, D4RL's rule) or the best of its %d "+
			"snapshots with the highest recorded stochastic returns, re-measured over --medium-episodes (default 50) episodes (best)", collect.ExpertCandidates), func(o *o) any { return &o.expertBy }, param.OneOf("final", "best")),
		param.New("medium-episodes", "", "stochastic episodes per snapshot until the medium policy is chosen (new runs: default 50); with --from-run/--export-policies: re-measure each snapshot's stochastic return over this many episodes before applying the medium rule (0: the run's own estimates)", func(o *o) any { return &o.mediumEps }, param.NonNegative),
		param.New("checkpoint-every", "", "SAC steps between checkpoints of the --run-dir run", func(o *o) any { return &o.ckptEvery }, param.Positive),
		param.New("export-policies", "", "copy the medium/expert policies of --run-dir into this directory and its manifest.json (how policies/data is made)", func(o *o) any { return &o.export }, param.AnyValue),
		param.New("episodes", "", "episodes of 500 steps in each manipulation dataset (metaworld-… and robosuite-… names)", func(o *o) any { return &o.episodes }, param.Positive),
		param.New("noise", "", "std of the Gaussian action noise of manipulation datasets (metaworld-… and robosuite-… names), before clipping to [-1, 1] (default: the task's, see above)", func(o *o) any { return &o.noise }, param.NonNegative),
		param.New("random-fraction", "", "share of a manipulation dataset's episodes acted by uniformly random actions instead of the noisy scripted controller (default: the task's, see above)", func(o *o) any { return &o.randomFrac }, param.Fraction),
		param.New("goal-policy", "", "goal-reaching ant policy file (e.g. DIR/snapshots/actor-NNNNNNN.safetensors of a --env antgoal run) that steers AntMaze collection; default: the committed one", func(o *o) any { return &o.goalPolicy }, param.AnyValue),
	}
}

// collectMode is which of collect's modes its arguments and flags ask for.
type collectMode int

const (
	collectDatasets collectMode = iota // D4RL dataset names
	collectExport                      // --export-policies
	collectSACRun                      // --run-dir (and --resume)
	collectInMemory                    // the small in-memory pipeline
)

// mode tells collect's mode from the dataset names and flags.
func (o *collectOptions) mode(args []string) collectMode {
	switch {
	case len(args) > 0:
		return collectDatasets
	case o.export != "":
		return collectExport
	case o.resume || o.runDir != "":
		return collectSACRun
	}
	return collectInMemory
}

// transitionsOr is --transitions, or def when it was not given.
func (o *collectOptions) transitionsOr(def int) int {
	if !o.flags.Changed("transitions") {
		return def
	}
	return o.transitions
}

// validate checks the flags before any work: those of every mode, then
// those of the mode the arguments ask for.
func (o *collectOptions) validate(args []string) error {
	if err := firstErr(needWidths("hidden", o.hidden), collectParams().Validate(o)); err != nil {
		return err
	}
	if o.flags.Changed("expert-by") && o.export == "" {
		return fmt.Errorf("--expert-by chooses the exported expert: it needs --export-policies")
	}
	if o.allowBLAS && !o.resume {
		return fmt.Errorf("--allow-backend-change only applies with --resume")
	}
	if (o.flags.Changed("episodes") || o.flags.Changed("noise") || o.flags.Changed("random-fraction")) && !slices.ContainsFunc(args, collect.IsManipDataset) {
		return fmt.Errorf("--episodes, --noise and --random-fraction size and perturb manipulation datasets: give their names (e.g. koopq collect %s)",
			strings.Join(collect.ManipDatasetNames(), " "))
	}
	if o.flags.Changed("transitions") && len(args) > 0 && !slices.ContainsFunc(args, func(n string) bool { return !collect.IsManipDataset(n) }) {
		return fmt.Errorf("--transitions does not size manipulation datasets: give --episodes (of %d steps)", manip.MaxEpisodeSteps)
	}
	if o.goalPolicy != "" && len(args) == 0 {
		return fmt.Errorf("--goal-policy steers AntMaze collection: give AntMaze dataset names (e.g. koopq collect antmaze-umaze-v2 --goal-policy %s)", o.goalPolicy)
	}
	switch o.mode(args) {
	case collectDatasets:
		if o.runDir != "" || o.resume {
			return fmt.Errorf("--run-dir/--resume run SAC; give either dataset names or --run-dir, not both")
		}
		if o.flags.Changed("env") {
			return fmt.Errorf("--env is not used with dataset names (the name says the env)")
		}
		for _, fl := range []string{"sac-steps", "snapshot-every", "checkpoint-every", "hidden", "medium-level"} {
			if o.flags.Changed(fl) {
				return fmt.Errorf("--%s is not used with dataset names: they roll out committed policies (or --from-run's); "+
					"it sets up a SAC run (--run-dir) or the in-memory pipeline (--env without names)", fl)
			}
		}
	case collectExport:
		if o.runDir == "" {
			return fmt.Errorf("--export-policies needs --run-dir DIR (the SAC run to take the policies from)")
		}
	case collectSACRun:
		return o.validateSACRun()
	case collectInMemory:
		return o.validateInMemory()
	}
	return nil
}

// validateSACRun checks the flags of a --run-dir run, new or resumed.
func (o *collectOptions) validateSACRun() error {
	if o.runDir == "" {
		return fmt.Errorf("--resume needs --run-dir DIR (the run to continue)")
	}
	if o.resume {
		if _, err := os.Stat(filepath.Join(o.runDir, "config.json")); err != nil {
			return fmt.Errorf("--run-dir %s holds no run to resume (no config.json): start one without --resume", o.runDir)
		}
		for _, fl := range []string{"env", "sac-steps", "seed", "hidden", "snapshot-every", "medium-score", "checkpoint-every", "medium-by", "medium-band", "medium-episodes"} {
			if o.flags.Changed(fl) {
				return fmt.Errorf("--%s cannot change a run being resumed (its config is %s/config.json)", fl, o.runDir)
			}
		}
		return nil
	}
	if !o.flags.Changed("env") {
		return fmt.Errorf("--run-dir starts a SAC run: give --env (hopper, halfcheetah, walker2d, ...)")
	}
	return nil
}

// validateInMemory checks everything the in-memory pipeline needs, before
// --out is made.
func (o *collectOptions) validateInMemory() error {
	if o.fromRun != "" {
		return fmt.Errorf("--from-run takes dataset names (e.g. koopq collect hopper-medium-replay-v2 --from-run %s)", o.fromRun)
	}
	if !(o.medium > 0 && o.medium < 1) {
		return fmt.Errorf("--medium-level %v: must lie strictly between 0 (random) and 1 (expert)", o.medium)
	}
	if o.sacSteps < o.evalEvery {
		return fmt.Errorf("--sac-steps %d is below --snapshot-every %d: SAC would take no snapshot to pick the medium and expert policies from", o.sacSteps, o.evalEvery)
	}
	e, err := env.Make(o.envName)
	if err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	if _, err := sac.Scale(e); err != nil { // SAC needs continuous actions
		return fmt.Errorf("--env %s: %w", o.envName, err)
	}
	// The SAC replay buffer, then five datasets (medium-expert twice the rows).
	n := o.transitionsOr(100000)
	if err := run.CheckCollectMemory(fmt.Sprintf("--transitions %d with --sac-steps %d", n, o.sacSteps), o.envName, float64(o.sacSteps)+6*float64(n)); err != nil {
		return err
	}
	return needOutDir("out", o.out)
}

// run does the work of the mode the arguments ask for; validate has passed.
func (o *collectOptions) run(ctx context.Context, args []string) error {
	switch o.mode(args) {
	case collectDatasets:
		return o.runDatasets(ctx, args)
	case collectExport:
		return o.runExport()
	case collectSACRun:
		return o.runSAC(ctx)
	}
	return o.runInMemory(ctx)
}

// runDatasets writes the D4RL datasets named by args.
func (o *collectOptions) runDatasets(ctx context.Context, args []string) error {
	progress, finish := stageBars()
	opts := collect.D4RLOptions{Out: o.out, Transitions: o.transitionsOr(1_000_000), Seed: o.seed, FromRun: o.fromRun,
		MediumBy: o.mediumBy, MediumBand: o.mediumBand, MediumEpisodes: o.mediumEps, GoalPolicy: o.goalPolicy}
	if o.flags.Changed("episodes") {
		opts.ManipEpisodes = o.episodes
	}
	if o.flags.Changed("noise") {
		opts.ManipNoise = &o.noise
	}
	if o.flags.Changed("random-fraction") {
		opts.ManipRandomFraction = &o.randomFrac
	}
	files, err := collect.WriteD4RLDatasets(ctx, args, opts, progress)
	finish()
	for _, fi := range files {
		if fi.SuccessEpisodes != nil {
			fmt.Printf("%-28s %8d rows %6d episodes  %5.1f%% reach the goal (%d)  mean return %8.1f  %5.1fs  %s\n",
				fi.Name, fi.Rows, fi.Episodes, fi.Normalized, *fi.SuccessEpisodes, fi.MeanReturn, fi.Seconds, fi.Path)
			continue
		}
		if collect.IsAntMazeDataset(fi.Name) {
			fmt.Printf("%-28s %8d rows %6d episodes  %5.1f%% reach the evaluation goal  %5.1fs  %s\n",
				fi.Name, fi.Rows, fi.Episodes, fi.Normalized, fi.Seconds, fi.Path)
			continue
		}
		fmt.Printf("%-28s %8d rows %6d episodes  mean return %8.1f  normalized %6.1f  %5.1fs  %s\n",
			fi.Name, fi.Rows, fi.Episodes, fi.MeanReturn, fi.Normalized, fi.Seconds, fi.Path)
	}
	if err != nil {
		return err
	}
	p, err := collect.RecordD4RLFiles(o.out, files)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s\n", p)
	return nil
}

// runExport copies the medium/expert policies of --run-dir into
// --export-policies.
func (o *collectOptions) runExport() error {
	es, err := collect.ExportPolicies(o.runDir, o.export, o.mediumBy, o.mediumBand, o.mediumEps, o.expertBy)
	if err != nil {
		return err
	}
	for _, e := range es {
		fmt.Printf("%s %s: SAC step %d, return %.1f (stochastic %.1f) -> %s\n", e.Env, e.Role, e.SACSteps, e.Return, e.StochReturn, filepath.Join(o.export, e.File))
	}
	return nil
}

// sacRunConfig is the config of the --run-dir run: the recorded one when
// resuming, else the recipe's for --env with the flags given.
func (o *collectOptions) sacRunConfig() (sac.RunConfig, error) {
	if o.resume {
		return sac.ReadRunConfig(o.runDir)
	}
	f := o.flags
	cfg, err := collect.SACRunConfig(o.envName, o.mediumScore)
	if err != nil {
		return cfg, err
	}
	if f.Changed("sac-steps") {
		cfg.SAC.TotalSteps = o.sacSteps
	}
	if f.Changed("snapshot-every") {
		cfg.SnapshotEvery = o.evalEvery
	}
	cfg.CheckpointEvery = o.ckptEvery
	if f.Changed("medium-by") {
		cfg.MediumBy = o.mediumBy
	}
	if f.Changed("medium-episodes") {
		cfg.MediumEpisodes = o.mediumEps
	}
	if f.Changed("medium-band") {
		lo, _ := collect.MediumReturn(cfg.Env, 0)
		hi, err := collect.MediumReturn(cfg.Env, o.mediumBand)
		if err != nil {
			return cfg, err
		}
		cfg.MediumBand = hi - lo
	}
	cfg.SAC.Seed = o.seed
	cfg.SAC.Net.Hidden = o.hidden
	return cfg, cfg.Validate()
}

// runSAC starts or resumes the D4RL-recipe SAC run in --run-dir.
func (o *collectOptions) runSAC(ctx context.Context) error {
	cfg, err := o.sacRunConfig()
	if err != nil {
		return err
	}
	if err := run.CheckCollectMemory(fmt.Sprintf("--sac-steps %d (the run's replay buffer)", cfg.SAC.TotalSteps), cfg.Env, float64(cfg.SAC.TotalSteps)); err != nil {
		return err
	}
	b := newBar(cfg.SAC.TotalSteps, "sac "+cfg.Env)
	last := ""
	progress := func(p sac.RunStats) {
		if p.Snapshot != nil {
			last = fmt.Sprintf("step %d: return %.0f (stochastic %.0f)", p.Step, p.Snapshot.Return, p.Snapshot.StochReturn)
			fmt.Fprintf(os.Stderr, "\n%s, %.0f env steps/s\n", last, p.StepsPerSec)
		}
		b.set(p.Step, fmt.Sprintf("sac %s %s", cfg.Env, last))
	}
	var res *sac.RunResult
	if o.resume {
		res, err = sac.Resume(ctx, o.runDir, sac.ResumeOptions{AllowBLASChange: o.allowBLAS}, progress)
	} else {
		res, err = sac.StartRun(ctx, cfg, o.runDir, progress)
	}
	b.finish()
	if err != nil {
		return fmt.Errorf("%w (continue with: koopq collect --run-dir %s --resume)", err, o.runDir)
	}
	runDir := o.runDir
	if cfg.Env == mujoco.AntGoalName {
		fmt.Printf("goal-reaching policy: step %d, return %.1f (stochastic %.1f): %s\n", res.Expert.Step, res.Expert.Return, res.Expert.StochReturn, filepath.Join(runDir, sac.RunExpertFile))
		fmt.Printf("AntMaze data: koopq collect antmaze-umaze-v2 --goal-policy %s (or commit it: koopq collect --run-dir %s --export-policies policies/data)\n",
			filepath.Join(runDir, sac.RunExpertFile), runDir)
		return nil
	}
	if res.Medium != nil {
		fmt.Printf("medium: step %d, return %.1f (stochastic %.1f), replay %d rows\n", res.Medium.Step, res.Medium.Return, res.Medium.StochReturn, res.Medium.ReplayLen)
	} else {
		fmt.Printf("medium: no snapshot reached return %.1f\n", cfg.MediumReturn)
	}
	fmt.Printf("expert: step %d, return %.1f (stochastic %.1f)\n", res.Expert.Step, res.Expert.Return, res.Expert.StochReturn)
	fmt.Printf("wrote %s; datasets: koopq collect %s-medium-replay-v2 %s-full-replay-v2 ... --from-run %s\n",
		filepath.Join(runDir, sac.RunResultFile), cfg.Env, cfg.Env, runDir)
	return nil
}

// inMemoryConfig is the in-memory pipeline's configuration under the
// flags (collect.json records it).
func (o *collectOptions) inMemoryConfig() sac.CollectConfig {
	cfg := sac.CollectConfig{Env: o.envName, SAC: sac.DefaultConfig(o.sacSteps), EvalEvery: o.evalEvery, EvalEpisodes: 5,
		Transitions: o.transitionsOr(100000), MediumLevel: o.medium}
	cfg.SAC.Seed = o.seed
	cfg.SAC.Net.Hidden = o.hidden
	return cfg
}

// runInMemory runs the small in-memory pipeline: SAC, then five datasets
// in --out.
func (o *collectOptions) runInMemory(ctx context.Context) error {
	cfg := o.inMemoryConfig()
	progress, finish := stageBars()
	_, res, err := run.Collect(ctx, cfg, o.out, progress)
	finish()
	if err != nil {
		return err
	}
	fmt.Printf("random policy return %.1f, medium %.1f (SAC step %d), expert %.1f (SAC step %d)\n",
		res.Info.RandomReturn, res.Info.Medium.Return, res.Info.Medium.Step, res.Info.Expert.Return, res.Info.Expert.Step)
	names := make([]string, 0, len(res.Files))
	for n := range res.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("  %-14s %7d transitions  %s\n", n, res.Sizes[n], res.Files[n])
	}
	fmt.Fprintf(os.Stdout, "wrote %s/collect.json\n", o.out)
	return nil
}

// stageBars shows one progress bar per named stage of a long job: progress
// reports a stage's done of total, finish ends every bar.
func stageBars() (progress meter.Staged, finish func()) {
	bars := map[string]*bar{}
	var order []string
	progress = func(stage string, done, total int, msg string) {
		b, ok := bars[stage]
		if !ok {
			b = newBar(total, stage)
			bars[stage] = b
			order = append(order, stage)
		}
		b.set(done, msg)
	}
	finish = func() {
		for _, s := range order {
			bars[s].finish()
		}
	}
	return progress, finish
}
