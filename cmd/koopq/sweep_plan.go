package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/sweep"
)

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
