package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/collect"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/eval"
)

// referenceNames lists the environments with normalized-score references.
func referenceNames() []string {
	names := make([]string, 0, len(eval.References))
	for n := range eval.References {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func init() {
	var opts dataset.ReadOptions
	var asJSON bool
	var envName, coveragePNG string
	datasetCmd := groupCommand("dataset", "Inspect offline datasets (D4RL and Minari HDF5)")
	infoCmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Summarize a D4RL-layout HDF5 file or a Minari dataset",
		Long: `Prints size, dimensions, the number of transitions after the q-learning
conversion (d4rl.qlearning_dataset conventions unless flags say otherwise),
episodes, return statistics, terminal/timeout counts, metadata and every key.
FILE is a D4RL-layout .hdf5 file, a Minari main_data.hdf5, or a Minari dataset
directory. For AntMaze data (--env antmaze-… or the file's metadata) it also
reports the maze cells the ant visited, the episodes that reach the goal, and
with --coverage a PNG of the visited x-y positions over the maze walls.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			in, err := dataset.Inspect(args[0], opts)
			if err != nil {
				return err
			}
			id := envName
			for _, k := range []string{"env", "env_name", "env_id", "dataset_id", "dataset"} {
				if id == "" {
					id = in.Meta[k]
				}
			}
			if name, ref, ok := eval.ReferenceFor(id); ok && in.Returns.Count > 0 {
				r := in.Returns
				in.NormalizedReturns = &dataset.Stats{Count: r.Count, Mean: ref.Normalize(r.Mean),
					Std: 100 * r.Std / math.Abs(ref.Expert-ref.Random), Min: ref.Normalize(r.Min), Max: ref.Normalize(r.Max)}
				in.ScoreEnv = name
			} else if envName != "" {
				return fmt.Errorf("--env %q: no reference returns for it (known: %s)", envName, strings.Join(referenceNames(), ", "))
			}
			maze := mujoco.Mazes[strings.ToLower(id)]
			if coveragePNG != "" && maze == nil {
				return fmt.Errorf("--coverage needs an AntMaze dataset (--env one of %s, or the file's metadata)", strings.Join(mujoco.AntMazeNames(), ", "))
			}
			var cov *collect.MazeCoverage
			if maze != nil {
				d, err := dataset.ReadD4RL(args[0], opts)
				if err != nil {
					return err
				}
				if cov, err = collect.AntMazeCoverage(d, maze); err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if coveragePNG != "" {
					if err := collect.PlotAntMazeCoverage(coveragePNG, d, maze, id, 200000); err != nil {
						return err
					}
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					*dataset.Info
					AntMaze *collect.MazeCoverage `json:"antmaze,omitempty"`
				}{in, cov})
			}
			if err := in.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if cov != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "antmaze %s: %d of %d free cells visited (%.0f%%), %d observations outside free cells; %d of %d episodes reach the goal\n",
					cov.Maze, cov.VisitedCells, cov.FreeCells, 100*cov.Fraction, cov.OutsideFree, cov.GoalEpisodes, cov.Episodes)
				if coveragePNG != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "coverage plot %s\n", coveragePNG)
				}
			}
			fmt.Fprintf(os.Stderr, "read in %.2fs\n", time.Since(start).Seconds())
			return nil
		},
	}
	fl := infoCmd.Flags()
	fl.BoolVar(&opts.DropInvalid, "drop-invalid", false, "drop transitions with NaN/Inf instead of failing (and report how many)")
	fl.BoolVar(&opts.TerminateOnEnd, "terminate-on-end", false, "keep time-limit steps (d4rl's terminate_on_end)")
	fl.BoolVar(&opts.UseNextObservations, "use-next-observations", false, "take s' from the stored next_observations instead of observations[i+1]")
	fl.IntVar(&opts.MaxEpisodeSteps, "max-episode-steps", 0, "time limit for files without a timeouts key (d4rl's env._max_episode_steps fallback)")
	fl.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	fl.StringVar(&coveragePNG, "coverage", "", "AntMaze data: write a PNG of the visited x-y positions over the maze to this file")
	fl.StringVar(&envName, "env", "", "environment whose reference returns give the normalized score (default: from the file's metadata)")
	datasetCmd.AddCommand(infoCmd)
	rootCmd.AddCommand(datasetCmd)
}
