package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/koopq/koopq/sweep"
)

// A sweep spec may set shift-l2 (the train flag that calibrates the
// augmentation's magnitude): the spec checker accepts it and every run's
// train command line carries it.
func TestSweepSpecPassesShiftL2(t *testing.T) {
	dir := t.TempDir()
	spec := `name: magnitude
datasets:
  - {name: pendulum, env: pendulum, data: pendulum.hdf5}
methods:
  - {name: S4RL-N, augment: gaussian, flags: {shift-l2: 2.6e-4, bc-steps: 10}}
  - {name: KFC++, augment: kfc++, flags: {shift-l2: 2.6e-4, residual: true, bc-steps: 10}}
seeds: [1]
steps: 100
`
	p := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	_, runs, err := sweep.Load(p, specChecker())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		args := r.TrainArgs(dir, dir, r.Name)
		if !slices.Contains(args, "--shift-l2=2.6e-4") && !slices.Contains(args, "--shift-l2=0.00026") {
			t.Errorf("%s: train args %q carry no --shift-l2", r.Method, args)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(spec+"flags: {shift-l2: tiny}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sweep.Load(bad, specChecker()); err == nil {
		t.Error("shift-l2: tiny accepted")
	}
}
