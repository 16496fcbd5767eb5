package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeManipRun makes a finished run directory of a manipulation env: no
// normalized score (null), final_eval with per-episode successes, history
// points with success rates.
func writeManipRun(t *testing.T, root, dataset, method string, seed uint64, successes []bool, hist []float64) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("%s__%s__s%d", dataset, method, seed), "run-20260101-000000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range successes {
		if s {
			n++
		}
	}
	var h []map[string]any
	for i, v := range hist {
		h = append(h, map[string]any{"step": 100 * (i + 1), "normalized_score": nil, "success_rate": v})
	}
	res := map[string]any{
		"config": map[string]any{"env": "metaworld-push-v2", "data": "data/" + dataset + ".hdf5", "augment": strings.ToLower(method)},
		"seed":   seed, "steps": 100 * len(hist),
		"final_eval": map[string]any{"env": "metaworld-push-v2", "normalized_score": nil, "success_rate": float64(n) / float64(len(successes)),
			"successes": successes},
		"history": h,
	}
	b, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSuccessRateTable(t *testing.T) {
	root := t.TempDir()
	T, F := true, false
	// push: CQL 1/4 and 2/4, KFC 3/4 and 4/4 of the final episodes succeed.
	writeManipRun(t, root, "metaworld-push-v2", "CQL", 0, []bool{T, F, F, F}, []float64{0, 0.25})
	writeManipRun(t, root, "metaworld-push-v2", "CQL", 1, []bool{T, T, F, F}, []float64{0.5, 0.5})
	writeManipRun(t, root, "metaworld-push-v2", "KFC", 0, []bool{T, T, T, F}, []float64{0.25, 0.75})
	writeManipRun(t, root, "metaworld-push-v2", "KFC", 1, []bool{T, T, T, T}, []float64{0.5, 1})
	// A locomotion run beside them has a normalized score and no success rate.
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{40, 50}, false)
	runs, rep := collectAndBuild(t, root, Options{Seed: 1, Reps: 200})
	for _, r := range runs {
		switch {
		case r.Dataset == "hopper-medium" && r.Success != nil:
			t.Errorf("%s: success rate %v for a run without a success test", r.Dir, *r.Success)
		case r.Dataset == "metaworld-push-v2" && r.Success == nil:
			t.Errorf("%s: no success rate", r.Dir)
		case r.Dataset == "metaworld-push-v2" && r.Score != *r.Success:
			t.Errorf("%s: score %v, want the success rate %v (no reference returns)", r.Dir, r.Score, *r.Success)
		}
	}
	s := rep.Success
	if s == nil {
		t.Fatal("no success table")
	}
	if len(s.Datasets) != 1 || s.Datasets[0] != "metaworld-push-v2" || len(s.Methods) != 2 {
		t.Fatalf("success table rows %v, columns %v; want push only, cql and kfc", s.Datasets, s.Methods)
	}
	cells := s.Table.Rows[0].Cells
	// Runs without sweep labels are named by their augmentation; the
	// spread is the sample standard deviation of 25 and 50 (75 and 100).
	sd := 12.5 * math.Sqrt2
	want := map[string][2]float64{"cql": {37.5, sd}, "kfc": {87.5, sd}}
	for i, m := range s.Methods {
		w := want[m]
		if math.Abs(cells[i].Mean-w[0]) > 1e-9 || math.Abs(cells[i].Std-w[1]) > 1e-9 || cells[i].N() != 2 {
			t.Errorf("%s: success %v ± %v over %d, want %v ± %v over 2", m, cells[i].Mean, cells[i].Std, cells[i].N(), w[0], w[1])
		}
		if cells[i].Best != (m == "kfc") {
			t.Errorf("%s: best %v", m, cells[i].Best)
		}
		mean := s.Mean[i]
		if mean.Method != m || math.Abs(mean.Value-w[0]) > 1e-9 || !(mean.Lo <= mean.Value && mean.Value <= mean.Hi) {
			t.Errorf("%s: mean %+v, want %v inside its interval", m, mean, w[0])
		}
	}
	// The learning curves of push are success rates in percent.
	found := false
	for _, dc := range rep.Curves {
		for _, c := range dc.Curves {
			if dc.Dataset == "metaworld-push-v2" && c.Method == "kfc" {
				found = true
				if len(c.Mean) != 2 || c.Mean[0] != 37.5 || c.Mean[1] != 87.5 {
					t.Errorf("kfc push curve %v, want [37.5 87.5]", c.Mean)
				}
			}
		}
	}
	if !found {
		t.Error("no kfc learning curve on push")
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "success.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "37.5") || !strings.Contains(string(md), "87.5") {
		t.Errorf("success.md lacks the cells:\n%s", md)
	}
	if !strings.Contains(rep.Summary(), "## Success rate") {
		t.Error("summary has no success section")
	}
	// The main table mixes hopper's normalized score and push's success rate.
	if !strings.HasPrefix(rep.Summary(), "## Final normalized score or success rate (%) (mean ± std over seeds)") {
		t.Errorf("summary heading: %q", strings.SplitN(rep.Summary(), "\n", 2)[0])
	}
	// The figures' axes name the score each dataset is on (push's curves were
	// once labelled "normalized score").
	for file, want := range map[string]string{
		"curves-metaworld-push-v2.svg": ">success rate (%) (mean, 95% CI)<",
		"curves-hopper-medium.svg":     ">normalized score (mean, 95% CI)<",
		"iqm.svg":                      ">IQM of the final normalized score or success rate (%) (95% CI)<",
	} {
		svg, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(svg), want) {
			t.Errorf("%s lacks the axis text %q", file, want)
		}
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "Score of metaworld-push-v2: the success rate") || strings.Contains(string(table), "Score of hopper") {
		t.Errorf("table.md does not say which rows are success rates:\n%s", table)
	}
}

func TestNoSuccessTableWithoutSuccessTests(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{40, 50}, false)
	writeRun(t, root, 1, "hopper-medium", "KFC", "", 0, 60, []float64{40, 60}, false)
	_, rep := collectAndBuild(t, root, Options{Seed: 1, Reps: 100})
	if rep.Success != nil {
		t.Fatalf("success table %+v for runs without success tests", rep.Success)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "success") {
		t.Error("report.json of locomotion runs mentions success")
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "success.md")); !os.IsNotExist(err) {
		t.Errorf("success.md written for locomotion runs (%v)", err)
	}
}

// One seed per task (an interim report): the aggregates are values without
// intervals, said so in the text, written as null in report.json; a second
// seed on one task brings the intervals back.
func TestOneSeedPerTaskHasNoIntervals(t *testing.T) {
	root := t.TempDir()
	T, F := true, false
	writeManipRun(t, root, "metaworld-push-v2", "CQL", 0, []bool{T, F, F, F}, []float64{0, 0.25})
	writeManipRun(t, root, "metaworld-push-v2", "KFC", 0, []bool{T, T, T, F}, []float64{0.25, 0.75})
	writeManipRun(t, root, "metaworld-door-close-v2", "CQL", 0, []bool{F, F, F, F}, []float64{0, 0})
	writeManipRun(t, root, "metaworld-door-close-v2", "KFC", 0, []bool{T, T, F, F}, []float64{0.5, 0.5})
	_, rep := collectAndBuild(t, root, Options{Seed: 1, Reps: 200})
	for _, m := range append(append(append([]MethodCI{}, rep.IQM...), rep.Mean...), append(rep.PoI, rep.Success.IQM...)...) {
		if math.IsNaN(m.Value) || !math.IsNaN(m.Lo) || !math.IsNaN(m.Hi) {
			t.Errorf("%s: %+v, want a value without an interval", m.Method, m.CI)
		}
	}
	summary := rep.Summary()
	if !strings.HasPrefix(summary, "## Final success rate (%) (mean ± std over seeds)") {
		t.Errorf("summary heading of success-scored runs only: %q", strings.SplitN(summary, "\n", 2)[0])
	}
	if !strings.Contains(summary, singleRunNote) || !strings.Contains(rep.Success.Markdown("95%", 200, 1), singleRunNote) {
		t.Errorf("the summary or the success table does not say why there are no intervals:\n%s", summary)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"lo":null`) {
		t.Errorf("report.json has no null bound: %s", b)
	}
	writeManipRun(t, root, "metaworld-push-v2", "CQL", 1, []bool{T, T, F, F}, []float64{0.5, 0.5})
	writeManipRun(t, root, "metaworld-push-v2", "KFC", 1, []bool{T, T, T, T}, []float64{0.5, 1})
	_, rep = collectAndBuild(t, root, Options{Seed: 1, Reps: 200})
	for _, m := range rep.Mean {
		if math.IsNaN(m.Lo) || m.Lo >= m.Hi {
			t.Errorf("%s with two seeds on push: mean %+v, want an interval", m.Method, m.CI)
		}
	}
	if strings.Contains(rep.Summary(), singleRunNote) {
		t.Error("the no-interval note stays with intervals present")
	}
}
