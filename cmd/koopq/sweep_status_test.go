package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/sweep"
)

// 'sweep status' with a spec whose steps differ from what a finished run
// recorded flags the run and warns, instead of a bare "done 6000/300".
func TestSweepStatusFlagsStepsOtherThanTheSpecs(t *testing.T) {
	dir := writeSpec(t, strings.Replace(tinySweepSpec, "steps: 5000", "steps: 300", 1))
	run := filepath.Join(dir, "out", "pendulum-medium__cql__s0", "run-20260101-000000")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, text := range map[string]string{"config.json": "{}", "results.json": `{"steps": 6000, "final_eval": {"normalized_score": 12.5}}`} {
		if err := os.WriteFile(filepath.Join(run, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, dir, time.Minute, "sweep", "status", "spec.yaml", "--out", "out")
	if r.Code != 0 || !strings.Contains(r.Stdout, "6000/300") || !strings.Contains(r.Stdout, "trained 6000 steps, not the spec's 300") ||
		!strings.Contains(r.Stdout, "warning: 1 run trained a number of steps other than the spec's") {
		t.Errorf("status: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Two sweeps of different specs started together on one --out each
// finished the slots they locked first; 'sweep status' then called the mix
// complete. A finished run whose sweep-run.json describes other settings
// is now marked as made under another spec, with a warning.
func TestSweepStatusFlagsRunsOfAnotherSpec(t *testing.T) {
	dir := writeSpec(t, tinySweepSpec)
	_, runs, err := sweep.Load(filepath.Join(dir, "spec.yaml"), specChecker())
	if err != nil {
		t.Fatal(err)
	}
	other := runs[0]
	other.Flags = append(slices.Clone(other.Flags), sweep.Flag{Name: "min-q-weight", Value: "3"})
	slot := filepath.Join(dir, "out", runs[0].Name)
	run := filepath.Join(slot, "run-20260101-000000")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(other)
	if err != nil {
		t.Fatal(err)
	}
	for f, text := range map[string]string{filepath.Join(slot, "sweep-run.json"): string(b), filepath.Join(run, "config.json"): "{}",
		filepath.Join(run, "results.json"): `{"steps": 5000, "final_eval": {"normalized_score": 12.5}}`} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, dir, time.Minute, "sweep", "status", "spec.yaml", "--out", "out")
	if r.Code != 0 || !strings.Contains(r.Stdout, "made under another spec: the spec changed since this run started") ||
		!strings.Contains(r.Stdout, "warning: 1 run finished under other settings than this spec") {
		t.Errorf("status: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// 'sweep status' takes --data-root as 'sweep run' does (else the root the
// sweep last ran with) and names what the runs left need that is missing.
func TestSweepStatusNamesMissingInputs(t *testing.T) {
	dir := writeSpec(t, tinySweepSpec)
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, dir, time.Minute, "sweep", "status", "spec.yaml", "--out", "out", "--data-root", "elsewhere")
	if r.Code != 0 || !strings.Contains(r.Stdout, "inputs: cannot run: dataset pendulum-medium: data "+filepath.Join(dir, "elsewhere", "data", "pendulum-medium.hdf5")) {
		t.Errorf("status --data-root elsewhere: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The root the sweep recorded, holding the data.
	makeTinyData(t, dir)
	if err := os.MkdirAll(filepath.Join(out, ".sweep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, ".sweep", "data-root"), []byte(dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, dir, time.Minute, "sweep", "status", "spec.yaml", "--out", "out")
	if r.Code != 0 || !strings.Contains(r.Stdout, "inputs: the datasets and Koopman models of the runs left are under "+dir) {
		t.Errorf("status with the recorded root: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
