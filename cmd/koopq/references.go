package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/run"
)

func init() {
	var (
		envName  string
		sacSteps int
		episodes int
		seed     uint64
		jsonOut  string
	)
	cmd := &cobra.Command{
		Use:   "references",
		Short: "Measure an environment's normalized-score anchors: uniform-random and SAC-expert returns",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := run.MeasureReferences(cmd.Context(), envName, sacSteps, episodes, seed)
			if err != nil {
				return err
			}
			fmt.Printf("%s: random %.2f ± %.2f, SAC expert (%d steps) %.2f ± %.2f over %d episodes\n",
				envName, m.Random.Mean, m.Random.Std, sacSteps, m.Expert.Mean, m.Expert.Std, episodes)
			if jsonOut != "" {
				return (&run.Dir{Path: "."}).WriteJSON(jsonOut, m)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&envName, "env", "pendulum", "environment")
	f.IntVar(&sacSteps, "sac-steps", 30000, "online SAC steps for the expert")
	f.IntVar(&episodes, "episodes", 100, "evaluation episodes per policy")
	f.Uint64Var(&seed, "seed", 0, "random seed")
	f.StringVar(&jsonOut, "json", "", "also write the measurement to this JSON file")
	rootCmd.AddCommand(cmd)
}
