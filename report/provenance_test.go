package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runPath is the run directory writeRun makes for a sweep slot.
func runPath(root, dataset, method string, seed uint64) string {
	return filepath.Join(root, dataset+"__"+method+"__s"+string(rune('0'+seed)), "run-20260101-000000")
}

// withInputs records a finished run's input fingerprints in its
// results.json as koopq train writes them: the dataset's content sha256
// and, when model is set, the Koopman model's path and sha256. given
// names the model in the run's config (--koopman); otherwise the model is
// the run's own koopman.safetensors.
func withInputs(t *testing.T, root, dataset, method string, seed uint64, content, model string, given bool) {
	t.Helper()
	dir := runPath(root, dataset, method, seed)
	cfg := map[string]any{"env": "pendulum", "data": "data/" + dataset + ".hdf5", "augment": strings.ToLower(method)}
	in := map[string]any{"dataset": map[string]any{"path": "data/" + dataset + ".hdf5", "sha256": "f" + content, "content_sha256": content, "transitions": 300}}
	if model != "" {
		path := filepath.Join(dir, "koopman.safetensors")
		if given {
			path = "/models/" + model + ".safetensors"
			cfg["koopman_model"] = path
		}
		in["koopman_model"] = map[string]any{"path": path, "sha256": model, "bytes": 100}
	}
	addToResults(t, root, filepath.Base(filepath.Dir(dir)), map[string]any{"config": cfg, "inputs": in})
}

func buildErr(t *testing.T, dirs ...string) error {
	t.Helper()
	runs, err := Collect(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(runs, Options{Reps: 50})
	return err
}

// Issue 66 item 1: a sweep rerun with another --data-root trained a seed
// on other data and the report averaged it into the cell. Seeds of a cell
// on different transitions, and methods of one dataset's row on different
// transitions, are now refused by name; runs from before koopq recorded
// inputs are not compared.
func TestReportRefusesRunsOnDifferentData(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaa0000", "bbbbbbbbbbbbbbbb0000"
	root := t.TempDir()
	for s := uint64(0); s < 3; s++ {
		writeRun(t, root, 0, "hopper-medium", "CQL", "", s, 50+float64(s), []float64{50}, true)
	}
	withInputs(t, root, "hopper-medium", "CQL", 0, a, "", false)
	withInputs(t, root, "hopper-medium", "CQL", 1, a, "", false)
	if err := buildErr(t, root); err != nil { // seed 2 has no inputs: not compared
		t.Fatalf("same data and a run without inputs: %v", err)
	}
	withInputs(t, root, "hopper-medium", "CQL", 2, b, "", false)
	err := buildErr(t, root)
	for _, want := range []string{"hopper-medium CQL pools runs trained on different data", "aaaaaaaaaaaa in " + runPath(root, "hopper-medium", "CQL", 0),
		"bbbbbbbbbbbb in " + runPath(root, "hopper-medium", "CQL", 2)} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cell on two datasets: error %v, want %q", err, want)
		}
	}

	// Another method of the same row on other data.
	row := t.TempDir()
	writeRun(t, row, 0, "hopper-medium", "CQL", "", 0, 50, []float64{50}, true)
	writeRun(t, row, 1, "hopper-medium", "KFC", "", 0, 60, []float64{60}, true)
	writeRun(t, row, 2, "walker-medium", "KFC", "", 0, 60, []float64{60}, true)
	withInputs(t, row, "hopper-medium", "CQL", 0, a, "", false)
	withInputs(t, row, "walker-medium", "KFC", 0, b, "", false)
	if err := buildErr(t, row); err != nil { // other datasets differ by definition
		t.Fatalf("two datasets: %v", err)
	}
	withInputs(t, row, "hopper-medium", "KFC", 0, b, "", false)
	err = buildErr(t, row)
	if err == nil || !strings.Contains(err.Error(), "hopper-medium: CQL and KFC trained on different data") ||
		!strings.Contains(err.Error(), "aaaaaaaaaaaa in "+runPath(row, "hopper-medium", "CQL", 0)) {
		t.Errorf("row on two datasets: %v", err)
	}

	// An in-progress run is compared through its inputs.json.
	p := t.TempDir()
	writeInProgress(t, p, 0, "hopper-medium", "CQL", 5, []float64{10})
	in, _ := json.Marshal(map[string]any{"dataset": map[string]any{"content_sha256": b}})
	if err := os.WriteFile(filepath.Join(runPath(p, "hopper-medium", "CQL", 5), "inputs.json"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := CollectWith(CollectOptions{InProgress: true}, root, p)
	if err != nil {
		t.Fatal(err)
	}
	if runs[len(runs)-1].Inputs.DatasetContent != b {
		t.Fatalf("in-progress run's inputs %+v", runs[len(runs)-1].Inputs)
	}
}

// Seeds of one method on different given Koopman models, or a given model
// beside models the runs trained themselves, are two protocols; runs that
// each trained their own model differ by design.
func TestReportRefusesRunsOnDifferentKoopmanModels(t *testing.T) {
	const data = "dddddddddddddddd"
	setup := func(m0, m1 string, g0, g1 bool) string {
		root := t.TempDir()
		for s, m := range []string{m0, m1} {
			writeRun(t, root, 0, "hopper-medium", "KFC", "", uint64(s), 60, []float64{60}, true)
			withInputs(t, root, "hopper-medium", "KFC", uint64(s), data, m, []bool{g0, g1}[s])
		}
		return root
	}
	if err := buildErr(t, setup("111111111111aa", "222222222222bb", false, false)); err != nil {
		t.Errorf("own models per seed: %v", err)
	}
	if err := buildErr(t, setup("111111111111aa", "111111111111aa", true, true)); err != nil {
		t.Errorf("one given model: %v", err)
	}
	root := setup("111111111111aa", "222222222222bb", true, true)
	err := buildErr(t, root)
	if err == nil || !strings.Contains(err.Error(), "hopper-medium KFC pools runs that used different Koopman models: /models/111111111111aa.safetensors (sha256 111111111111) in "+
		runPath(root, "hopper-medium", "KFC", 0)) || !strings.Contains(err.Error(), "(sha256 222222222222) in "+runPath(root, "hopper-medium", "KFC", 1)) {
		t.Errorf("two given models: %v", err)
	}
	root = setup("111111111111aa", "222222222222bb", false, true)
	err = buildErr(t, root)
	if err == nil || !strings.Contains(err.Error(), "used a given Koopman model (/models/222222222222bb.safetensors, sha256 222222222222, in "+
		runPath(root, "hopper-medium", "KFC", 1)+") with runs that trained their own ("+runPath(root, "hopper-medium", "KFC", 0)+")") {
		t.Errorf("given and own models: %v", err)
	}
}

// Issue 66: the report did not say when a cell's runs came from different
// builds, and labelled a run resumed in bf16 after starting in f32 "bf16".
// A cell trained by several commits or a +dirty build is now flagged in
// table.md, summary.md and report.json, and the half-f32 run is labelled
// by its segments.
func TestProvenanceNotesAndMixedPrecision(t *testing.T) {
	seg := func(from, to int, commit string, dirty bool, prec string) map[string]any {
		return map[string]any{"from_step": from, "to_step": to, "wall_seconds": 1, "provenance": map[string]any{
			"hostname": "h", "git_commit": commit, "git_dirty": dirty, "git_commit_source": "build", "blas": "onednn", "blas_precision": prec,
			"blas_isa": "avx512_core_bf16"}}
	}
	// A seed trained on another machine: OpenBLAS where AVX-512 was missing.
	other := func(s map[string]any) map[string]any {
		p := s["provenance"].(map[string]any)
		p["blas"], p["blas_isa"] = "openblas", "Zen"
		return s
	}
	root := t.TempDir()
	for s := uint64(0); s < 2; s++ {
		writeRun(t, root, 0, "hopper-medium", "CQL", "", s, 50, []float64{50}, true)
		writeRun(t, root, 1, "hopper-medium", "KFC", "", s, 60, []float64{60}, true)
		writeRun(t, root, 2, "walker-medium", "CQL", "", s, 70, []float64{70}, true)
		writeRun(t, root, 3, "ant-medium", "CQL", "", s, 70, []float64{70}, true)
		writeRun(t, root, 4, "cheetah-medium", "CQL", "", s, 70, []float64{70}, true)
	}
	// An unstamped binary (its commit is the checkout's HEAD) and one that
	// knew no commit: flagged like a +dirty build (they went unflagged).
	for s := uint64(0); s < 2; s++ {
		unstamped := seg(0, 100, "3333333cccc", false, "f32")
		unstamped["provenance"].(map[string]any)["git_commit_source"] = "checkout"
		addToResults(t, root, fmt.Sprintf("ant-medium__CQL__s%d", s), map[string]any{"segments": []any{unstamped}})
		unknown := seg(0, 100, "unknown", false, "f32")
		unknown["provenance"].(map[string]any)["git_commit_source"] = ""
		addToResults(t, root, fmt.Sprintf("cheetah-medium__CQL__s%d", s), map[string]any{"segments": []any{unknown}})
	}
	addToResults(t, root, "hopper-medium__CQL__s0", map[string]any{"segments": []any{seg(0, 100, "1111111aaaa", false, "f32")}})
	addToResults(t, root, "hopper-medium__CQL__s1", map[string]any{"segments": []any{seg(0, 50, "1111111aaaa", false, "f32"), seg(50, 100, "2222222bbbb", false, "f32")}})
	addToResults(t, root, "hopper-medium__KFC__s0", map[string]any{"segments": []any{seg(0, 100, "1111111aaaa", false, "f32")}})
	addToResults(t, root, "hopper-medium__KFC__s1", map[string]any{"segments": []any{other(seg(0, 100, "1111111aaaa", false, "f32"))}})
	addToResults(t, root, "walker-medium__CQL__s0", map[string]any{"segments": []any{seg(0, 100, "1111111aaaa", true, "f32")}})
	addToResults(t, root, "walker-medium__CQL__s1", map[string]any{"segments": []any{seg(0, 50, "1111111aaaa", true, "f32"), seg(50, 100, "1111111aaaa", true, "bf16")}})
	_, rep := collectAndBuild(t, root, Options{Reps: 50})
	want := []string{
		"hopper-medium CQL: trained by commits 1111111 (seeds 0, 1), 2222222 (seed 1)",
		"hopper-medium KFC: GEMM backends onednn avx512_core_bf16 (seed 0), openblas Zen (seed 1)",
		"walker-medium CQL: trained by commits 1111111+dirty (seeds 0, 1); GEMM precisions f32 (seeds 0, 1), bf16 (seed 1)",
		"ant-medium CQL: trained by commits 3333333+unstamped (seeds 0, 1)",
		"cheetah-medium CQL: trained by commits unknown (seeds 0, 1)",
	}
	var notes []string
	for _, n := range rep.ProvenanceNotes {
		notes = append(notes, n.String())
	}
	if !slices.Equal(notes, want) {
		t.Fatalf("provenance notes %v, want %q", rep.ProvenanceNotes, want)
	}
	// Each hopper cell is flagged for itself; the pairs across cells are
	// flagged seed by seed: seed 1's KFC ran on another machine than its
	// CQL run, which was resumed by another commit. Seed 0 was alike.
	wantPair := "KFC − CQL, hopper-medium seed 1: koopq commit 1111111 vs 1111111 + 2222222; GEMM backend openblas Zen vs onednn avx512_core_bf16"
	var mism []PairMismatch
	for _, d := range rep.Paired {
		if d.Method == "KFC" && d.Over == "CQL" && d.Dataset == "hopper-medium" {
			mism = d.Mismatches
		}
	}
	if len(mism) != 1 || "KFC − CQL, "+mism[0].String() != wantPair {
		t.Errorf("pair mismatches %v, want one: %q", mism, wantPair)
	}
	if md := rep.PairedMarkdown(); !strings.Contains(md, "**Pairs trained unlike**") || !strings.Contains(md, wantPair) {
		t.Errorf("paired table lacks the pair note %q:\n%s", wantPair, md)
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"table.md", "summary.md", "report.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if f == "report.json" {
				w = `"value": "2222222"`
			}
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q:\n%s", f, w, b)
			}
		}
		if f != "report.json" && !strings.Contains(string(b), "**Provenance notes**") {
			t.Errorf("%s has no provenance notes heading", f)
		}
	}

	// Outside a sweep, a run resumed in bf16 after f32 is not "bf16".
	solo := t.TempDir()
	for i, segs := range [][]any{{seg(0, 100, "1111111", false, "bf16")}, {seg(0, 50, "1111111", false, "f32"), seg(50, 100, "1111111", false, "bf16")}} {
		dir := filepath.Join(solo, "run-"+string(rune('a'+i)))
		os.MkdirAll(dir, 0o755)
		b, _ := json.Marshal(map[string]any{"config": map[string]any{"env": "hopper", "data": "d/hopper-medium-v2.hdf5", "augment": "kfc++"},
			"seed": i, "steps": 100, "final_eval": map[string]any{"normalized_score": 30}, "history": []any{map[string]any{"step": 100, "normalized_score": 30}},
			"provenance": map[string]any{"blas_precision": "bf16"}, "segments": segs})
		if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := Collect(solo)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range runs {
		got[r.Method+" / "+r.Precision] = true
	}
	if !got["kfc++ bf16 / bf16"] || !got["kfc++ mixed f32/bf16 / mixed f32/bf16"] {
		t.Errorf("labels %v, want kfc++ bf16 and kfc++ mixed f32/bf16", got)
	}
}
