package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/sac"
)

// CollectResult is collect.json: how each dataset was made.
type CollectResult struct {
	Config     sac.CollectConfig `json:"config"`
	Info       *sac.CollectInfo  `json:"info"`
	Files      map[string]string `json:"files"` // dataset name → file
	Sizes      map[string]int    `json:"transitions"`
	Provenance Provenance        `json:"provenance"`
}

// Collect trains SAC online on cfg.Env and writes the D4RL-recipe datasets
// (random, medium, expert, medium-replay, medium-expert) as D4RL-layout HDF5
// files <outDir>/<env>-<name>.hdf5, plus collect.json. It returns the
// in-memory datasets too. This is the small in-memory pipeline (toy scale,
// classic control) that Demo runs; package collect's SACRunConfig and
// WriteD4RLDatasets are D4RL's full recipe.
func Collect(ctx context.Context, cfg sac.CollectConfig, outDir string, progress meter.Staged) (map[string]*dataset.Dataset, *CollectResult, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("collect: %w", err)
	}
	if err := CheckWritable("--out", outDir); err != nil {
		return nil, nil, err
	}
	ds, info, err := sac.Collect(ctx, cfg, progress)
	if err != nil {
		return nil, nil, err
	}
	res := &CollectResult{Config: cfg, Info: info, Files: map[string]string{}, Sizes: map[string]int{}, Provenance: CurrentProvenance()}
	names := make([]string, 0, len(ds))
	for n := range ds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(outDir, fmt.Sprintf("%s-%s.hdf5", cfg.Env, n))
		if err := dataset.WriteD4RL(p, ds[n]); err != nil {
			return nil, nil, err
		}
		res.Files[n], res.Sizes[n] = p, ds[n].Len()
	}
	d := &Dir{Path: outDir}
	return ds, res, d.WriteJSON("collect.json", res)
}

// CheckWritable makes and removes a file in dir, so that a directory the
// results cannot be written to (read-only, full, a pseudo file system) is
// found before a rollout that takes minutes, not after it. flag names the
// option that chose dir (for the error).
func CheckWritable(flag, dir string) error {
	f, err := os.CreateTemp(dir, ".koopq-probe-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write files there: %w", flag, dir, err)
	}
	name := f.Name()
	err = f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("%s %s: cannot write files there: %w", flag, dir, err)
	}
	return nil
}
