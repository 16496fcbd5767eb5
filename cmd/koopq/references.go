package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/param"
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
	referencesParams().MustRegister(cmd.Flags(), o, defaultReferencesOptions())
	return cmd
}

// defaultReferencesOptions is the flag defaults (pendulum, a 30000-step SAC expert, 100 episodes).
func defaultReferencesOptions() referencesOptions {
	return referencesOptions{envName: "pendulum", sacSteps: 30000, episodes: 100, hidden: sac.DefaultNetConfig().Hidden}
}

// referencesParams is the table of 'koopq references' settings.
func referencesParams() param.Table[referencesOptions] {
	type o = referencesOptions
	return param.Table[o]{
		param.New("env", "", "environment", func(o *o) any { return &o.envName }, param.AnyValue),
		param.New("sac-steps", "", "online SAC steps for the expert", func(o *o) any { return &o.sacSteps }, param.Positive),
		param.New("episodes", "", "evaluation episodes per policy", func(o *o) any { return &o.episodes }, param.Positive),
		param.New("hidden", "", "SAC hidden layer widths of the expert, e.g. 256,256", func(o *o) any { return &o.hidden }, param.Positive),
		param.New("seed", "", "random seed", func(o *o) any { return &o.seed }, param.AnyValue),
		param.New("json", "", "also write the measurement to this JSON file", func(o *o) any { return &o.jsonOut }, param.AnyValue),
	}
}

// validate checks the env, the flags and the output file.
func (o *referencesOptions) validate() error {
	if _, err := env.Make(o.envName); err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	if err := firstErr(needWidths("hidden", o.hidden), referencesParams().Validate(o)); err != nil {
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
