package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

func init() {
	var (
		envName     string
		out         string
		sacSteps    int
		transitions int
		evalEvery   int
		seed        uint64
		hidden      []int
		medium      float64
	)
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Train SAC online and write D4RL-recipe datasets (random, medium, expert, medium-replay, medium-expert)",
		Long: `collect trains SAC on a simulator and writes five datasets in the D4RL HDF5 layout:
  random         a randomly initialized (untrained) policy
  medium         the SAC snapshot closest to --medium-level of the way from random to expert return
  expert         the best SAC snapshot
  medium-replay  SAC's replay buffer up to the medium snapshot
  medium-expert  medium followed by expert
Policies act stochastically, as D4RL's data was generated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := sac.CollectConfig{Env: envName, SAC: sac.DefaultConfig(sacSteps), EvalEvery: evalEvery, EvalEpisodes: 5,
				Transitions: transitions, MediumLevel: medium}
			cfg.SAC.Seed = seed
			cfg.SAC.Net.Hidden = hidden
			bars := map[string]*bar{}
			_, res, err := run.Collect(cmd.Context(), cfg, out, func(stage string, done, total int) {
				b, ok := bars[stage]
				if !ok {
					b = newBar(total, stage)
					bars[stage] = b
				}
				b.set(done, "")
			})
			for _, b := range bars {
				b.finish()
			}
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
			fmt.Fprintf(os.Stdout, "wrote %s/collect.json\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&envName, "env", "pendulum", "environment (see 'koopq eval --help' for names)")
	f.StringVar(&out, "out", "data", "output directory")
	f.IntVar(&sacSteps, "sac-steps", 20000, "online SAC environment steps")
	f.IntVar(&transitions, "transitions", 100000, "transitions in the random, medium and expert datasets")
	f.IntVar(&evalEvery, "snapshot-every", 1000, "SAC steps between policy snapshots")
	f.Uint64Var(&seed, "seed", 0, "random seed")
	f.IntSliceVar(&hidden, "hidden", []int{256, 256}, "SAC hidden layer widths")
	f.Float64Var(&medium, "medium-level", 1.0/3, "medium policy's level between random (0) and expert (1) return")
	rootCmd.AddCommand(cmd)
}
