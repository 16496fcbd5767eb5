package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withCQL sets a finished run's config: env, augment and a "cql" block, as
// koopq train writes them (seed and data path vary per run and machine).
func withCQL(t *testing.T, root, dataset, method string, seed uint64, env string, cql map[string]any) {
	t.Helper()
	slot := dataset + "__" + method + "__s" + string(rune('0'+seed))
	c := map[string]any{"seed": seed}
	for k, v := range cql {
		c[k] = v
	}
	addToResults(t, root, slot, map[string]any{"config": map[string]any{
		"env": env, "data": "/machine" + string(rune('a'+seed)) + "/data/" + dataset + ".hdf5",
		"augment": strings.ToLower(method), "checkpoint_every": 1000 * (seed + 1), "cql": c}})
}

// The same run given twice (a copy in a second directory) must not count as
// two seeds: before the check the cell read "66.3 ± 0.0" over 2 runs.
func TestDuplicateRunIsAnError(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, root := range []string{a, b} {
		writeRun(t, root, 0, "walker2d-medium", "CQL", "", 0, 66.3, []float64{30, 66.3}, true)
	}
	writeRun(t, a, 1, "walker2d-medium", "CQL", "", 1, 60, []float64{30, 60}, true)
	runs, err := Collect(a, b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(runs, Options{Reps: 50})
	if err == nil || !strings.Contains(err.Error(), "walker2d-medium CQL seed 0 appears twice") {
		t.Fatalf("duplicate seed: got %v", err)
	}
	// Each directory alone is fine.
	if _, rep := collectAndBuild(t, a, Options{Reps: 50}); rep.Table.Rows[0].Cells[0].N() != 2 {
		t.Errorf("cell %+v", rep.Table.Rows[0].Cells[0])
	}

	// Two partial copies of one run are duplicates too; a partial run beside
	// its finished self is not (the finished run replaces its curve).
	p := t.TempDir()
	writeInProgress(t, p, 0, "walker2d-medium", "CQL", 0, []float64{10})
	runs, err = CollectWith(CollectOptions{InProgress: true}, a, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(runs, Options{Reps: 50}); err != nil {
		t.Errorf("finished run beside its partial copy: %v", err)
	}
	q := t.TempDir()
	writeInProgress(t, q, 0, "walker2d-medium", "CQL", 0, []float64{10})
	runs, err = CollectWith(CollectOptions{InProgress: true}, p, q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(runs, Options{Reps: 50}); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("two partial copies: got %v", err)
	}

	// One seed trained twice under different settings says which setting.
	c := t.TempDir()
	writeRun(t, c, 0, "walker2d-medium", "CQL", "", 0, 1.5, []float64{30, 1.5}, true)
	withCQL(t, c, "walker2d-medium", "CQL", 0, "walker2d", map[string]any{"lagrange": true})
	withCQL(t, a, "walker2d-medium", "CQL", 0, "walker2d", map[string]any{"lagrange": false})
	runs, err = Collect(a, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(runs, Options{Reps: 50}); err == nil || !strings.Contains(err.Error(), "seed 0 appears twice, trained with different settings (cql.lagrange = false in") {
		t.Errorf("one seed under two protocols: got %v", err)
	}
}

// Seeds of one cell trained with different settings (here the Lagrange
// loop on and off) must not be pooled; seeds, data paths and checkpoint
// cadence may differ.
func TestCellWithDifferentSettingsIsAnError(t *testing.T) {
	root := t.TempDir()
	for s := uint64(0); s < 3; s++ {
		writeRun(t, root, int(s), "walker2d-medium", "CQL", "", s, 60+float64(s), []float64{30, 60}, true)
		withCQL(t, root, "walker2d-medium", "CQL", s, "walker2d", map[string]any{"lagrange": true, "min_q_weight": 10})
	}
	if _, rep := collectAndBuild(t, root, Options{Reps: 50}); rep.Table.Rows[0].Cells[0].N() != 3 || len(rep.SettingDifferences) != 0 {
		t.Fatalf("cell %+v, differences %v", rep.Table.Rows[0].Cells[0], rep.SettingDifferences)
	}
	withCQL(t, root, "walker2d-medium", "CQL", 2, "walker2d", map[string]any{"lagrange": false, "min_q_weight": 10})
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(runs, Options{Reps: 50})
	if err == nil || !strings.Contains(err.Error(), "walker2d-medium CQL pools runs trained with different settings: cql.lagrange = true in") ||
		!strings.Contains(err.Error(), "but false in") {
		t.Fatalf("mixed settings: got %v", err)
	}
	// A setting an older koopq did not write is not compared.
	withCQL(t, root, "walker2d-medium", "CQL", 2, "walker2d", map[string]any{"min_q_weight": 10})
	if _, rep := collectAndBuild(t, root, Options{Reps: 50}); rep.Table.Rows[0].Cells[0].N() != 3 {
		t.Errorf("cell %+v", rep.Table.Rows[0].Cells[0])
	}

	// Every pair is compared: the first run lacking the key does not hide
	// a conflict between the others.
	withCQL(t, root, "walker2d-medium", "CQL", 0, "walker2d", map[string]any{"min_q_weight": 10})
	withCQL(t, root, "walker2d-medium", "CQL", 2, "walker2d", map[string]any{"lagrange": false, "min_q_weight": 10})
	runs, err = Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = Build(runs, Options{Reps: 50}); err == nil || !strings.Contains(err.Error(), "cql.lagrange = true in") {
		t.Errorf("conflict behind a run without the key: got %v", err)
	}
	withCQL(t, root, "walker2d-medium", "CQL", 2, "walker2d", map[string]any{"min_q_weight": 10})

	// An unfinished run of the cell is held to the same settings.
	writeInProgress(t, root, 3, "walker2d-medium", "CQL", 5, []float64{10})
	cfg := filepath.Join(root, "walker2d-medium__CQL__s5", "run-20260101-000000", "config.json")
	os.WriteFile(cfg, []byte(`{"env":"walker2d","augment":"cql","cql":{"seed":5,"lagrange":false,"min_q_weight":10}}`), 0o644)
	runs, err = CollectWith(CollectOptions{InProgress: true}, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = Build(runs, Options{Reps: 50}); err == nil || !strings.Contains(err.Error(), "cql.lagrange") {
		t.Errorf("unfinished run with other settings: got %v", err)
	}
}

// A method run under different settings on different datasets is reported,
// beside the table, as a difference between datasets; methods that differ
// the same way share one line, env never counts.
func TestSettingDifferencesBetweenDatasets(t *testing.T) {
	root := t.TempDir()
	i := 0
	for _, d := range []string{"hopper-medium", "walker2d-medium"} {
		env := strings.TrimSuffix(d, "-medium")
		for _, m := range []string{"CQL", "KFC++"} {
			for s := uint64(0); s < 2; s++ {
				writeRun(t, root, i, d, m, "", s, 50+float64(i), []float64{20, 50}, true)
				withCQL(t, root, d, m, s, env, map[string]any{"lagrange": d == "hopper-medium", "min_q_weight": 10})
				i++
			}
		}
	}
	_, rep := collectAndBuild(t, root, Options{Reps: 50})
	if len(rep.SettingDifferences) != 1 {
		t.Fatalf("differences %+v, want one (cql.lagrange)", rep.SettingDifferences)
	}
	want := "cql.lagrange: true on hopper-medium; false on walker2d-medium (CQL, KFC++)"
	if got := rep.SettingDifferences[0].String(); got != want {
		t.Errorf("difference %q, want %q", got, want)
	}
	out := filepath.Join(root, "out")
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"table.md", "summary.md", "report.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "cql.lagrange") {
			t.Errorf("%s does not name the differing setting:\n%s", f, b)
		}
	}
}

func TestBulletNote(t *testing.T) {
	if got := bulletNote("Title", "(detail):", []SettingDifference(nil)); got != "" {
		t.Errorf("no items: %q, want \"\"", got)
	}
	d := SettingDifference{Key: "cql.lagrange"}
	got := bulletNote("Title", "(detail):", []SettingDifference{d, d})
	want := "\n**Title** (detail):\n\n- " + d.String() + "\n- " + d.String() + "\n"
	if got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}
