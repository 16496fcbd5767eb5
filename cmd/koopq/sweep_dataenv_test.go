package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A dataset file that records another env than the spec gives its dataset
// was found only when its runs started (and failed), after its shared
// Koopman model had been trained; sweep plan did not see it. Now plan lists
// it under "cannot run" and run leaves its runs pending, training nothing,
// while the other dataset's runs go ahead; sweep status names it as plan does.
func TestSweepDataOfAnotherEnv(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeData(t, filepath.Join(data, "good.hdf5"), map[string]string{"env": "pendulum"}, nil)
	writeData(t, filepath.Join(data, "bad.hdf5"), map[string]string{"env": "hopper-medium-v2"}, nil)
	spec := `name: envcheck
datasets:
  - {name: good, env: pendulum, data: data/good.hdf5}
  - name: bad
    env: pendulum
    data: data/bad.hdf5
    koopman: {model: models/bad-koopman.safetensors, seed: 0, epochs: 1, hidden: [8, 8], latent: 4}
methods:
  - {name: CQL, augment: none}
  - {name: KFC++, augment: kfc++}
seeds: [0]
steps: 20
preset: paper
eval: {every: 20, episodes: 1}
flags: {hidden: [8, 8], batch: 16, bc-steps: 0, log-every: 10, checkpoint-every: 20}
threads: 1
`
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `cannot run: dataset bad: dataset ` + filepath.Join(data, "bad.hdf5") +
		` was collected in env hopper (metadata/env "hopper-medium-v2"), not the spec's env pendulum`
	r := runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml")
	if r.Code != 0 || !strings.Contains(r.Stdout, want) || strings.Contains(r.Stdout, "dataset good:") {
		t.Fatalf("sweep plan: %d, want %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
	out := filepath.Join(work, "sw")
	r = runCLI(t, work, 5*time.Minute, "sweep", "run", "spec.yaml", "--out", out, "--jobs", "1", "--methods", "CQL,KFC++")
	if r.Code != 1 || !strings.Contains(r.Stderr, "1 dataset could not be prepared; its runs stay pending") ||
		!strings.Contains(r.Stderr, "not the spec's env pendulum") || !strings.Contains(r.Stdout, "skip    dataset bad:") {
		t.Fatalf("sweep run: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, gone := range []string{filepath.Join(out, "bad__cql__s0"), filepath.Join(out, "bad__kfcpp__s0")} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s exists: a run of the dataset of another env started", gone)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(work, "models", "bad*")); len(m) != 0 {
		t.Errorf("a Koopman model was trained on the dataset of another env: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "good__*", "*", "results.json")); len(m) != 2 {
		t.Errorf("the good dataset's runs: %v results, want 2\n%s", m, r.Stdout)
	}
	r = runCLI(t, work, time.Minute, "sweep", "status", "spec.yaml", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "inputs: "+want) {
		t.Errorf("sweep status: %d, want %q\n%s%s", r.Code, "inputs: "+want, r.Stdout, r.Stderr)
	}
}
