package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/sweep"
)

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
