package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// Every committed report under results/ (<dir>/report/report.json) is
// remade by `koopq report <dir>/runs` from the committed run files, with the
// same table, IQM, mean and probabilities of improvement. This is what the
// README promises ("every number reproducible from the committed files"),
// and it fails when the run files are missing from the repository (a
// .gitignore pattern once kept results/…/runs out of every commit).
func TestCommittedReportsReproduce(t *testing.T) {
	reports, err := filepath.Glob(filepath.Join("..", "..", "results", "*", "*", "report", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "..", "results", "*", "report", "report.json"))
	reports = append(reports, more...)
	if len(reports) == 0 {
		t.Fatal("no committed report.json under results/")
	}
	keys := []string{"datasets", "methods", "table", "iqm", "mean", "probability_of_improvement"}
	for _, rep := range reports {
		base := filepath.Dir(filepath.Dir(rep))
		runs, err := filepath.Abs(filepath.Join(base, "runs"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(runs); err != nil {
			t.Errorf("%s: its runs are not in the repository: %v", rep, err)
			continue
		}
		out := t.TempDir()
		r := runCLI(t, "", 2*time.Minute, "report", runs, "--out", out)
		if r.Code != 0 {
			t.Errorf("koopq report %s: exit %d\n%s", runs, r.Code, r.Stderr)
			continue
		}
		var want, got map[string]any
		for p, v := range map[string]*map[string]any{rep: &want, filepath.Join(out, "report.json"): &got} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		for _, k := range keys {
			if !reflect.DeepEqual(want[k], got[k]) {
				t.Errorf("%s: %q differs from the one remade from %s:\ncommitted %v\nremade    %v", rep, k, runs, want[k], got[k])
			}
		}
	}
}
