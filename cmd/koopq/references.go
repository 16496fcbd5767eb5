package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

// referencesOptions holds the flag values of 'koopq references'.
type referencesOptions struct {
	envName  string
	sacSteps int
	episodes int
	seed     uint64
	jsonOut  string
	hidden   []int
}

// newReferencesCmd makes 'koopq references'.
func newReferencesCmd() *cobra.Command {
	o := &referencesOptions{}
	cmd := &cobra.Command{
		Use:   "references",
		Short: "Measure an environment's normalized-score anchors: uniform-random and SAC-expert returns",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.envName, "env", "pendulum", "environment")
	f.IntVar(&o.sacSteps, "sac-steps", 30000, "online SAC steps for the expert")
	f.IntVar(&o.episodes, "episodes", 100, "evaluation episodes per policy")
	f.IntSliceVar(&o.hidden, "hidden", sac.DefaultNetConfig().Hidden, "SAC hidden layer widths of the expert, e.g. 256,256")
	f.Uint64Var(&o.seed, "seed", 0, "random seed")
	f.StringVar(&o.jsonOut, "json", "", "also write the measurement to this JSON file")
	return cmd
}

// validate checks the env, the flags and the output file.
func (o *referencesOptions) validate() error {
	if _, err := env.Make(o.envName); err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	if err := firstErr(needPositive("sac-steps", o.sacSteps), needPositive("episodes", o.episodes),
		needWidths("hidden", o.hidden)); err != nil {
		return err
	}
	if o.jsonOut != "" {
		return needOutFile("json", o.jsonOut)
	}
	return nil
}

// run measures the references, prints them and with --json writes them.
func (o *referencesOptions) run(ctx context.Context) error {
	m, err := run.MeasureReferences(ctx, o.envName, o.sacSteps, o.episodes, o.hidden, o.seed)
	if err != nil {
		return err
	}
	fmt.Printf("%s: random %.2f ± %.2f, SAC expert (%d steps) %.2f ± %.2f over %s\n",
		o.envName, m.Random.Mean, m.Random.Std, o.sacSteps, m.Expert.Mean, m.Expert.Std, plural.Count(o.episodes, "episode"))
	if o.jsonOut != "" {
		return writeJSONFile(o.jsonOut, m)
	}
	return nil
}
