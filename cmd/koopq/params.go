package main

import (
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/param"
)

// readParams is the rows of the dataset reading flags (dataset.ReadOptions)
// for a command whose options struct T holds them at get(o); 'koopq train'
// has its own (run.TrainParams, config keys read_options.*).
func readParams[T any](get func(*T) *dataset.ReadOptions) param.Table[T] {
	return param.Table[T]{
		param.New("drop-invalid", "", "drop transitions with NaN/Inf instead of failing", func(o *T) any { return &get(o).DropInvalid }, param.AnyValue),
		param.New("terminate-on-end", "", "keep time-limit steps (d4rl's terminate_on_end)", func(o *T) any { return &get(o).TerminateOnEnd }, param.AnyValue),
		param.New("use-next-observations", "", "take s' from the stored next_observations", func(o *T) any { return &get(o).UseNextObservations }, param.AnyValue),
		param.New("max-episode-steps", "", "time limit for files without a timeouts key (d4rl's env._max_episode_steps fallback)", func(o *T) any { return &get(o).MaxEpisodeSteps }, param.NonNegative),
		readTimeoutParam(get),
	}
}

// readTimeoutParam is --read-timeout: the time limit of the child process
// that parses an HDF5 file (dataset.ReadOptions.Timeout).
func readTimeoutParam[T any](get func(*T) *dataset.ReadOptions) param.Row[T] {
	return param.New("read-timeout", "", "time limit for parsing the HDF5 file in its child process (0: 1 min + 1 s per 2 MiB of file; negative: none)",
		func(o *T) any { return &get(o).Timeout }, param.AnyValue)
}
