package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/sweep"
)

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
