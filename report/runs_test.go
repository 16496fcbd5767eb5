package report

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addToResults merges fields into a run's results.json, as a later koopq
// (provenance, resume segments) writes them.
func addToResults(t *testing.T, root, slot string, fields map[string]any) {
	t.Helper()
	p := filepath.Join(root, slot, "run-20260101-000000", "results.json")
	var m map[string]any
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("%s: %v", p, err)
	}
	for k, v := range fields {
		m[k] = v
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runs.md and runs.csv list every finished run with the processes that
// trained it: resumed runs by segment (one without provenance says so),
// older files by their last process's provenance and no speed (its wall
// time is that process's only), the oldest as not recorded; a commit read
// from the checkout by an unstamped binary is marked "+unstamped"; --last K adds the last-K column beside the final score.
func TestRunsTable(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 1, "hopper-medium", "KFC++", "", 0, 40, []float64{10, 30, 40}, true)
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 1, 60, []float64{20, 50, 60}, true)
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 80, []float64{30, 70, 80}, true)
	vm := map[string]any{"hostname": "vm", "git_commit": "c414141310540954a6fb", "git_dirty": false, "blas": "openblas", "blas_precision": "f32", "blas_isa": "Zen"}
	addToResults(t, root, "hopper-medium__KFC++__s0", map[string]any{"segments": []any{
		map[string]any{"from_step": 0, "to_step": 200, "wall_seconds": 0, "provenance": nil},
		map[string]any{"from_step": 200, "to_step": 300, "wall_seconds": 10, "provenance": vm,
			"moved": []any{"dataset moved: /a/hopper.hdf5 → /b/hopper.hdf5"}},
	}, "provenance": vm, "wall_seconds": 10})
	addToResults(t, root, "hopper-medium__CQL__s1", map[string]any{"segments": []any{
		map[string]any{"from_step": 0, "to_step": 300, "wall_seconds": 30, "provenance": vm, "restarted": "run … has no checkpoint …"},
	}, "provenance": vm, "wall_seconds": 30})
	addToResults(t, root, "hopper-medium__CQL__s0", map[string]any{"wall_seconds": 12,
		"provenance": map[string]any{"hostname": "h2", "git_commit": "abcdef123456", "git_dirty": true, "git_commit_source": "checkout", "blas": "onednn", "blas_precision": "bf16", "blas_isa": "avx512_core_bf16"}})
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(runs, Options{Reps: 50, Last: 2})
	if err != nil {
		t.Fatal(err)
	}
	md := rep.RunsMarkdown()
	for _, want := range []string{
		"| dataset | method | seed | final | last 2 | evaluations | trained by",
		"| hopper-medium | CQL | 0 | 80.0 | 75.0 | 3 | 0–300: h2, onednn bf16 avx512_core_bf16, abcdef1+dirty+unstamped (the last process; earlier ones, if resumed, not recorded) |\n" +
			"| hopper-medium | CQL | 1 | 60.0 | 55.0 | 3 | 0–300: vm, openblas f32 Zen, c414141, 10.0 steps/s " +
			"(restarted from step 0 without a checkpoint, replacing an earlier process's logs) |\n" +
			"| hopper-medium | KFC++ | 0 | 40.0 | 35.0 | 3 | 0–200: not recorded; 200–300: vm, openblas f32 Zen, c414141, 10.0 steps/s " +
			"(read 1 moved input at a new path, same content) |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("runs.md lacks %q:\n%s", want, md)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(rep.RunsCSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Header, one row for each CQL run, two for the resumed KFC++ run.
	if len(rows) != 5 || rows[0][10] != "wall_seconds" || rows[4][1] != "KFC++" || rows[4][7] != "1" || rows[4][11] != "10" ||
		rows[4][13] != "c414141" || rows[3][11] != "" || rows[1][11] != "" || rows[1][4] != "80" || rows[1][5] != "75" {
		t.Errorf("runs.csv:\n%v", rows)
	}
	out := filepath.Join(root, "report")
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "runs.md")); err != nil || string(b) != md {
		t.Errorf("runs.md not written: %v", err)
	}
	// Without --last there is no last-K column.
	rep, _ = Build(runs, Options{Reps: 50})
	if md := rep.RunsMarkdown(); strings.Contains(md, "| last") || !strings.Contains(md, "| hopper-medium | CQL | 0 | 80.0 | 3 |") {
		t.Errorf("runs.md without --last:\n%s", md)
	}
}

// A cell with one seed has no spread: the tables say "(1 seed)" and the
// CSV leaves its std empty instead of printing a std of 0.
func TestOneSeedCellHasNoSpread(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 80, []float64{30, 80}, true)
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 1, 70, []float64{30, 70}, true)
	writeRun(t, root, 1, "hopper-medium", "S4RL-N", "", 0, 88, []float64{30, 88}, true)
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	ref := &Reference{Label: "paper", Source: "Table 1", Scores: map[string]map[string]float64{"hopper-medium": {"S4RL-N": 78.9}}}
	rep, err := Build(runs, Options{Reps: 50, Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	md, tex, csvText, vs := rep.Table.Markdown("dataset"), rep.Table.LaTeX("dataset"), rep.Table.CSV("dataset", "method"), rep.ReferenceTable()
	if !strings.Contains(md, "| 75.0 ± 7.1 | **88.0 (1 seed)** |") || !strings.Contains(tex, "88.0 (1 seed)") || strings.Contains(tex, "88.0 $\\pm$") ||
		!strings.Contains(csvText, "hopper-medium,S4RL-N,88,,1,true") || !strings.Contains(vs, "| 88.0 (1 seed) | 78.9 |") || !strings.Contains(vs, "75.0 ± 7.1 (n=2)") {
		t.Errorf("one-seed cell:\n%s\n%s\n%s\n%s", md, tex, csvText, vs)
	}
}
