package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report shows each method's ‖s̃ − s‖ mean (and the other magnitude
// keys runs recorded) beside its score, in summary.md and magnitude.md/.csv;
// runs from before the keys existed leave the cells empty, and a report of
// such runs alone has no magnitude table.
func TestMagnitudeBesideScores(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper", "CQL", "", 1, 50, []float64{40, 50}, true)
	writeRun(t, root, 1, "hopper", "KFC++", "", 1, 60, []float64{50, 60}, true)
	writeRun(t, root, 1, "hopper", "KFC++", "", 2, 62, []float64{52, 62}, true)
	_, rep := collectAndBuild(t, root, Options{Reps: 50})
	if rep.Magnitude != nil {
		t.Fatalf("runs without magnitude keys got a magnitude table: %+v", rep.Magnitude)
	}
	addToResults(t, root, "hopper__KFC++__s1", map[string]any{"shift_l2_mean": 2.6e-4, "shift_l2_p95": 5e-4, "symmetry_l2_mean": 2.5e-4})
	addToResults(t, root, "hopper__KFC++__s2", map[string]any{"shift_l2_mean": 2.8e-4, "shift_l2_p95": 6e-4, "symmetry_l2_mean": 2.7e-4})
	addToResults(t, root, "hopper__CQL__s1", map[string]any{"shift_l2_mean": 0.0, "shift_l2_p95": 0.0})
	_, rep = collectAndBuild(t, root, Options{Reps: 50})
	if rep.Magnitude == nil {
		t.Fatal("no magnitude table")
	}
	want := []string{"score", "shift_l2_mean", "shift_l2_p95", "symmetry_l2_mean"}
	if strings.Join(rep.Magnitude.Columns, ",") != strings.Join(want, ",") {
		t.Errorf("columns %v, want %v", rep.Magnitude.Columns, want)
	}
	md := rep.Summary()
	for _, s := range []string{"‖s̃ − s‖ mean", "| hopper | KFC++ | 2 | 61 ± 1.4 | 0.00027 ± 1.4e-05 |", "| hopper | CQL | 1 | 50 | 0 |"} {
		if !strings.Contains(md, s) {
			t.Errorf("summary.md lacks %q:\n%s", s, md)
		}
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(out, "magnitude.csv"))
	if err != nil || !strings.Contains(string(csv), "hopper,KFC++,shift_l2_mean,0.00027,") {
		t.Errorf("magnitude.csv: %v\n%s", err, csv)
	}
}
