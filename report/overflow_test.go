package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A score of 1e308 is reported with finite numbers in every file
// (report.json included), not "± +Inf" in table.md and then a JSON error.
func TestReportWithHugeScore(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 1e308, []float64{1, 1e308}, true)
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, 50, []float64{1, 50}, true)
	writeRun(t, root, 2, "hopper-medium", "KFC", "", 0, 40, []float64{1, 40}, true)
	writeRun(t, root, 3, "hopper-medium", "KFC", "", 1, 5, []float64{1, 5}, true)
	_, rep := collectAndBuild(t, root, Options{Reps: 100, Seed: 1})
	out := filepath.Join(root, "report")
	if _, err := rep.Write(out); err != nil {
		t.Fatalf("Write: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "table.md"))
	if strings.Contains(string(md), "Inf") || strings.Contains(string(md), "NaN") {
		t.Errorf("table.md:\n%s", md)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	var js map[string]any
	if err != nil || json.Unmarshal(b, &js) != nil {
		t.Fatalf("report.json: %v", err)
	}
	if c := rep.Table.Rows[0].Cells[0]; c.Mean != 5e307 || math.IsInf(c.Std, 0) {
		t.Errorf("CQL cell %+v", c)
	}
}

// Scores whose difference overflows float64 are refused before anything
// is written: no statistic or axis can span them.
func TestReportRefusesScoresBeyondRange(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 1e308, []float64{1, 1e308}, true)
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, -1e308, []float64{1, -1e308}, true)
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(runs, Options{Reps: 100, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "too far apart") || !strings.Contains(err.Error(), "1e+308") {
		t.Fatalf("Build: %v", err)
	}
}

// Write renders every file before it writes the first: a report that cannot
// be encoded leaves no table.md behind.
func TestWriteAllOrNothing(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{1, 50}, true)
	_, rep := collectAndBuild(t, root, Options{Reps: 100, Seed: 1})
	rep.Taus = append(rep.Taus, math.NaN()) // not encodable as JSON
	out := filepath.Join(root, "report")
	if files, err := rep.Write(out); err == nil || len(files) != 0 {
		t.Fatalf("Write: %v, %v", files, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s exists after a failed Write: %v", out, err)
	}
}
