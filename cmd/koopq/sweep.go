package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/internal/suggest"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

// specChecker validates spec entries against this binary: train flags by
// the train command's own flag set, envs and augmentations by their
// registries.
func specChecker() sweep.Checker {
	// flagOf checks a flag of 'koopq VERBS…': it must exist, its value must
	// parse, and where the verb's settings table has the flag (value given)
	// the value must lie in the row's range, as on the command line.
	flagOf := func(value func(name, v string) error, verbs ...string) func(name, value string) error {
		var cmd *cobra.Command
		for parent := rootCmd; parent != nil && len(verbs) > 0; verbs = verbs[1:] {
			var next *cobra.Command
			for _, c := range parent.Commands() {
				if c.Name() == verbs[0] {
					next = c
				}
			}
			parent, cmd = next, next
		}
		verb := ""
		if cmd != nil {
			verb = strings.TrimPrefix(cmd.CommandPath(), "koopq ")
		}
		return func(name, v string) error {
			if cmd == nil {
				return nil
			}
			f := cmd.Flags().Lookup(name)
			if f == nil {
				return fmt.Errorf("not a 'koopq %s' flag (see koopq %s --help)", verb, verb)
			}
			if err := value(name, v); !errors.Is(err, errNoRow) {
				return err
			}
			// A flag outside the verb's table: parse the value into the
			// command's own variable, which is harmless here, as this
			// process never runs that verb itself.
			fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.AddFlag(&pflag.Flag{Name: f.Name, Value: f.Value})
			return flagError(nil, fs.Parse([]string{"--" + name + "=" + v}))
		}
	}
	return sweep.Checker{
		Flag:             flagOf(tableValue(run.TrainParams(), run.DefaultTrainConfig()), "train"),
		CollectFlag:      flagOf(tableValue(collectParams(), defaultCollectOptions()), "collect"),
		KoopmanFlag:      flagOf(tableValue(koopmanTrainParams(), defaultKoopmanTrainOptions()), "koopman", "train"),
		KoopmanTrainFlag: isKoopmanTrainFlag,
		Train:            checkTrainArgs,
		NeedsKoopman:     augment.NeedsKoopman,
		Env: func(name string) error {
			if slices.Contains(env.Names(), name) {
				return nil
			}
			return fmt.Errorf("unknown env %q (known: %s)%s", name, strings.Join(env.Names(), ", "), suggest.Hint(name, env.Names()))
		},
		Augment: func(name string) error {
			if augment.Known(name) {
				return nil
			}
			return fmt.Errorf("unknown augment %q (known: %s)%s", name, strings.Join(augment.Names(), ", "), suggest.Hint(name, augment.Names()))
		},
	}
}

// isKoopmanTrainFlag reports whether name is a 'koopq koopman train' flag
// (sweep.Checker.KoopmanTrainFlag).
func isKoopmanTrainFlag(name string) bool {
	c, _, err := rootCmd.Find([]string{"koopman", "train"})
	return err == nil && c.Name() == "train" && c.Flags().Lookup(name) != nil
}

// expandChecker is the part of specChecker that shapes the runs a spec
// expands to (which runs use a Koopman model, and how a default one is
// trained), without the checks of flag values: what reading back a sweep's
// recorded spec needs (status, report) so that its runs are those 'sweep
// run' made, even when a later koopq checks the spec's flags otherwise.
func expandChecker() sweep.Checker {
	return sweep.Checker{KoopmanTrainFlag: isKoopmanTrainFlag, NeedsKoopman: augment.NeedsKoopman}
}

// tableValue checks one flag's value as the command line would: parsed
// into a fresh copy of def through t's own flag set, then checked against
// the row's range (Row.Check). A flag without a row in t passes here
// (errNoRow), to be parsed by the caller.
func tableValue[T any](t param.Table[T], def T) func(name, value string) error {
	return func(name, value string) error {
		row, ok := t.Lookup(name)
		if !ok {
			return errNoRow
		}
		v := def
		fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		t.MustRegister(fs, &v, def)
		if err := fs.Parse([]string{"--" + name + "=" + value}); err != nil {
			return flagError(nil, err)
		}
		return row.Check(&v)
	}
}

// errNoRow is tableValue's answer for a flag its table lacks.
var errNoRow = errors.New("no row")

// loadSpec reads and validates a spec file.
func loadSpec(path string) (*sweep.Spec, []sweep.Run, []byte, error) {
	s, runs, err := sweep.Load(path, specChecker())
	if err != nil {
		return nil, nil, nil, err
	}
	text, err := os.ReadFile(path)
	return s, runs, text, err
}

// sweepSpeeds is each run's expected training speed for 'sweep plan' and
// 'sweep run --time-limit': the --steps-per-sec values (flag), else what the
// finished runs of the spec's expansion all in out measured, else the spec's
// steps_per_second (see sweep.Speeds).
func sweepSpeeds(s *sweep.Spec, out string, all []sweep.Run, flag []string) (sweep.Speeds, error) {
	given, err := sweep.ParseSpeeds(s, flag)
	if err != nil {
		return sweep.Speeds{}, err
	}
	return sweep.NewSpeeds(s, out, all, given), nil
}

// signalContext is cancelled by SIGINT or SIGTERM; the first signal is
// announced on stderr.
func signalContext(parent context.Context, what string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "koopq: %v: %s\n", s, what)
			cancel()
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, cancel
}

// koopqBinary is the koopq binary the runs execute: --koopq, which must be
// an executable file (checked before anything starts), else this one.
func koopqBinary(flag string) (string, error) {
	if flag == "" {
		return os.Executable()
	}
	p, err := filepath.Abs(flag)
	if err != nil {
		return "", fmt.Errorf("--koopq %s: %w", flag, err)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("--koopq %s: %w", flag, unwrapPathErr(err))
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("--koopq %s: not a file (want the koopq binary the runs execute)", flag)
	case st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("--koopq %s: not executable (want the koopq binary the runs execute)", flag)
	}
	return p, nil
}

// unstampedWarning is the warning sweep run prints before it launches runs
// with a koopq binary that carries no VCS stamp: such runs record the HEAD
// of the checkout they run in as their commit, which is the binary's code
// only if it was built from that HEAD. "" for a stamped binary, or when the
// build info cannot be read (koopqBinary's caller finds a missing binary).
func unstampedWarning(bin string) string {
	if ok, err := version.Stamped(bin); err != nil || ok {
		return ""
	}
	return fmt.Sprintf("warning: %s has no VCS stamp: its runs will record the HEAD of the checkout they run in (if any) as their commit, "+
		"not the code it was built from; 'make build' (go build -buildvcs=true in a git checkout) stamps it", bin)
}

func sweepAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// newSweepCmd makes 'koopq sweep' and its subcommands plan, run, status
// and exec.
func newSweepCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run grids of trainings (datasets × methods × seeds) from a spec file: plan, run, status",
		Long: `A sweep spec (YAML) lists datasets, methods (an augmentation plus train flags) and seeds, the number of
steps, evaluation settings, named flag sets and explicit extra runs (ablations). Every run is an ordinary
'koopq train' run directory named <dataset>__<method>__s<seed> under the sweep directory, so a sweep is
resumable: finished runs are skipped, partial runs resume from their checkpoints, failed runs are reported
and retried with --retry-failed. See examples/smoke.yaml.`,
	}
	cmd.AddCommand(newSweepPlanCmd(), newSweepRunCmd(), newSweepStatusCmd(), newSweepExecCmd())
	return cmd
}

// sweepPlanOptions holds the flag values of 'koopq sweep plan', and what
// validate read: the spec, its runs and their speeds.
type sweepPlanOptions struct {
	out, order, dataRoot string
	sps                  []string
	jobs, threads        int
	timeLimit            time.Duration
	retry                bool
	only                 sweep.Selection

	spec   *sweep.Spec
	runs   []sweep.Run // the selected runs, in --order
	all    int         // the number of the spec's runs
	speeds sweep.Speeds
}

// newSweepPlanCmd makes 'koopq sweep plan'.
func newSweepPlanCmd() *cobra.Command {
	o := &sweepPlanOptions{}
	c := &cobra.Command{
		Use:   "plan SPEC",
		Short: "Validate a spec and list its runs, what must be made before them, and the CPU-hours of what is left",
		Long: `Plan validates a spec and lists its runs (or the runs --datasets, --methods and --seeds select, in
--order), then what 'sweep run' with the same flags would make first under --data-root (datasets it
collects, shared Koopman models it trains) or cannot find, and an estimate of the cost. With --out
(the sweep directory) the table gains a state column (done, partial, running, failed, pending) and
lists the runs in the order 'sweep run' starts them (runs with a checkpoint first); the runs already
done there are counted and the estimate covers only the runs left, in CPU-hours and in hours of wall
time at --jobs runs at once of --threads threads each.
With --time-limit it also shows what 'sweep run' with the same --time-limit, --jobs and --steps-per-sec
would do: when each run left would start and end, and which runs it would hold because they could not
finish in time.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := o.validate(args[0]); err != nil {
				return err
			}
			return o.run()
		},
	}
	sweepPlanParams().MustRegister(c.Flags(), o, defaultSweepPlanOptions())
	selectionFlags(c.Flags(), &o.only, &o.order)
	return c
}

// defaultSweepPlanOptions is the flag defaults (none: the spec decides).
func defaultSweepPlanOptions() sweepPlanOptions {
	return sweepPlanOptions{}
}

// sweepPlanParams is the table of 'koopq sweep plan' settings (the run
// selection flags are selectionFlags'; --threads also goes through
// sweep.CheckThreads, shared with the spec's threads, for its hint).
func sweepPlanParams() param.Table[sweepPlanOptions] {
	type o = sweepPlanOptions
	return param.Table[o]{
		param.New("out", "", "sweep directory: its finished runs are counted as done and give a measured steps/s", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("steps-per-sec", "", "training speed of one run (steps/s) for the estimate: N for every method, or NAME=N for one method or ablation (repeatable; default: measured on the finished runs in --out, else the spec's steps_per_second)", func(o *o) any { return &o.sps }, param.AnyValue),
		param.New("data-root", "", "directory relative dataset and model paths are read from, as in 'sweep run' (default: the spec's directory)", func(o *o) any { return &o.dataRoot }, param.AnyValue),
		param.New("jobs", "", "runs at once, for the wall-time estimate (0: cores / threads, as 'sweep run')", func(o *o) any { return &o.jobs }, param.NonNegative),
		param.New("threads", "", "threads per run, as in 'sweep run' (overrides the spec's threads)", func(o *o) any { return &o.threads }, param.Between(0, sweep.MaxThreads)),
		param.New("time-limit", "", "also show which runs 'sweep run --time-limit' would start, when, and which it would hold", func(o *o) any { return &o.timeLimit }, param.NonNegative),
		param.New("retry-failed", "", "with --time-limit: schedule failed runs too, as 'sweep run --retry-failed' would", func(o *o) any { return &o.retry }, param.AnyValue),
	}
}

// validate reads the spec, selects and orders its runs and checks the
// flags.
func (o *sweepPlanOptions) validate(specPath string) error {
	s, runs, _, err := loadSpec(specPath)
	if err != nil {
		return err
	}
	o.spec, o.all = s, len(runs)
	if o.speeds, err = sweepSpeeds(s, o.out, runs, o.sps); err != nil {
		return err
	}
	if runs, err = o.only.Apply(s, runs); err != nil {
		return err
	}
	if o.runs, err = o.only.Order(s, runs, o.order); err != nil {
		return err
	}
	if err := firstErr(sweep.CheckThreads(o.threads), sweepPlanParams().Validate(o)); err != nil {
		return err
	}
	if o.threads > 0 {
		s.Threads = o.threads
	}
	if o.timeLimit < 0 {
		return fmt.Errorf("--time-limit %s: must be positive", o.timeLimit)
	}
	o.dataRoot = sweepDataRoot(specPath, o.dataRoot)
	return nil
}

// run prints the plan: the runs, what must be made first, and the
// estimate for the runs left.
func (o *sweepPlanOptions) run() error {
	s, out := o.spec, o.out
	runs, _ := sweep.ResumeFirst(out, o.runs) // the order 'sweep run' starts them in
	fmt.Print(sweep.FormatPlan(runs, out))
	total := 0
	for _, r := range runs {
		total += r.Steps
	}
	if o.only.Empty() {
		fmt.Printf("%s (%s × %s × %s + %s), %d gradient steps in all, threads per run: %d\n",
			plural.Count(len(runs), "run"), plural.Count(len(s.Datasets), "dataset"), plural.Count(len(s.Methods), "method"),
			plural.Count(len(s.Seeds), "seed"), plural.Count(len(runs)-len(s.Datasets)*len(s.Methods)*len(s.Seeds), "ablation run"),
			total, s.ThreadsPerRun())
	} else {
		fmt.Printf("%d of the spec's %s (%s), %d gradient steps in all, threads per run: %d\n",
			len(runs), plural.Count(o.all, "run"), o.only, total, s.ThreadsPerRun())
	}
	left := runs
	if out != "" {
		var done int
		left, done = sweep.Left(out, runs)
		fmt.Printf("in %s: %d of these runs done, %d left (partial runs counted whole)\n", out, done, len(left))
	}
	// What `sweep run` makes (or misses) before the runs that are left.
	steps := sweep.Preparation(s, left, o.dataRoot)
	for _, st := range steps {
		fmt.Printf("first: %s → %s (koopq %s)\n", st, st.Path, strings.Join(st.Args, " "))
	}
	for _, m := range sweep.MissingData(s, left, o.dataRoot) {
		fmt.Printf("cannot run: %s\n", m)
	}
	for _, m := range sortedErrors(sweep.CheckData(left, o.dataRoot, datasetFitsEnv)) {
		fmt.Printf("cannot run: %s\n", m)
	}
	if len(steps) == 0 && len(left) > 0 {
		fmt.Printf("first: nothing to make (the datasets and Koopman models these runs use are under %s)\n", o.dataRoot)
	}
	o.estimate(left)
	return nil
}

// estimate prints the CPU-hours and wall time of the runs left and, with
// --time-limit, the schedule 'sweep run --time-limit' would follow.
func (o *sweepPlanOptions) estimate(left []sweep.Run) {
	s, out := o.spec, o.out
	if len(left) == 0 {
		fmt.Println("estimate: nothing left to run")
		return
	}
	h, unknown := sweep.CPUHours(left, o.speeds, s.ThreadsPerRun())
	if unknown == len(left) {
		fmt.Println("estimate: no steps/s known (give --steps-per-sec, steps_per_second in the spec, or --out of a sweep with finished runs)")
		return
	}
	what := "these runs"
	if out != "" {
		what = "the runs left"
	}
	j := o.jobs
	if j == 0 {
		j = sweep.DefaultJobs(s.ThreadsPerRun())
	}
	fmt.Println("steps/s per run:")
	for _, l := range o.speeds.Describe(left) {
		fmt.Println("  " + l)
	}
	fmt.Printf("estimate for %s: %.1f CPU-hours, %.1f hours of wall time at %s at once; evaluation and the steps above not included",
		what, h, h/float64(j*s.ThreadsPerRun()), plural.Count(j, "run"))
	if unknown > 0 {
		fmt.Printf("; %s with no known steps/s not included", plural.Count(unknown, "run"))
	}
	fmt.Println()
	if o.timeLimit > 0 {
		fmt.Printf("'sweep run --time-limit %s' with %s at once (start–end, hours:minutes from its start):\n", limitText(o.timeLimit), plural.Count(j, "run"))
		fmt.Print(sweep.FormatSchedule(sweep.Schedule(out, left, o.speeds, j, o.timeLimit, o.retry), o.timeLimit))
	}
}

// sweepRunOptions holds the flag values of 'koopq sweep run', what
// validate read and settled (the spec, the runs, the binary), and what run
// found on the way (the datasets that could not be prepared).
type sweepRunOptions struct {
	out, executor, dataRoot, koopqFlag string
	jobs, threads                      int
	retry, noWait, apply, allowDirty   bool
	poll, progressEvery, timeLimit     time.Duration
	runSPS                             []string
	only                               sweep.Selection
	order                              string

	flags      *pflag.FlagSet // the command's flags, to tell which were given
	specPath   string
	spec       *sweep.Spec
	text       []byte      // the spec file
	allRuns    []sweep.Run // every run of the spec
	runs       []sweep.Run // the selected runs, in --order
	speeds     sweep.Speeds
	bin        string   // the koopq binary the runs execute
	pinned     string   // the spec copy named by its hash, under <out>/.sweep
	unprepared []string // why datasets could not be prepared
}

// newSweepRunCmd makes 'koopq sweep run'.
func newSweepRunCmd() *cobra.Command {
	o := &sweepRunOptions{}
	c := &cobra.Command{
		Use:   "run SPEC",
		Short: "Execute a sweep here (local), on Slurm (one sbatch array) or on Kubernetes (one Indexed Job)",
		Long: `run executes every run of the spec that is not done yet, or of the runs that --datasets,
--methods and --seeds select (e.g. --seeds 0 first, for one finished seed of every method early);
only the datasets and Koopman models the selected runs use are made. Runs with a Koopman augmentation keep
their precompute cache in files under <data-root>/augment-cache (or $KOOPQ_AUGMENT_CACHE; set it empty for
none), so the seeds of a method compute it once ('koopq train --augment-cache').

  --executor local   --jobs runs at a time, each with --threads threads (default: fill the cores);
                     Ctrl-C (or SIGTERM) asks every trainer to checkpoint and stops with exit
                     status 75, as an interrupted 'koopq train'; rerunning continues.
                     --time-limit D (e.g. 2h50m, for a batch allocation or a working session): a run
                     starts only if its steps left, at its expected steps/s, end within D of the
                     start; the others stay pending. At D every active trainer checkpoints and exits,
                     as on Ctrl-C. A run's steps/s: --steps-per-sec for its method (NAME=N) or for
                     every method (N), else the median of the finished runs in --out of its dataset
                     and method, else of its method, else of its augmentation, else of all; else the
                     spec's steps_per_second. Once runs of its method have trained in this sweep
                     (finished, or active past 10% of their steps), their measured median replaces it.
  --executor slurm   writes <out>/.sweep/slurm/array-*.sbatch (one array task per unfinished run, --requeue,
                     logs %A_%a.out), submits it with sbatch and follows it with squeue (--no-wait: submit only).
  --executor k8s     writes <out>/.sweep/k8s/<name>.yaml: a ConfigMap with the spec, a PersistentVolumeClaim
                     (datasets under data/, runs under runs/) and an Indexed Job (completion index = run);
                     --apply runs 'kubectl apply -f' on it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args[0]); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.flags = c.Flags()
	f := c.Flags()
	sweepRunParams().MustRegister(f, o, defaultSweepRunOptions())
	selectionFlags(f, &o.only, &o.order)
	return c
}

// defaultSweepRunOptions is the flag defaults: local execution, Slurm
// polled every 5 s, progress every 30 s, dirty binaries refused unless
// $KOOPQ_ALLOW_DIRTY=1.
func defaultSweepRunOptions() sweepRunOptions {
	return sweepRunOptions{executor: "local", poll: 5 * time.Second, progressEvery: 30 * time.Second,
		allowDirty: os.Getenv("KOOPQ_ALLOW_DIRTY") == "1"}
}

// sweepRunParams is the table of 'koopq sweep run' settings. What
// depends on the executor (--time-limit only with local, what slurm and
// k8s need) is code in validate and checkExecutor.
func sweepRunParams() param.Table[sweepRunOptions] {
	type o = sweepRunOptions
	return param.Table[o]{
		param.New("out", "", "sweep directory (one subdirectory per run)", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("executor", "", "where runs execute: local, slurm or k8s", func(o *o) any { return &o.executor }, param.OneOf("local", "slurm", "k8s", "kubernetes")),
		param.New("jobs", "", "local: concurrent runs (0: cores / threads)", func(o *o) any { return &o.jobs }, param.NonNegative),
		param.New("threads", "", "threads per run (overrides the spec's threads; default 1)", func(o *o) any { return &o.threads }, param.Between(0, sweep.MaxThreads)),
		param.New("retry-failed", "", "execute runs whose last attempt failed again", func(o *o) any { return &o.retry }, param.AnyValue),
		param.New("data-root", "", "directory relative dataset paths are read from (default: the spec's directory)", func(o *o) any { return &o.dataRoot }, param.AnyValue),
		param.New("koopq", "", "koopq binary the runs execute (default: this one; for Slurm it must be visible on the nodes)", func(o *o) any { return &o.koopqFlag }, param.AnyValue),
		param.New("no-wait", "", "slurm: submit and return without following the job", func(o *o) any { return &o.noWait }, param.AnyValue),
		param.New("poll", "", "slurm: interval between squeue calls", func(o *o) any { return &o.poll }, param.Positive),
		param.New("progress-every", "", "local and slurm: interval between progress lines of running runs", func(o *o) any { return &o.progressEvery }, param.Positive),
		param.New("time-limit", "", "local: wall time this sweep may use; runs that would not finish in it are not started, and at the limit active trainers checkpoint and stop", func(o *o) any { return &o.timeLimit }, param.AnyValue),
		param.New("steps-per-sec", "", "local, with --time-limit: expected training speed of one run: N for every method, or NAME=N for one method or ablation (repeatable; default: measured on the finished runs in --out, else the spec's steps_per_second)", func(o *o) any { return &o.runSPS }, param.AnyValue),
		param.New("apply", "", "k8s: kubectl apply the manifests", func(o *o) any { return &o.apply }, param.AnyValue),
		param.New("allow-dirty", "", "run with a koopq binary built from a tree with uncommitted changes, or without a VCS stamp (default: refused, unless $KOOPQ_ALLOW_DIRTY=1): its runs could not be traced to a commit", func(o *o) any { return &o.allowDirty }, param.AnyValue),
	}
}

// k8s reports whether --executor is Kubernetes.
func (o *sweepRunOptions) k8s() bool { return o.executor == "k8s" || o.executor == "kubernetes" }

// validate reads the spec, selects its runs and checks the flags, the
// data, the binary and --out, all before any side effect.
func (o *sweepRunOptions) validate(specPath string) error {
	o.specPath = specPath
	s, runs, text, err := loadSpec(specPath)
	if err != nil {
		return err
	}
	o.spec, o.allRuns, o.text = s, runs, text
	if runs, err = o.only.Apply(s, runs); err != nil {
		return err
	}
	if o.runs, err = o.only.Order(s, runs, o.order); err != nil {
		return err
	}
	if o.out == "" {
		return fmt.Errorf("--out is required (the sweep directory)")
	}
	if err := firstErr(sweep.CheckThreads(o.threads), sweepRunParams().Validate(o)); err != nil {
		return err
	}
	if o.threads > 0 {
		s.Threads = o.threads
	}
	if o.flags.Changed("time-limit") && (o.timeLimit <= 0 || o.executor != "local") {
		return fmt.Errorf("--time-limit %v: want a positive duration, with --executor local (Slurm and Kubernetes have their own time limits: the spec's slurm.time)", o.timeLimit)
	}
	if o.flags.Changed("steps-per-sec") && !o.flags.Changed("time-limit") {
		return fmt.Errorf("--steps-per-sec %s: give it with --time-limit (it is only used to decide which runs can finish in time)", strings.Join(o.runSPS, ","))
	}
	if o.speeds, err = sweepSpeeds(s, o.out, o.allRuns, o.runSPS); err != nil {
		return err
	}
	o.dataRoot = sweepDataRoot(specPath, o.dataRoot)
	if o.bin, err = koopqBinary(o.koopqFlag); err != nil {
		return err
	}
	if err := o.checkExecutor(); err != nil {
		return err
	}
	o.out = sweepAbs(o.out)
	if st, err := os.Stat(o.out); err == nil && !st.IsDir() {
		return fmt.Errorf("--out %s is not a directory", o.out)
	}
	if err := sweep.CheckIdentities(o.out, o.runs); err != nil {
		return err
	}
	if !o.k8s() {
		if err := checkDirtyBinary(o.bin, o.allowDirty, true); err != nil {
			return err
		}
		if w := unstampedWarning(o.bin); w != "" {
			fmt.Fprintln(os.Stderr, w)
		}
	}
	if orphans := sweep.Orphans(o.out, o.allRuns); len(orphans) > 0 {
		fmt.Fprintf(os.Stderr, "warning: %s in %s %s not in the spec (a renamed or removed method or dataset?); they are left alone and out of 'koopq report': %s\n",
			plural.Count(len(orphans), "run directory"), o.out, plural.Pick(len(orphans), "is", "are"), strings.Join(orphans, ", "))
	}
	return nil
}

// checkExecutor checks --executor and what it needs: the datasets (local,
// slurm), sbatch (slurm), the whole spec, an image and kubectl (k8s).
func (o *sweepRunOptions) checkExecutor() error {
	switch o.executor {
	case "local", "slurm":
		if bad := sweep.MissingData(o.spec, o.runs, o.dataRoot); len(bad) > 0 {
			return fmt.Errorf("%s (relative paths are read from --data-root, default the spec's directory; 'koopq collect' makes datasets)",
				strings.Join(bad, "; "))
		}
	case "k8s", "kubernetes":
		if !o.only.Empty() || (o.order != "" && o.order != sweep.OrderSpec) {
			return fmt.Errorf("--executor k8s runs the whole spec in spec order (its Indexed Job covers every run; finished ones exit at once): drop --datasets, --methods, --seeds and --order")
		}
		if o.spec.Kubernetes.Image == "" {
			return fmt.Errorf("spec %s: kubernetes.image: missing (a container image with koopq on PATH)", o.specPath)
		}
		if o.apply {
			if _, err := exec.LookPath("kubectl"); err != nil {
				return fmt.Errorf("--apply: kubectl not found on PATH")
			}
		}
	default:
		return fmt.Errorf("--executor %q: want local, slurm or k8s", o.executor)
	}
	if o.executor == "slurm" {
		if _, err := exec.LookPath("sbatch"); err != nil {
			return fmt.Errorf("--executor slurm: sbatch not found on PATH (is this a Slurm login node?)")
		}
	}
	return nil
}

// run writes the spec copies under <out>/.sweep, prepares the data (local,
// slurm) and executes the runs; validate has passed.
func (o *sweepRunOptions) run(parent context.Context) error {
	// Validated: now the side effects.
	meta := filepath.Join(o.out, ".sweep")
	if err := os.MkdirAll(meta, 0o755); err != nil {
		return err
	}
	o.pinned = filepath.Join(meta, "spec-"+sweep.Hash(o.text)+".yaml")
	if err := os.WriteFile(o.pinned, o.text, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(meta, "spec.yaml"), o.text, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(meta, "data-root"), []byte(o.dataRoot+"\n"), 0o644); err != nil {
		return err
	}
	ctx, cancel := signalContext(parent, "stopping; trainers checkpoint and exit (rerun the same command to continue)")
	defer cancel()
	var deadline time.Time
	if o.timeLimit > 0 {
		deadline = time.Now().Add(o.timeLimit)
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, deadline)
		defer stop()
	}
	if !o.k8s() {
		if err := o.prepare(ctx); err != nil {
			return err
		}
	}
	switch o.executor {
	case "local":
		return o.runLocal(ctx, deadline)
	case "slurm":
		return o.runSlurm(ctx)
	}
	return o.writeKubernetes(ctx, meta)
}

// prepare makes the datasets and Koopman models the runs need, drops the
// runs of the datasets that could not be made (they stay pending), and
// refuses data that differs from what the sweep's earlier runs read.
func (o *sweepRunOptions) prepare(ctx context.Context) error {
	s := o.spec
	// Data of another env: its runs stay pending, and no Koopman model
	// is trained on it.
	wrong := sweep.CheckData(o.runs, o.dataRoot, datasetFitsEnv)
	o.runs = sweep.WithoutDatasets(o.runs, wrong)
	failed := sweep.Prepare(ctx, s, o.runs, o.dataRoot, o.bin, adoptedFitsBlock, os.Stdout)
	for name, err := range wrong {
		failed[name] = err
	}
	for _, d := range s.Datasets {
		if err := failed[d.Name]; err != nil {
			o.unprepared = append(o.unprepared, err.Error())
			fmt.Printf("skip    dataset %s: its runs stay pending: %v\n", d.Name, err)
		}
	}
	if ctx.Err() != nil {
		err := fmt.Errorf("stopped while preparing datasets (rerun the same command to continue)")
		if errors.Is(ctx.Err(), context.Canceled) { // a signal: resumable, as train's
			return &resumableError{err: err}
		}
		return err
	}
	o.runs = sweep.WithoutDatasets(o.runs, failed)
	// The data and models the runs will read must be those the
	// sweep's earlier runs read: one cell, one dataset.
	mismatch, err := sweep.CheckInputs(o.out, o.runs, o.allRuns, o.dataRoot, datasetContent)
	if err != nil {
		return err
	}
	if len(mismatch) > 0 {
		var msgs []string
		for _, d := range s.Datasets {
			if err := mismatch[d.Name]; err != nil {
				msgs = append(msgs, err.Error())
			}
		}
		return fmt.Errorf("refusing to run: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// datasetFitsEnv is the sweep's sweep.DataCheck: the data file at path
// must not record an env other than envName, the spec's env of its
// dataset (a run would refuse it after the sweep had started it, and a
// Koopman model trained for the dataset would be wasted). It reads the
// file's metadata only.
func datasetFitsEnv(path, envName string) error {
	if envName == "" || envName == run.EnvNone {
		return nil
	}
	meta, err := dataset.Metadata(path, dataset.ReadOptions{})
	if err != nil {
		return err
	}
	return run.CheckRecordedEnv(meta, path, envName, "the spec's env "+envName)
}

// datasetContent is sweep.CheckInputs' reader: the content sha256 of the
// dataset at path read as a run recorded (its config.json's read_options).
func datasetContent(path string, readOptions json.RawMessage) (string, error) {
	var ro dataset.ReadOptions
	if len(readOptions) > 0 && string(readOptions) != "null" {
		if err := json.Unmarshal(readOptions, &ro); err != nil {
			return "", fmt.Errorf("the run's read_options: %w", err)
		}
	}
	d, err := run.ReadDataset(path, ro)
	if err != nil {
		return "", err
	}
	return d.ContentSHA256(), nil
}

// notPrepared adds the datasets whose runs were left pending to err (nil:
// an error of its own when there are any).
func (o *sweepRunOptions) notPrepared(err error) error {
	if len(o.unprepared) == 0 {
		return err
	}
	msg := fmt.Sprintf("%s could not be prepared; %s runs stay pending:\n  %s", plural.Count(len(o.unprepared), "dataset"),
		plural.Pick(len(o.unprepared), "its", "their"), strings.Join(o.unprepared, "\n  "))
	if err != nil {
		return fmt.Errorf("%w\n%s", err, msg)
	}
	return errors.New(msg)
}

// runLocal executes the runs here, --jobs at a time, within --time-limit
// (deadline; zero: none).
func (o *sweepRunOptions) runLocal(ctx context.Context, deadline time.Time) error {
	s, runs := o.spec, o.runs
	allow := o.allowDirty
	lo := sweep.LocalOptions{ExecOptions: sweep.ExecOptions{Koopq: o.bin, DataRoot: o.dataRoot, Threads: s.ThreadsPerRun(),
		CheckBinary: func(bin string) error { return checkDirtyBinary(bin, allow, true) },
		RetryFailed: o.retry, AugmentCache: sweep.AugmentCacheDir(o.dataRoot)}, Jobs: o.jobs, Progress: os.Stdout,
		ProgressEvery: o.progressEvery, Deadline: deadline}
	j := lo.Jobs
	if j == 0 {
		j = sweep.DefaultJobs(s.ThreadsPerRun())
	}
	fmt.Printf("sweep %s: %s, %d at a time with %s each, in %s\n", s.Name, plural.Count(len(runs), "run"), j, plural.Count(s.ThreadsPerRun(), "thread"), o.out)
	if needsKoopman(runs) {
		if lo.AugmentCache != "" {
			fmt.Printf("Koopman precompute caches are kept in %s (up to --cache-gib each; %s= turns this off)\n", lo.AugmentCache, sweep.AugmentCacheEnv)
		} else {
			fmt.Printf("Koopman precompute caches are not kept (%s is empty): every run computes its own\n", sweep.AugmentCacheEnv)
		}
	}
	if !deadline.IsZero() {
		lo.Speeds = o.speeds
		fmt.Printf("time limit %s (until %s): runs start only if they end by then at their expected steps/s (a run with none known starts; at the limit the active ones checkpoint and stop):\n",
			o.timeLimit, deadline.Format("15:04"))
		for _, l := range o.speeds.Describe(runs) {
			fmt.Println("  " + l)
		}
	}
	sum := sweep.RunLocal(ctx, o.out, runs, lo)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		fmt.Printf("time limit %s reached: the active trainers checkpointed and stopped (rerun the same command to continue)\n", limitText(o.timeLimit))
	}
	fmt.Printf("%d done, %d skipped, %d failed, %d interrupted, %d failed before (not retried), %d running elsewhere, %d held by the time limit\n",
		sum.Done, sum.Skipped, sum.Failed, sum.Interrupted, sum.NotRetried, sum.Running, sum.Held)
	err := o.notPrepared(sum.Err())
	if err != nil && sum.Failed == 0 && errors.Is(ctx.Err(), context.Canceled) {
		// Stopped by SIGINT/SIGTERM, every run resumable: exit
		// as an interrupted 'koopq train' does.
		return &resumableError{err: err}
	}
	return err
}

// runSlurm submits the runs not done as one sbatch array and, unless
// --no-wait, follows it.
func (o *sweepRunOptions) runSlurm(ctx context.Context) error {
	s, out := o.spec, o.out
	var todo []sweep.Run
	skipped := 0
	for _, st := range sweep.Statuses(out, o.runs) {
		switch {
		case st.State == sweep.Done:
			skipped++
		case st.State == sweep.Failed && !o.retry:
			fmt.Printf("skip    %s: failed before (%s); --retry-failed submits it again\n", st.Run.Name, sweepFirstLine(st.Message))
			skipped++
		case st.State == sweep.Running:
			fmt.Printf("skip    %s: running\n", st.Run.Name)
			skipped++
		default:
			todo = append(todo, st.Run)
		}
	}
	if len(todo) == 0 {
		fmt.Printf("sweep %s: nothing to submit (%s done or skipped)\n", s.Name, plural.Count(skipped, "run"))
		return o.notPrepared(nil)
	}
	if o.retry {
		for _, r := range todo {
			_ = os.Remove(filepath.Join(sweep.SlotDir(out, r), "state.json"))
		}
	}
	so := sweep.SlurmOptions{Koopq: o.bin, SpecFile: o.pinned, DataRoot: o.dataRoot, Threads: s.ThreadsPerRun(), Wait: !o.noWait,
		AllowDirty: o.allowDirty, Poll: o.poll, Progress: os.Stdout, ProgressEvery: o.progressEvery}
	job, sum, err := sweep.SubmitSlurm(ctx, s, out, todo, so)
	if err != nil {
		return err
	}
	if o.noWait {
		fmt.Printf("follow with 'koopq sweep status %s' or 'squeue -j %s'\n", out, job.ID)
		return o.notPrepared(nil)
	}
	fmt.Printf("slurm job %s: %d done, %d not done (%d skipped before submitting)\n", job.ID, sum.Done, sum.Failed, skipped)
	if sum.Failed > 0 {
		return fmt.Errorf("%s of job %s did not finish (rerun 'koopq sweep run' to resubmit %s; failed ones need --retry-failed):\n  %s",
			plural.Count(sum.Failed, "run"), job.ID, plural.Pick(sum.Failed, "it", "them"), strings.Join(sum.Errors, "\n  "))
	}
	return o.notPrepared(nil)
}

// writeKubernetes writes the Kubernetes manifests under meta/k8s and, with
// --apply, applies them.
func (o *sweepRunOptions) writeKubernetes(ctx context.Context, meta string) error {
	s := o.spec
	y, err := sweep.KubernetesManifests(s, o.text, o.runs)
	if err != nil {
		return err
	}
	dir := filepath.Join(meta, "k8s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(dir, s.Name+".yaml")
	if err := os.WriteFile(p, y, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: ConfigMap, PersistentVolumeClaim and an Indexed Job of %s\n", p, plural.Count(len(o.runs), "run"))
	if !o.apply {
		fmt.Printf("copy the datasets onto the volume under data/, then: kubectl apply -f %s\n", p)
		return nil
	}
	kc := exec.CommandContext(ctx, "kubectl", "apply", "-f", p)
	kc.Stdout, kc.Stderr = os.Stdout, os.Stderr
	if err := kc.Run(); err != nil {
		return fmt.Errorf("kubectl apply -f %s: %w", p, err)
	}
	return nil
}

// checkDirtyBinary refuses a koopq binary whose VCS stamp says it was
// built from a tree with uncommitted changes, or, with needStamp, that
// carries no stamp (its runs would record whatever checkout they run in),
// unless allow: the runs of a sweep must be traceable to one commit.
func checkDirtyBinary(bin string, allow, needStamp bool) error {
	if allow {
		return nil
	}
	info, err := version.ReadBinary(bin) // the build info, read once for both checks
	if err != nil {
		return nil // koopqBinary's caller finds a binary that cannot be read
	}
	if stamped := info.Source == version.SourceBuild && info.Commit != ""; needStamp && !stamped {
		return fmt.Errorf("--koopq %s has no VCS stamp: its runs would record the HEAD of the checkout they run in as their commit, "+
			"not the code it was built from; build it with 'make build' (go build -buildvcs=true in a clean git checkout), or pass --allow-dirty", bin)
	}
	if !info.Dirty {
		return nil
	}
	return fmt.Errorf("--koopq %s was built from a tree with uncommitted changes (commit %s+dirty): the sweep's runs could not be traced to their code; "+
		"commit and rebuild ('make build'), or pass --allow-dirty", bin, fingerprint.Short(info.Commit))
}

func sweepFirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// sweepRuns returns the runs of the sweep in dir from its spec copy.
func sweepRuns(dir string) (*sweep.Spec, []sweep.Run, error) {
	p := filepath.Join(dir, ".sweep", "spec.yaml")
	if _, err := os.Stat(p); err != nil {
		return nil, nil, fmt.Errorf("%s is not a sweep directory (no .sweep/spec.yaml; 'koopq sweep run SPEC --out %s' makes one)", dir, dir)
	}
	return sweep.Load(p, expandChecker())
}

// newSweepStatusCmd makes 'koopq sweep status'.
func newSweepStatusCmd() *cobra.Command {
	var out, dataRoot string
	c := &cobra.Command{
		Use:   "status DIR | status [SPEC] --out DIR",
		Short: "Show every run of a sweep: done, running, failed or pending, last score, steps/s",
		Long: `status shows every run of the sweep in DIR (the spec it was run with is in DIR/.sweep/spec.yaml).
Written as 'sweep run' and 'sweep plan' are (SPEC --out DIR), it shows the runs of SPEC in DIR.
Under the data root (--data-root, else the one 'sweep run' last used in DIR) it then names what the
runs left need that is not there yet: datasets and shared Koopman models 'sweep run' makes first, and
data it cannot make.`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				spec *sweep.Spec
				runs []sweep.Run
				err  error
			)
			if out == "" && len(args) == 1 { // status DIR
				out, args = args[0], nil
			}
			switch {
			case out == "":
				return fmt.Errorf("which sweep? give its directory: 'koopq sweep status DIR' or 'koopq sweep status --out DIR'")
			case len(args) == 0:
				spec, runs, err = sweepRuns(out)
			default:
				if st, serr := os.Stat(args[0]); serr == nil && st.IsDir() {
					return fmt.Errorf("%s is a directory and --out %s another: give the sweep directory once (DIR, or --out DIR with a SPEC file)", args[0], out)
				}
				spec, runs, err = sweep.Load(args[0], expandChecker())
				if err == nil {
					if st, serr := os.Stat(out); serr != nil || !st.IsDir() {
						err = fmt.Errorf("--out %s: not a directory (no run of %s has started there)", out, args[0])
					}
				}
			}
			if err != nil {
				return err
			}
			fmt.Print(sweep.FormatStatus(sweep.Statuses(out, runs)))
			if o := sweep.Orphans(out, runs); len(o) > 0 {
				fmt.Printf("warning: %s not in the spec (a renamed or removed method or dataset?), left out of 'koopq report': %s\n",
					plural.Count(len(o), "run directory"), strings.Join(o, ", "))
			}
			if dataRoot == "" {
				dataRoot = recordedDataRoot(out)
			}
			if dataRoot != "" {
				printInputsLeft(spec, runs, out, sweepAbs(dataRoot))
			}
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "sweep directory (instead of DIR; with SPEC: the runs of SPEC in it)")
	c.Flags().StringVar(&dataRoot, "data-root", "", "directory relative dataset and model paths are read from, as in 'sweep run' (default: the one it last used in DIR)")
	return c
}

// recordedDataRoot is the data root 'sweep run' last used in the sweep
// directory out (.sweep/data-root), "" when none is recorded.
func recordedDataRoot(out string) string {
	b, err := os.ReadFile(filepath.Join(out, ".sweep", "data-root"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// printInputsLeft names what the runs of s not yet done in out need under
// root that is not there: what 'sweep run' makes first, and what it cannot.
func printInputsLeft(s *sweep.Spec, runs []sweep.Run, out, root string) {
	left, _ := sweep.Left(out, runs)
	if len(left) == 0 {
		return
	}
	steps := sweep.Preparation(s, left, root)
	missing := append(sweep.MissingData(s, left, root), sortedErrors(sweep.CheckData(left, root, datasetFitsEnv))...)
	if len(steps) == 0 && len(missing) == 0 {
		fmt.Printf("inputs: the datasets and Koopman models of the runs left are under %s\n", root)
		return
	}
	for _, st := range steps {
		fmt.Printf("inputs: 'sweep run' makes first: %s → %s\n", st, st.Path)
	}
	for _, m := range missing {
		fmt.Printf("inputs: cannot run: %s\n", m)
	}
}

// newSweepExecCmd makes 'koopq sweep exec'.
func newSweepExecCmd() *cobra.Command {
	var (
		specPath, out, dataRoot string
		index, threads          int
		allowDirty              bool
	)
	c := &cobra.Command{
		Use:    "exec",
		Short:  "Execute one run of a spec by index (what Slurm array tasks and Kubernetes pods call)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if specPath == "" || out == "" {
				return fmt.Errorf("--spec and --out are required")
			}
			if !cmd.Flags().Changed("index") {
				for _, v := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
					if s := os.Getenv(v); s != "" {
						i, err := strconv.Atoi(s)
						if err != nil {
							return fmt.Errorf("%s=%q: not an index", v, s)
						}
						index = i
						break
					}
				}
			}
			s, runs, err := sweep.Load(specPath, specChecker())
			if err != nil {
				return err
			}
			if index < 0 || index >= len(runs) {
				return fmt.Errorf("--index %d: the spec has runs 0..%d (set --index, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)", index, len(runs)-1)
			}
			dataRoot = sweepDataRoot(specPath, dataRoot)
			if err := sweep.CheckThreads(max(threads, 0)); err != nil {
				return err
			}
			if threads <= 0 {
				threads = s.ThreadsPerRun()
			}
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			label := "exec"
			if j := os.Getenv("SLURM_ARRAY_JOB_ID"); j != "" {
				label = fmt.Sprintf("slurm %s_%s", j, os.Getenv("SLURM_ARRAY_TASK_ID"))
			} else if os.Getenv("JOB_COMPLETION_INDEX") != "" {
				h, _ := os.Hostname()
				label = "k8s " + h
			}
			ctx, cancel := signalContext(cmd.Context(), "asking the trainer to checkpoint and exit")
			defer cancel()
			r := runs[index]
			fmt.Printf("run %d: %s\n", index, r.Name)
			// A binary rebuilt from a modified tree between a sweep's start
			// and this task (a requeue) is refused; an unstamped one (a
			// container image's build) is left to its runs' provenance.
			allow := allowDirty || os.Getenv("KOOPQ_ALLOW_DIRTY") == "1"
			state, err := sweep.Execute(ctx, sweepAbs(out), r, sweep.ExecOptions{Koopq: bin, DataRoot: dataRoot, Threads: threads,
				Executor: label, RetryFailed: true, TakeOver: true, AugmentCache: sweep.AugmentCacheDir(dataRoot),
				CheckBinary: func(b string) error { return checkDirtyBinary(b, allow, false) }})
			if errors.Is(err, sweep.ErrSkipped) && state == sweep.Done {
				fmt.Printf("run %s: already done\n", r.Name)
				return nil
			}
			if err != nil {
				return err
			}
			st := sweep.RunStatus(sweepAbs(out), r)
			what := "normalized score"
			if st.LastIsSuccess {
				what = "success rate"
			}
			fmt.Printf("run %s: done, final %s %s\n", r.Name, what, st.ScoreText())
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&specPath, "spec", "", "spec file")
	f.StringVar(&out, "out", "", "sweep directory")
	f.StringVar(&dataRoot, "data-root", "", "directory relative dataset paths are read from (default: the spec's directory)")
	f.BoolVar(&allowDirty, "allow-dirty", false, "run even when this binary was built from a tree with uncommitted changes (sweep run --allow-dirty passes it on)")
	f.IntVar(&index, "index", -1, "run index (default from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)")
	f.IntVar(&threads, "threads", 0, "threads of the trainer (default: the spec's)")
	return c
}

// selectionFlags adds --datasets, --methods and --seeds, which pick a subset
// of a spec's runs (sweep.Selection), and --order, the order they start in.
// sweepDataRoot is the absolute directory a sweep's relative dataset and
// model paths are read from: --data-root when given, else the spec's
// directory (the same for plan, run and exec).
func sweepDataRoot(specPath, dataRoot string) string {
	if dataRoot == "" {
		return filepath.Dir(sweepAbs(specPath))
	}
	return sweepAbs(dataRoot)
}

func selectionFlags(f *pflag.FlagSet, sel *sweep.Selection, order *string) {
	f.StringVar(order, "order", sweep.OrderSpec, "start order: spec (dataset, method, seed) or seeds (every run of a seed before the next seed; "+
		"datasets and methods in the order --datasets/--methods list them); "+
		"either way, runs with a checkpoint to resume start before the others")
	f.StringSliceVar(&sel.Datasets, "datasets", nil, "only the runs of these datasets (names from the spec, comma-separated)")
	f.StringSliceVar(&sel.Methods, "methods", nil, "only the runs of these methods or ablations (names from the spec)")
	f.Var(newSeedList(&sel.Seeds), "seeds", "only the runs with these seeds, e.g. 0 or 0,1")
}

// seedList is a comma-separated list of seeds as a flag value (pflag has no
// uint64 list).
type seedList struct{ p *[]uint64 }

func newSeedList(p *[]uint64) seedList { return seedList{p} }

func (l seedList) String() string {
	parts := make([]string, len(*l.p))
	for i, v := range *l.p {
		parts[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(parts, ",")
}

func (l seedList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a seed (a non-negative integer)", f)
		}
		*l.p = append(*l.p, n)
	}
	return nil
}

func (l seedList) Type() string { return "uints" }

// needsKoopman reports whether any of runs uses a Koopman augmentation
// (and so a precompute cache).
func needsKoopman(runs []sweep.Run) bool {
	for _, r := range runs {
		if augment.NeedsKoopman(r.Augment) {
			return true
		}
	}
	return false
}

// limitText writes a --time-limit back: whole minutes as "2h40m", anything
// finer as given (Duration.String).
func limitText(d time.Duration) string {
	if d%time.Minute == 0 {
		return sweep.FormatMinutes(d)
	}
	return d.String()
}

// sortedErrors is the messages of errs (keyed by dataset name) in name
// order, for output that does not change from one call to the next.
func sortedErrors(errs map[string]error) []string {
	names := slices.Sorted(maps.Keys(errs))
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = errs[n].Error()
	}
	return out
}
