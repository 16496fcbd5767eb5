package report

import (
	"math"
	"strings"
	"testing"

	"github.com/koopq/koopq/stats"
)

// The report tests every method against the baseline and every requested
// pair (once) on each dataset where both have two or more runs, and
// prints them in the summary.
func TestReportMeanDifferences(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 90, []float64{60, 90}, true)
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, 70, []float64{60, 70}, true)
	writeRun(t, root, 2, "hopper-medium", "KFC++", "", 0, 50, []float64{40, 50}, true)
	writeRun(t, root, 3, "hopper-medium", "KFC++", "", 1, 60, []float64{40, 60}, true)
	writeRun(t, root, 4, "hopper-medium", "S4RL-N", "", 0, 80, []float64{40, 80}, true) // one run: no test
	writeRun(t, root, 5, "walker2d-medium", "CQL", "", 0, 30, []float64{20, 30}, true)
	writeRun(t, root, 6, "walker2d-medium", "KFC++", "", 0, 40, []float64{20, 40}, true)
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(runs, Options{Reps: 50, Baseline: "CQL", Pairs: []Pair{{"KFC++", "CQL"}, {"KFC++", "S4RL-N"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.MeanDifferences) != 1 {
		t.Fatalf("mean differences %+v, want only KFC++ − CQL on hopper-medium", rep.MeanDifferences)
	}
	d := rep.MeanDifferences[0]
	want, _ := stats.WelchTest([]float64{50, 60}, []float64{90, 70}, 0.95)
	if d.Method != "KFC++" || d.Over != "CQL" || d.Dataset != "hopper-medium" || d.Welch != want || d.Welch.Diff != -25 {
		t.Errorf("got %+v, want KFC++ − CQL on hopper-medium %+v", d, want)
	}
	// Both KFC++ runs lie below both CQL runs: of the 6 ways to split the
	// four runs into two pairs, only the observed one is as low, so the
	// exact Mann–Whitney p-value for "CQL beats KFC++" is 1/6, and that for
	// "KFC++ beats CQL" is 1 (every split has P(X > Y) ≥ 0).
	if !d.Rank.Exact || math.Abs(d.Rank.PLess-1.0/6) > 1e-12 || d.Rank.PGreater != 1 {
		t.Errorf("per-dataset rank test %+v, want exact p(>) = 1, p(<) = 1/6", d.Rank)
	}
	s := rep.Summary()
	if !strings.Contains(s, "## Difference of means per dataset (Welch's t-test, 95% CIs)") ||
		!strings.Contains(s, "| KFC++ − CQL | hopper-medium | 2 vs 2 | -25.0 | [") ||
		!strings.Contains(s, " | 1 | 0.167 |\n") {
		t.Errorf("summary has no Welch table with rank p-values:\n%s", s)
	}
}
