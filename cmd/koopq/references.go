package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

func init() {
	var (
		envName  string
		sacSteps int
		episodes int
		seed     uint64
		jsonOut  string
		hidden   []int
	)
	cmd := &cobra.Command{
		Use:   "references",
		Short: "Measure an environment's normalized-score anchors: uniform-random and SAC-expert returns",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := env.Make(envName); err != nil {
				return fmt.Errorf("--env: %w", err)
			}
			if err := needPositive("sac-steps", sacSteps); err != nil {
				return err
			}
			if err := needPositive("episodes", episodes); err != nil {
				return err
			}
			if err := needWidths("hidden", hidden); err != nil {
				return err
			}
			if jsonOut != "" {
				if err := needOutFile("json", jsonOut); err != nil {
					return err
				}
			}
			m, err := run.MeasureReferences(cmd.Context(), envName, sacSteps, episodes, hidden, seed)
			if err != nil {
				return err
			}
			fmt.Printf("%s: random %.2f ± %.2f, SAC expert (%d steps) %.2f ± %.2f over %s\n",
				envName, m.Random.Mean, m.Random.Std, sacSteps, m.Expert.Mean, m.Expert.Std, plural.Count(episodes, "episode"))
			if jsonOut != "" {
				return writeJSONFile(jsonOut, m)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&envName, "env", "pendulum", "environment")
	f.IntVar(&sacSteps, "sac-steps", 30000, "online SAC steps for the expert")
	f.IntVar(&episodes, "episodes", 100, "evaluation episodes per policy")
	f.IntSliceVar(&hidden, "hidden", sac.DefaultNetConfig().Hidden, "SAC hidden layer widths of the expert, e.g. 256,256")
	f.Uint64Var(&seed, "seed", 0, "random seed")
	f.StringVar(&jsonOut, "json", "", "also write the measurement to this JSON file")
	rootCmd.AddCommand(cmd)
}
