package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
