package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/collect"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/run"
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

// newDatasetCmd makes 'koopq dataset' and its subcommand info.
func newDatasetCmd() *cobra.Command {
	cmd := groupCommand("dataset", "Inspect offline datasets (D4RL and Minari HDF5)")
	cmd.AddCommand(newDatasetInfoCmd())
	return cmd
}

// datasetInfoOptions holds the flag values of 'koopq dataset info'.
type datasetInfoOptions struct {
	read        dataset.ReadOptions
	asJSON      bool
	envName     string
	coveragePNG string
}

// newDatasetInfoCmd makes 'koopq dataset info'.
func newDatasetInfoCmd() *cobra.Command {
	o := &datasetInfoOptions{}
	cmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Summarize a D4RL-layout HDF5 file or a Minari dataset",
		Long: `Prints size, dimensions, the number of transitions after the q-learning
conversion (d4rl.qlearning_dataset conventions unless flags say otherwise),
episodes, return statistics, terminal/timeout counts, metadata and every key.
FILE is a D4RL-layout .hdf5 file, a Minari HDF5 file (any name), or a Minari dataset
directory. For AntMaze data (--env antmaze-… or the file's metadata) it also
reports the maze cells the ant visited, the episodes that reach the goal, and
with --coverage a PNG of the visited x-y positions over the maze walls.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.OutOrStdout(), args[0])
		},
	}
	datasetInfoParams().MustRegister(cmd.Flags(), o, defaultDatasetInfoOptions())
	return cmd
}

// defaultDatasetInfoOptions is the flag defaults (d4rl.qlearning_dataset's conventions).
func defaultDatasetInfoOptions() datasetInfoOptions {
	return datasetInfoOptions{}
}

// datasetInfoParams is the table of 'koopq dataset info' settings: the
// reading flags and the output switches.
func datasetInfoParams() param.Table[datasetInfoOptions] {
	type o = datasetInfoOptions
	return slices.Concat(readParams(func(o *o) *dataset.ReadOptions { return &o.read }), param.Table[o]{
		param.New("json", "", "print the summary as JSON", func(o *o) any { return &o.asJSON }, param.AnyValue),
		param.New("coverage", "", "AntMaze data: write a PNG of the visited x-y positions over the maze to this file", func(o *o) any { return &o.coveragePNG }, param.AnyValue),
		param.New("env", "", "environment whose reference returns give the normalized score (default: from the file's metadata)", func(o *o) any { return &o.envName }, param.AnyValue),
	})
}

// run summarizes the dataset at path on w. Past the table's ranges its
// flags can only be checked against the file (its metadata names the env),
// so there is no separate validate.
func (o *datasetInfoOptions) run(w io.Writer, path string) error {
	if err := datasetInfoParams().Validate(o); err != nil {
		return err
	}
	start := time.Now()
	in, err := dataset.Inspect(path, o.read)
	if err != nil {
		return err
	}
	id, err := o.score(in)
	if err != nil {
		return err
	}
	cov, err := o.mazeCoverage(path, id)
	if err != nil {
		return err
	}
	if o.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*dataset.Info
			AntMaze *collect.MazeCoverage `json:"antmaze,omitempty"`
		}{in, cov})
	}
	if err := in.WriteText(w); err != nil {
		return err
	}
	if cov != nil {
		fmt.Fprintf(w, "antmaze %s: %d of %d free cells visited (%.0f%%), %d observations outside free cells; %d of %d episodes reach the goal\n",
			cov.Maze, cov.VisitedCells, cov.FreeCells, 100*cov.Fraction, cov.OutsideFree, cov.GoalEpisodes, cov.Episodes)
		if o.coveragePNG != "" {
			fmt.Fprintf(w, "coverage plot %s\n", o.coveragePNG)
		}
	}
	fmt.Fprintf(os.Stderr, "read in %.2fs\n", time.Since(start).Seconds())
	return nil
}

// score returns the dataset's env id (--env, else the file's metadata) and
// fills in the normalized returns when the env has reference returns; an
// --env without them is an error.
func (o *datasetInfoOptions) score(in *dataset.Info) (string, error) {
	id := o.envName
	for _, k := range []string{"env", "env_name", "env_id", "dataset_id", "dataset"} {
		if id == "" {
			id = in.Meta[k]
		}
	}
	if rec := in.Meta["env"]; o.envName != "" && rec != "" {
		if got := run.EnvOfLabel(rec); got != "" && got != run.EnvOfLabel(o.envName) {
			return "", fmt.Errorf("--env %s: the dataset was collected in env %s (metadata/env %q); its returns would be normalized with another env's references",
				o.envName, got, rec)
		}
	}
	if name, ref, ok := eval.ReferenceFor(id); ok && in.Returns.Count > 0 {
		r := in.Returns
		in.NormalizedReturns = &dataset.Stats{Count: r.Count, Mean: ref.Normalize(r.Mean),
			Std: 100 * r.Std / math.Abs(ref.Expert-ref.Random), Min: ref.Normalize(r.Min), Max: ref.Normalize(r.Max)}
		in.ScoreEnv = name
	} else if o.envName != "" {
		return "", fmt.Errorf("--env %q: no reference returns for it (known: %s)", o.envName, strings.Join(referenceNames(), ", "))
	}
	return id, nil
}

// mazeCoverage measures the AntMaze coverage of the dataset at path (nil
// when id is no AntMaze) and with --coverage plots it.
func (o *datasetInfoOptions) mazeCoverage(path, id string) (*collect.MazeCoverage, error) {
	maze := mujoco.Mazes[strings.ToLower(id)]
	if o.coveragePNG != "" && maze == nil {
		return nil, fmt.Errorf("--coverage needs an AntMaze dataset (--env one of %s, or the file's metadata)", strings.Join(mujoco.AntMazeNames(), ", "))
	}
	if maze == nil {
		return nil, nil
	}
	d, err := dataset.ReadD4RL(path, o.read)
	if err != nil {
		return nil, err
	}
	cov, err := collect.AntMazeCoverage(d, maze)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if o.coveragePNG != "" {
		if err := collect.PlotAntMazeCoverage(o.coveragePNG, d, maze, id, 200000); err != nil {
			return nil, err
		}
	}
	return cov, nil
}
