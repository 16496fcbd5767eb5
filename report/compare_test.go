package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// threeMethods writes hopper-medium runs of CQL, S4RL-N and KFC++ (two
// seeds each) as a sweep leaves them.
func threeMethods(t *testing.T, root string) {
	t.Helper()
	scores := map[string][]float64{"CQL": {50, 54}, "S4RL-N": {55, 60}, "KFC++": {58, 52}}
	i := 0
	for _, m := range []string{"CQL", "S4RL-N", "KFC++"} {
		for s, v := range scores[m] {
			writeRun(t, root, i, "hopper-medium", m, "", uint64(s), v, []float64{v / 2, v}, true)
			i++
		}
	}
}

func TestPairsAndReference(t *testing.T) {
	root := t.TempDir()
	threeMethods(t, root)
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	refFile := filepath.Join(root, "ref.yaml")
	os.WriteFile(refFile, []byte(`label: "paper (D4RL data)"
source: "Table 1"
note: "other data"
scores:
  hopper-medium: {CQL: 58.0, KFC++: 94.2}
  walker2d-medium: {CQL: 79.2}
`), 0o644)
	ref, err := LoadReference(refFile)
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := ParsePair("KFC++:CQL")
	p2, _ := ParsePair("KFC++ : S4RL-N")
	rep, err := Build(runs, Options{Reps: 400, Seed: 3, Pairs: []Pair{p1, p2}, Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	// P(KFC++ > CQL): (58>50)(58>54)(52>50)(52<54) → 3/4.
	// P(KFC++ > S4RL-N): (58>55)(58<60)(52<55)(52<60) → 1/4.
	if len(rep.Pairs) != 2 || rep.Pairs[0].Value != 0.75 || rep.Pairs[1].Value != 0.25 || rep.Pairs[1].Over != "S4RL-N" ||
		rep.Pairs[0].Runs != 2 || rep.Pairs[0].OverRuns != 2 {
		t.Fatalf("pairs %+v", rep.Pairs)
	}
	for _, p := range rep.Pairs {
		if !(p.Lo <= p.Value && p.Value <= p.Hi) || math.IsNaN(p.Lo) {
			t.Errorf("pair %+v: interval does not hold the estimate", p)
		}
	}
	// The baseline comparison is the same statistic as the pair KFC++:CQL.
	for _, p := range rep.PoI {
		if p.Method == "KFC++" && p.Value != rep.Pairs[0].Value {
			t.Errorf("PoI %v vs pair %v", p.Value, rep.Pairs[0].Value)
		}
	}
	tab := rep.ReferenceTable()
	if !strings.Contains(tab, "| hopper-medium | 52.0 ± 2.8 (n=2) | 58.0 | 57.5 ± 3.5 (n=2) | – | 55.0 ± 4.2 (n=2) | 94.2 |") ||
		!strings.Contains(tab, "CQL paper (D4RL data)") || !strings.Contains(tab, "Table 1. other data") || strings.Contains(tab, "walker2d") {
		t.Errorf("reference table:\n%s", tab)
	}
	// Rank tests, by hand: the 6 ways to pick 2 of the 4 pooled runs as
	// KFC++'s give U = 4, 3, 2, 2, 1, 0 against CQL (observed U = 3) and
	// against S4RL-N (observed U = 1).
	for i, want := range [][2]float64{{2.0 / 6, 5.0 / 6}, {5.0 / 6, 2.0 / 6}} {
		if tt := rep.Pairs[i].Test; !tt.Exact || tt.Relabellings != 6 || !near(tt.PGreater, want[0], 1e-15) || !near(tt.PLess, want[1], 1e-15) {
			t.Errorf("pair %d rank test %+v, want p(>) %.4f p(<) %.4f over 6", i, tt, want[0], want[1])
		}
	}
	for _, p := range rep.PoI {
		// S4RL-N's two runs beat both of CQL's: p(>) = 1/6, the bootstrap
		// interval collapses onto [1, 1].
		want := map[string]float64{"KFC++": 2.0 / 6, "S4RL-N": 1.0 / 6}[p.Method]
		if p.Test == nil || !near(p.Test.PGreater, want, 1e-15) {
			t.Errorf("PoI %s rank test %+v, want p(>) %v", p.Method, p.Test, want)
		}
	}
	sum := rep.Summary()
	for _, want := range []string{"| P(KFC++ > S4RL-N) | 2 vs 2 | 0.25 [", "| 0.833 | 0.333 |", "different data",
		"| S4RL-N | 2 | 57.5 [55, 60] | 57.5 [55, 60] | 1 [1, 1] | 0.167 | 1 |", "exact Mann–Whitney U test", "overstates the certainty"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	out := filepath.Join(root, "out")
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "table-vs-reference.md"))
	if err != nil || string(b) != tab {
		t.Errorf("table-vs-reference.md: %v", err)
	}
	var back struct {
		Pairs []map[string]any `json:"pairs"`
	}
	b, _ = os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Pairs) != 2 || back.Pairs[1]["over"] != "S4RL-N" || back.Pairs[1]["value"] != 0.25 {
		t.Errorf("report.json pairs %v (%v)", back.Pairs, err)
	} else if rt, _ := back.Pairs[1]["rank_test"].(map[string]any); rt == nil || !near(rt["p_less"].(float64), 2.0/6, 1e-15) || rt["exact"] != true {
		t.Errorf("report.json rank test %v", back.Pairs[1]["rank_test"])
	}
	// report.json names the code that made it, as every other result file
	// does (it recorded none).
	var made struct {
		Koopq ReportVersion `json:"koopq"`
	}
	if err := json.Unmarshal(b, &made); err != nil || made.Koopq.Commit == "" || made.Koopq.Version == "" || made.Koopq != rep.Koopq {
		t.Errorf("report.json koopq %+v (%v), want the code identity %+v", made.Koopq, err, rep.Koopq)
	}

	if _, err := Build(runs, Options{Pairs: []Pair{{"KFC++", "KFC"}}}); err == nil || !strings.Contains(err.Error(), "comparison KFC++:KFC: no method KFC") {
		t.Errorf("unknown method in pair: %v", err)
	}
	for _, bad := range []string{"KFC++", "KFC++:", ":CQL", "a:b:c"} {
		if _, err := ParsePair(bad); err == nil {
			t.Errorf("ParsePair(%q) accepted", bad)
		}
	}
}

func TestLoadReferenceErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"label: x\nsource: y\nscores: {hopper-medium: {CQL: 1}}\nextra: 1\n", "field extra not found"},
		{"source: y\nscores: {hopper-medium: {CQL: 1}}\n", "label missing"},
		{"label: x\nscores: {hopper-medium: {CQL: 1}}\n", "source missing"},
		{"label: x\nsource: y\n", "scores: none given"},
		{"label: x\nsource: y\nscores: {hopper-medium: {CQL: .nan}}\n", "scores.hopper-medium.CQL: not a finite number"},
		{"label: x\nsource: y\nscores: {hopper-medium: {CQL: high}}\n", "cannot unmarshal"},
		{"", "the file is empty"}, // said only "EOF"
	} {
		p := filepath.Join(dir, "r.yaml")
		os.WriteFile(p, []byte(c.text), 0o644)
		if _, err := LoadReference(p); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: got %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := LoadReference(filepath.Join(dir, "none.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}

// writeInProgress makes an unfinished sweep run: config.json and
// history.json, no results.json.
func writeInProgress(t *testing.T, root string, index int, dataset, method string, seed uint64, hist []float64) {
	t.Helper()
	slot := filepath.Join(root, fmt.Sprintf("%s__%s__s%d", dataset, method, seed))
	dir := filepath.Join(slot, "run-20260101-000000")
	os.MkdirAll(dir, 0o755)
	cfg := map[string]any{"env": "pendulum", "data": "/d/" + dataset + ".hdf5", "augment": strings.ToLower(method), "cql": map[string]any{"seed": seed}}
	var h []map[string]any
	for i, v := range hist {
		h = append(h, map[string]any{"step": 100 * (i + 1), "normalized_score": v})
	}
	for name, v := range map[string]any{"config.json": cfg, "history.json": h} {
		b, _ := json.Marshal(v)
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	sr, _ := json.Marshal(map[string]any{"index": index, "dataset": dataset, "method": method, "seed": seed})
	os.WriteFile(filepath.Join(slot, "sweep-run.json"), sr, 0o644)
}

func TestInProgressRunsOnlyInCurves(t *testing.T) {
	root := t.TempDir()
	writeInProgress(t, root, 0, "hopper-medium", "CQL", 7, []float64{10, 30, 35})
	if _, err := Collect(root); err == nil {
		t.Error("Collect without InProgress read an unfinished run")
	}
	runs, err := CollectWith(CollectOptions{InProgress: true}, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || !runs[0].InProgress || runs[0].Score != 35 || runs[0].Steps != 300 || runs[0].Seed != 7 || runs[0].Method != "CQL" {
		t.Fatalf("in-progress run %+v", runs)
	}
	rep, err := Build(runs, Options{Reps: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 0 || len(rep.InProgress) != 1 || rep.Table.Rows[0].Cells[0].N() != 0 || rep.IQM[0].Runs != 0 {
		t.Errorf("an unfinished run entered a table or statistic: runs %d, cell %+v, IQM %+v", len(rep.Runs), rep.Table.Rows[0].Cells[0], rep.IQM[0])
	}
	cv := rep.Curves[0].Curves[0]
	if !cv.InProgress || fmt.Sprint(cv.Steps) != "[100 200 300]" || cv.Mean[2] != 35 {
		t.Errorf("curve %+v", cv)
	}
	if _, err := rep.Write(filepath.Join(root, "out")); err != nil {
		t.Fatalf("write with only an unfinished run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "out", "curves-hopper-medium.png")); err != nil {
		t.Error(err)
	}

	// Once a run of the method has finished, the curve is of finished runs only.
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, 50, []float64{20, 50}, true)
	runs, _ = CollectWith(CollectOptions{InProgress: true}, root)
	rep, err = Build(runs, Options{Reps: 100})
	if err != nil {
		t.Fatal(err)
	}
	cv = rep.Curves[0].Curves[0]
	if cv.InProgress || cv.Seeds != 1 || fmt.Sprint(cv.Mean) != "[20 50]" || rep.Table.Rows[0].Cells[0].N() != 1 {
		t.Errorf("curve with a finished run %+v", cv)
	}
	// A run directory with results.json is read once, as finished.
	if len(runs) != 2 {
		t.Errorf("%d runs", len(runs))
	}
}

// TestComparisonNamesAnAblation checks that --compare accepts an ablation
// (here KFC++-residual, base KFC++) on either side: its probability of
// improvement and Welch difference come from the ablation's own runs, and
// the ablation stays out of the main table. Before, the pair was refused
// with "no method KFC++-residual".
func TestComparisonNamesAnAblation(t *testing.T) {
	root := t.TempDir()
	threeMethods(t, root)
	for s, v := range []float64{70, 74} {
		writeRun(t, root, 6+s, "hopper-medium", "KFC++-residual", "KFC++", uint64(s), v, []float64{v / 2, v}, true)
	}
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(runs, Options{Reps: 200, Seed: 1, Pairs: []Pair{{"KFC++-residual", "KFC++"}, {"CQL", "KFC++-residual"}}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rep.Methods, "KFC++-residual") {
		t.Errorf("ablation among the main methods %v", rep.Methods)
	}
	// Every residual run (70, 74) beats every KFC++ run (58, 52), and every
	// CQL run (50, 54) loses to every residual run.
	if len(rep.Pairs) != 2 || rep.Pairs[0].Value != 1 || rep.Pairs[0].Runs != 2 || rep.Pairs[0].OverRuns != 2 || rep.Pairs[1].Value != 0 {
		t.Fatalf("pairs %+v", rep.Pairs)
	}
	var got *MeanDifference
	for i, d := range rep.MeanDifferences {
		if d.Method == "KFC++-residual" && d.Over == "KFC++" {
			got = &rep.MeanDifferences[i]
		}
	}
	// Means 72 and 55: the difference is 17 on two runs each.
	if got == nil || math.Abs(got.Welch.Diff-17) > 1e-12 || got.Welch.N != 2 || got.Welch.M != 2 {
		t.Fatalf("Welch difference of the ablation over its base: %+v", got)
	}
	if _, err := Build(runs, Options{Pairs: []Pair{{"KFC++-contact", "KFC++"}}}); err == nil ||
		!strings.Contains(err.Error(), "no method KFC++-contact (methods and ablations: CQL, S4RL-N, KFC++, KFC++-residual)") {
		t.Errorf("unknown ablation in pair: %v", err)
	}
}

// near reports |a − b| ≤ tol.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
