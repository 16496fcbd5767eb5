package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

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
