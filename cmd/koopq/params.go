package main

import (
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/run"
)

// readParams is the rows of the dataset reading flags for a command whose
// options struct T holds them at get(o): run.ReadParams without config keys.
func readParams[T any](get func(*T) *dataset.ReadOptions) param.Table[T] {
	return run.ReadParams(get, "")
}
