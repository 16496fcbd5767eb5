package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeScoredRun writes a finished run's results.json with only what
// koopq report reads: config, seed, steps, final evaluation, history.
func writeScoredRun(t *testing.T, dir, augment string, seed uint64, score float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := map[string]any{
		"config":     map[string]any{"env": "pendulum", "data": "data/hopper.hdf5", "augment": augment},
		"seed":       seed,
		"steps":      100,
		"final_eval": map[string]any{"env": "pendulum", "episodes": 10, "normalized_score": score},
		"history":    []map[string]any{{"step": 100, "normalized_score": score}},
	}
	b, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// koopq report --reevaluations FILE puts the re-evaluated scores beside
// the run scores in paired.md, matched by run directory (relative paths
// from the working directory); a re-evaluation of a run not reported and
// an equivalence margin that is not positive are errors naming the flag
// or the run.
func TestReportPairedWithReevaluations(t *testing.T) {
	tmp := t.TempDir()
	score := map[string][]float64{"cql": {50, 52, 47}, "kfc++": {58, 57, 55}}
	reeval := map[string][]float64{"cql": {40, 41, 42}, "kfc++": {46, 45, 49}}
	var entries []map[string]any
	for _, aug := range []string{"cql", "kfc++"} {
		for s := range 3 {
			dir := filepath.Join("runs", fmt.Sprintf("%s_s%d", aug, s))
			writeScoredRun(t, filepath.Join(tmp, dir), aug, uint64(s), score[aug][s])
			entries = append(entries, map[string]any{"run": dir, "recorded": map[string]any{"normalized_score": score[aug][s]},
				"reevaluated": map[string]any{"env": "pendulum", "episodes": 100, "seed": 1000, "normalized_score": reeval[aug][s]}})
		}
	}
	writeJSON := func(name string, v any) string {
		b, _ := json.Marshal(v)
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := writeJSON("reeval.json", map[string]any{"episodes": 100, "seed": 1000, "reevaluations": entries})
	r := runCLI(t, tmp, time.Minute, "report", "runs", "--reevaluations", good, "--equivalence-margin", "3", "--reps", "50", "--out", "rep")
	if r.Code != 0 {
		t.Fatalf("report: %s", r.Stderr)
	}
	md, err := os.ReadFile(filepath.Join(tmp, "rep", "paired.md"))
	// Differences 8, 5, 8 and 6, 4, 7: both intervals exclude 0.
	if err != nil || !regexp.MustCompile(`\| kfc\+\+ − cql \| hopper \| 3 \| \+7\.0 ± 1\.7 \| \[\+2\.7, \+11\.3\] \| \[[^]]*\] \| beats \| 3 \| \+5\.7 ± 1\.5 \| \[\+1\.9, \+9\.5\] \| \[[^]]*\] \| beats \| beats \| – \|`).Match(md) ||
		!strings.Contains(string(md), "within ±3 points") {
		t.Errorf("paired.md: %v\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(tmp, "rep", "paired.csv")); err != nil {
		t.Error(err)
	}
	bad := writeJSON("other.json", map[string]any{"reevaluations": []map[string]any{{"run": "runs/gone",
		"reevaluated": map[string]any{"episodes": 100, "seed": 1000, "normalized_score": 3}}}})
	expectCLIError(t, runCLI(t, tmp, time.Minute, "report", "runs", "--reevaluations", bad, "--out", "rep2"), "runs/gone", "not among the 6 finished runs")
	expectCLIError(t, runCLI(t, tmp, time.Minute, "report", "runs", "--reevaluations", good, "--reevaluations", good, "--out", "rep2"), "re-evaluated twice")
	expectCLIError(t, runCLI(t, tmp, time.Minute, "report", "runs", "--equivalence-margin", "0", "--out", "rep2"), "--equivalence-margin")
}
