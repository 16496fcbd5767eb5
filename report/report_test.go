package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writeRun makes a finished run directory as koopq train and koopq sweep
// leave it: <root>/<slot>/run/results.json (+ sweep-run.json in the slot
// when sweep is true).
func writeRun(t *testing.T, root string, index int, dataset, method, base string, seed uint64, final float64, hist []float64, sweep bool) {
	t.Helper()
	slot := filepath.Join(root, fmt.Sprintf("%s__%s__s%d", dataset, method, seed))
	dir := filepath.Join(slot, "run-20260101-000000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	type pt struct {
		Step  int     `json:"step"`
		Score float64 `json:"normalized_score"`
	}
	var h []pt
	for i, v := range hist {
		h = append(h, pt{100 * (i + 1), v})
	}
	res := map[string]any{
		"config":     map[string]any{"env": "pendulum", "data": "data/" + dataset + ".hdf5", "augment": strings.ToLower(method)},
		"seed":       seed,
		"steps":      100 * len(hist),
		"final_eval": map[string]any{"normalized_score": final},
		"history":    h,
	}
	b, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if sweep {
		sr := map[string]any{"index": index, "dataset": dataset, "method": method, "ablation": base != "", "base": base}
		b, _ := json.Marshal(sr)
		if err := os.WriteFile(filepath.Join(slot, "sweep-run.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReportFromRunDirectories(t *testing.T) {
	root := t.TempDir()
	// Spec order: datasets hopper-medium then walker-medium; methods CQL, KFC.
	i := 0
	scores := map[string][]float64{
		"hopper-medium/CQL": {50, 54}, "hopper-medium/KFC": {60, 64},
		"walker-medium/CQL": {80, 70}, "walker-medium/KFC": {72, 74},
	}
	for _, d := range []string{"hopper-medium", "walker-medium"} {
		for _, m := range []string{"CQL", "KFC"} {
			for s, v := range scores[d+"/"+m] {
				writeRun(t, root, i, d, m, "", uint64(s), v, []float64{v / 2, v}, true)
				i++
			}
		}
	}
	writeRun(t, root, i, "hopper-medium", "KFC-no-shift", "KFC", 0, 40, []float64{10, 40}, true)
	writeRun(t, root, i+1, "hopper-medium", "KFC-no-shift", "KFC", 1, 44, []float64{12, 44}, true)

	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 10 {
		t.Fatalf("collected %d runs, want 10", len(runs))
	}
	rep, err := Build(runs, Options{Reps: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Datasets, ",") != "hopper-medium,walker-medium" || strings.Join(rep.Methods, ",") != "CQL,KFC" {
		t.Fatalf("datasets %v methods %v", rep.Datasets, rep.Methods)
	}
	if rep.Baseline != "CQL" {
		t.Errorf("baseline %q", rep.Baseline)
	}
	// hopper: CQL 52 ± 2.83, KFC 62 ± 2.83 (best); walker: CQL 75 ± 7.07 (best), KFC 73 ± 1.41.
	c := rep.Table.Rows[0].Cells
	if c[0].Mean != 52 || !near(c[0].Std, math.Sqrt(8), 1e-12) || c[0].Best || !c[1].Best || c[1].Mean != 62 {
		t.Errorf("hopper row %+v", c)
	}
	c = rep.Table.Rows[1].Cells
	if c[0].Mean != 75 || !c[0].Best || c[1].Best {
		t.Errorf("walker row %+v", c)
	}
	md := rep.Table.Markdown("dataset")
	if !strings.Contains(md, "| hopper-medium | 52.0 ± 2.8 | **62.0 ± 2.8** |") || !strings.Contains(md, "| walker-medium | **75.0 ± 7.1** | 73.0 ± 1.4 |") {
		t.Errorf("markdown table:\n%s", md)
	}
	tex := rep.Table.LaTeX("dataset")
	if !strings.Contains(tex, `hopper-medium & 52.0 $\pm$ 2.8 & \textbf{62.0 $\pm$ 2.8} \\`) {
		t.Errorf("latex table:\n%s", tex)
	}
	csv := rep.Table.CSV("dataset", "method")
	if !strings.Contains(csv, "hopper-medium,KFC,62,2.828427125,2,true") {
		t.Errorf("csv:\n%s", csv)
	}
	// IQM of CQL over {50, 54, 80, 70}: drop 50 and 80 → 62. KFC {60, 64, 72, 74} → 68.
	if rep.IQM[0].Value != 62 || rep.IQM[1].Value != 68 {
		t.Errorf("IQM %+v", rep.IQM)
	}
	// P(KFC > CQL): hopper 1; walker pairs (72,80) (72,70) (74,80) (74,70) → ½ → 0.75.
	if len(rep.PoI) != 1 || rep.PoI[0].Method != "KFC" || rep.PoI[0].Value != 0.75 {
		t.Errorf("PoI %+v", rep.PoI)
	}
	if !(rep.PoI[0].Lo <= 0.75 && rep.PoI[0].Hi >= 0.75) {
		t.Errorf("PoI interval %+v does not hold its estimate", rep.PoI[0])
	}
	// Curves: mean over seeds at steps 100, 200.
	cv := rep.Curves[0].Curves[0]
	if fmt.Sprint(cv.Steps) != "[100 200]" || cv.Mean[0] != 26 || cv.Mean[1] != 52 {
		t.Errorf("hopper CQL curve %+v", cv)
	}
	if rep.Ablations == nil || len(rep.Ablations.Rows) != 2 || rep.Ablations.Rows[0].Name != "KFC" || rep.Ablations.Rows[1].Name != "KFC-no-shift" ||
		rep.Ablations.Rows[1].Cells[0].Mean != 42 || !rep.Ablations.Rows[0].Cells[0].Best {
		t.Errorf("ablations %+v", rep.Ablations)
	}

	out := filepath.Join(root, "report")
	files, err := rep.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"table.md", "table.csv", "table.tex", "summary.md", "ablations.md", "report.json",
		"performance-profiles.png", "performance-profiles.svg", "iqm.png", "iqm.svg",
		"curves-hopper-medium.png", "curves-hopper-medium.svg", "curves-walker-medium.png", "curves-walker-medium.svg"} {
		p := filepath.Join(out, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s missing (wrote %v)", name, files)
			continue
		}
		// Headers, titles and legends are prose: no Go identifier (a
		// package-qualified name such as stats.IQM) may leak into them.
		if leak := regexp.MustCompile(`\b[a-z]+\.[A-Z][A-Za-z]+\b`).Find(b); leak != nil && filepath.Ext(name) != ".png" {
			t.Errorf("%s shows the Go identifier %q", name, leak)
		}
		switch filepath.Ext(name) {
		case ".png":
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) {
				t.Errorf("%s is not an SVG", name)
			}
		}
	}
	var back map[string]any
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	iqm := back["iqm"].([]any)[1].(map[string]any)
	if iqm["method"] != "KFC" || iqm["value"] != 68.0 {
		t.Errorf("report.json iqm: %v", iqm)
	}

	// The same runs and seed give the same report.json.
	rep2, _ := Build(runs, Options{Reps: 300, Seed: 1})
	j1, _ := json.Marshal(rep)
	j2, _ := json.Marshal(rep2)
	if !bytes.Equal(j1, j2) {
		t.Error("report not reproducible with the same seed")
	}
}

func TestCollectWithoutSweepLabels(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "pendulum-medium", "none", "", 0, 10, []float64{5, 10}, false)
	writeRun(t, root, 0, "pendulum-medium", "gaussian", "", 0, 12, []float64{6, 12}, false)
	runs, rep := collectAndBuild(t, root, Options{Reps: 100})
	// Labels from the data file and the augmentation (none, plain CQL's
	// old name, is labelled cql); baseline = plain CQL.
	if rep.Datasets[0] != "pendulum-medium" || rep.Baseline != "cql" || len(rep.PoI) != 1 || rep.PoI[0].Value != 1 {
		t.Errorf("datasets %v baseline %q PoI %+v", rep.Datasets, rep.Baseline, rep.PoI)
	}
	if _, err := Build(runs, Options{Baseline: "CQL"}); err == nil || !strings.Contains(err.Error(), `baseline "CQL"`) {
		t.Errorf("unknown baseline: err = %v", err)
	}
}

func TestCollectErrors(t *testing.T) {
	if _, err := Collect(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no results.json") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := Collect(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("missing dir: no error")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "r")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"config":{"env":"cartpole"},"final_eval":{"normalized_score":null,"episodes":10}}`), 0o644)
	if _, err := Collect(root); err == nil || !strings.Contains(err.Error(), "no normalized score") {
		t.Errorf("NaN score: %v", err)
	}
	// Without a final evaluation at all it said "no reference returns".
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"config":{"env":"pendulum"}}`), 0o644)
	if _, err := Collect(root); err == nil || !strings.Contains(err.Error(), "records no final evaluation") {
		t.Errorf("no final_eval: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{`), 0o644)
	if _, err := Collect(root); err == nil || !strings.Contains(err.Error(), "results.json") {
		t.Errorf("torn JSON: %v", err)
	}
}

// Runs of one augmentation at both GEMM precisions are two methods ("kfc++"
// and "kfc++ bf16"), and their logged Q values become Q curves, drawn as a
// second panel of the dataset's curves figure.
func TestPrecisionLabelsAndQCurves(t *testing.T) {
	root := t.TempDir()
	for i, prec := range []string{"f32", "bf16"} {
		dir := filepath.Join(root, "run-"+prec)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		res := map[string]any{
			"config":     map[string]any{"env": "hopper", "data": "d/hopper-medium-v2.hdf5", "augment": "kfc++"},
			"seed":       0,
			"steps":      200,
			"final_eval": map[string]any{"normalized_score": 30 + i},
			"history":    []map[string]any{{"step": 100, "normalized_score": 20}, {"step": 200, "normalized_score": 30 + i}},
			"provenance": map[string]any{"blas_precision": prec},
		}
		b, _ := json.Marshal(res)
		if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		rows := fmt.Sprintf("{\"step\":100,\"q_data\":%d,\"q_loss\":1}\n{\"step\":200,\"q_data\":%d}\n", 10+i, 20+i)
		if err := os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(rows), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, rep := collectAndBuild(t, root, Options{Reps: 50})
	if !slices.Equal(rep.Methods, []string{"kfc++", "kfc++ bf16"}) {
		t.Fatalf("methods %v, want kfc++ and kfc++ bf16", rep.Methods)
	}
	dc := rep.Curves[0]
	if len(dc.QCurves) != 2 {
		t.Fatalf("%d Q curves, want 2", len(dc.QCurves))
	}
	for i, q := range dc.QCurves {
		if want := []float64{float64(10 + i), float64(20 + i)}; !slices.Equal(q.Mean, want) || !slices.Equal(q.Steps, []int{100, 200}) {
			t.Errorf("%s: Q curve steps %v mean %v, want [100 200] %v", q.Method, q.Steps, q.Mean, want)
		}
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	if w, h := pngSize(t, filepath.Join(out, "curves-hopper-medium-v2.png")); w < 2*h { // two 5.5×3.8 in panels side by side
		t.Errorf("curves figure is %d×%d, want two panels side by side", w, h)
	}
}

// pngSize returns the width and height of a PNG file.
func pngSize(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

// writeMetrics puts a run's training log beside its results.json, as
// metrics.jsonl and/or metrics.csv (koopq train writes both; a results
// directory may keep only the CSV).
func writeMetrics(t *testing.T, root, dataset, method string, seed uint64, name, text string) {
	t.Helper()
	p := filepath.Join(root, fmt.Sprintf("%s__%s__s%d", dataset, method, seed), "run-20260101-000000", name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run's logged statistics come from metrics.jsonl when it is there and
// from metrics.csv otherwise; bookkeeping columns are not statistics.
func TestTrainStatisticsFromJSONLOrCSV(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{50}, true)
	writeRun(t, root, 1, "hopper-medium", "KFC++", "", 0, 40, []float64{40}, true)
	csvText := "step,alpha_prime,q_data,wall_seconds\n1000,1.5,12.25,3.5\n2000,,13.5,7\n"
	writeMetrics(t, root, "hopper-medium", "CQL", 0, "metrics.csv", csvText)
	writeMetrics(t, root, "hopper-medium", "KFC++", 0, "metrics.csv", csvText)
	writeMetrics(t, root, "hopper-medium", "KFC++", 0, "metrics.jsonl",
		`{"step":1000,"alpha_prime":0.75,"q_data":11,"wall_seconds":3}`+"\n"+`{"step":2000,"alpha_prime":0.5,"q_data":14,"wall_seconds":6}`+"\n")
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][]Point{
		"CQL":   {"alpha_prime": {{1000, 1.5}}, "q_data": {{1000, 12.25}, {2000, 13.5}}},
		"KFC++": {"alpha_prime": {{1000, 0.75}, {2000, 0.5}}, "q_data": {{1000, 11}, {2000, 14}}},
	}
	for _, r := range runs {
		w := want[r.Method]
		if len(r.Train) != len(w) {
			t.Errorf("%s: columns %v, want %d (step and wall_seconds are not statistics)", r.Method, r.Train, len(w))
		}
		for k, pts := range w {
			if !slices.Equal(r.Train[k], pts) {
				t.Errorf("%s: %s = %v, want %v", r.Method, k, r.Train[k], pts)
			}
		}
	}
}

// Issue 66 item 9: an empty metrics.jsonl dropped the run from the
// diagnostics and a truncated one shortened its curves although
// metrics.csv had every row. Steps the JSONL lacks now come from the CSV
// (the JSONL's own rows win); a CSV line still being written (no newline
// yet) is not a row.
func TestTrainStatisticsFillFromCSV(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{50}, true)
	writeRun(t, root, 1, "hopper-medium", "KFC++", "", 0, 40, []float64{40}, true)
	csvText := "step,q_data,wall_seconds\n1000,1.5,1\n2000,2.5,2\n3000,3.5,3\n"
	writeMetrics(t, root, "hopper-medium", "CQL", 0, "metrics.csv", csvText)
	writeMetrics(t, root, "hopper-medium", "CQL", 0, "metrics.jsonl", "")
	writeMetrics(t, root, "hopper-medium", "KFC++", 0, "metrics.csv", csvText+"4000,4.")
	writeMetrics(t, root, "hopper-medium", "KFC++", 0, "metrics.jsonl", `{"step":1000,"q_data":1.25,"wall_seconds":1}`+"\n")
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Point{
		"CQL":   {{1000, 1.5}, {2000, 2.5}, {3000, 3.5}},
		"KFC++": {{1000, 1.25}, {2000, 2.5}, {3000, 3.5}},
	}
	for _, r := range runs {
		if len(r.Train) != 1 || !slices.Equal(r.Train["q_data"], want[r.Method]) {
			t.Errorf("%s: statistics %v, want q_data %v", r.Method, r.Train, want[r.Method])
		}
	}
}

// A training log that does not parse is an error that names the file and
// line, not a silently shorter curve.
func TestBadTrainingLogIsAnError(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"metrics.csv", "step,q_data\n1000,1\n2000,x\n", "metrics.csv:3: q_data"},
		{"metrics.csv", "step,q_data\n1000,1\nabc,2\n", "metrics.csv:3: step"},
		{"metrics.csv", "q_data,alpha\n1,2\n", `no "step" column`},
		{"metrics.csv", "step,q_data\n1000,1,5\n", "metrics.csv"},
		{"metrics.jsonl", "{\"step\":1000,\"q_data\":1}\n{\"step\":20\n", "metrics.jsonl:2"},
		{"metrics.jsonl", "{\"q_data\":1}\n", `metrics.jsonl:1: no integer "step"`},
		{"metrics.jsonl", "{\"step\":1.5,\"q_data\":1}\n", `metrics.jsonl:1: no integer "step"`},
	} {
		root := t.TempDir()
		writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{50}, true)
		writeMetrics(t, root, "hopper-medium", "CQL", 0, c.name, c.text)
		_, err := Collect(root)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want one containing %q", c.name, c.text, err, c.want)
		}
	}
}

// The diagnostics table averages each run's statistics over its last fifth
// of training and then over seeds; ablations follow the main methods, and
// α′ curves become a third panel of the curves figure.
func TestDiagnosticsTable(t *testing.T) {
	root := t.TempDir()
	// log steps 1000..10000: the window is steps 9000 and 10000 (> 8000).
	logOf := func(alpha func(step int) float64) string {
		var b strings.Builder
		b.WriteString("step,alpha_prime,q_data,q_loss\n")
		for s := 1000; s <= 10000; s += 1000 {
			// The critic loss is step/1000 (1…10) except for a spike to
			// 100·α′(5000) at step 5000: its peak column sees the spike, the
			// end mean (steps 9000, 10000) does not, and the median after
			// the first fifth (steps 3000…10000) is 7.5 whatever the spike.
			loss := float64(s) / 1000
			if s == 5000 {
				loss = 100 * alpha(s)
			}
			fmt.Fprintf(&b, "%d,%g,%d,%g\n", s, alpha(s), s/100, loss)
		}
		return b.String()
	}
	i := 0
	for _, m := range []string{"CQL", "KFC++"} {
		for seed := uint64(0); seed < 2; seed++ {
			writeRun(t, root, i, "hopper-medium", m, "", seed, 50, []float64{40, 50}, true)
			scale := 1.0
			if m == "KFC++" {
				scale = 0.25
			}
			off := float64(seed)
			writeMetrics(t, root, "hopper-medium", m, seed, "metrics.csv", logOf(func(s int) float64 { return scale * (float64(s)/1000 + off) }))
			i++
		}
	}
	writeRun(t, root, i, "hopper-medium", "KFC++-residual", "KFC++", 0, 45, []float64{30, 45}, true)
	writeMetrics(t, root, "hopper-medium", "KFC++-residual", 0, "metrics.csv", logOf(func(int) float64 { return 0.5 }))
	_, rep := collectAndBuild(t, root, Options{Reps: 50})
	d := rep.Diagnostics
	if d == nil {
		t.Fatal("no diagnostics")
	}
	if !slices.Equal(d.Columns, []string{"q_data", "alpha_prime", "q_loss", "q_loss_peak", "q_loss_median"}) {
		t.Fatalf("columns %v, want q_data, alpha_prime, q_loss, q_loss_peak and q_loss_median in DiagnosticColumns' order", d.Columns)
	}
	// Critic loss: end mean 9.5 and median 7.5 in every run; peak
	// 100·α′(5000): CQL seeds 0 and 1 → 500 and 600, KFC++ a quarter,
	// KFC++-residual 50.
	for k, w := range []struct{ peak, std float64 }{{550, math.Sqrt(5000)}, {137.5, math.Sqrt(5000) / 4}, {50, 0}} {
		end, pk, med := d.Rows[k].Cells[2], d.Rows[k].Cells[3], d.Rows[k].Cells[4]
		if math.Abs(end.Mean-9.5) > 1e-12 || math.Abs(pk.Mean-w.peak) > 1e-9 || (pk.N() > 1 && math.Abs(pk.Std-w.std) > 1e-9) ||
			med.Mean != 7.5 || med.Std > 0 {
			t.Errorf("row %d: critic loss %v, peak %v ± %v, median %v ± %v; want 9.5, %v ± %v and 7.5", k, end.Mean, pk.Mean, pk.Std, med.Mean, med.Std, w.peak, w.std)
		}
	}
	// CQL seed 0: α′ mean of 9 and 10 = 9.5; seed 1: 10.5 → 10 ± 0.707.
	// KFC++: a quarter of that. q_data: mean of 90 and 100 = 95 for all.
	wantRows := []struct {
		method     string
		alpha, std float64
		n          int
		qdata      float64
	}{{"CQL", 10, math.Sqrt(0.5), 2, 95}, {"KFC++", 2.5, math.Sqrt(0.5) / 4, 2, 95}, {"KFC++-residual", 0.5, 0, 1, 95}}
	if len(d.Rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d: %+v", len(d.Rows), len(wantRows), d.Rows)
	}
	for k, w := range wantRows {
		r := d.Rows[k]
		q, a := r.Cells[0], r.Cells[1]
		if r.Method != w.method || r.Dataset != "hopper-medium" || a.N() != w.n ||
			math.Abs(a.Mean-w.alpha) > 1e-12 || math.Abs(q.Mean-w.qdata) > 1e-12 || (w.n > 1 && math.Abs(a.Std-w.std) > 1e-12) {
			t.Errorf("row %d: %s %s α′ %v ± %v (n %d), Q %v; want %s α′ %v ± %v (n %d), Q %v",
				k, r.Dataset, r.Method, a.Mean, a.Std, a.N(), q.Mean, w.method, w.alpha, w.std, w.n, w.qdata)
		}
	}
	md := d.Markdown()
	if !strings.Contains(md, "| hopper-medium | KFC++ | 2 | 95 ± 0 | 2.5 ± 0.18 | 9.5 ± 0 | 137.5 ± 18 | 7.5 ± 0 |") || !strings.Contains(md, "critic loss peak | critic loss median |") {
		t.Errorf("diagnostics markdown lacks the KFC++ row:\n%s", md)
	}
	if !strings.Contains(rep.Summary(), "## Training diagnostics") {
		t.Error("summary has no diagnostics section")
	}
	// The section's heading states both windows (a bad format verb once
	// printed "%!f(BADINDEX)" for the second); no verb error anywhere.
	if sum := rep.Summary(); !strings.Contains(sum, "last 20% of logged steps") || !strings.Contains(sum, "its median after the first 20% of logged steps") || strings.Contains(sum, "%!") ||
		!strings.Contains(sum, "critic loss peak | critic loss median |") {
		t.Errorf("summary's diagnostics heading:\n%s", sum)
	}
	if len(rep.Curves[0].AlphaPrimeCurves) != 2 {
		t.Errorf("%d α′ curves, want 2 (main methods only)", len(rep.Curves[0].AlphaPrimeCurves))
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "diagnostics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "hopper-medium,CQL,alpha_prime,10,0.7071067812,2\n") || !strings.Contains(string(b), "hopper-medium,CQL,q_loss_peak,550,70.71067812,2\n") {
		t.Errorf("diagnostics.csv:\n%s", b)
	}
	if w, h := pngSize(t, filepath.Join(out, "curves-hopper-medium.png")); w < 3*h { // three 5.5×3.8 in panels side by side
		t.Errorf("curves figure is %d×%d, want three panels side by side", w, h)
	}
}

// --last K scores each run by the mean of its last K evaluations, in the
// table and in every statistic; too few evaluations is an error.
func TestLastKEvaluations(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 90, []float64{10, 20, 60, 90}, true)
	writeRun(t, root, 1, "hopper-medium", "CQL", "", 1, 70, []float64{10, 30, 80, 70}, true)
	writeRun(t, root, 2, "hopper-medium", "KFC++", "", 0, 50, []float64{10, 20, 100, 50}, true)
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	final, err := Build(runs, Options{Reps: 50})
	if err != nil {
		t.Fatal(err)
	}
	last2, err := Build(runs, Options{Reps: 50, Last: 2})
	if err != nil {
		t.Fatal(err)
	}
	cells := func(r *Report) []float64 {
		var out []float64
		for _, c := range r.Table.Rows[0].Cells {
			out = append(out, c.Scores...)
		}
		return out
	}
	if got, want := cells(final), []float64{90, 70, 50}; !slices.Equal(got, want) {
		t.Errorf("final scores %v, want %v", got, want)
	}
	if got, want := cells(last2), []float64{75, 75, 75}; !slices.Equal(got, want) {
		t.Errorf("last-2 scores %v, want %v", got, want)
	}
	// Last 2: KFC++ 75 ties both CQL runs → P(KFC++ > CQL) = 0.5; final: 0.
	if p := last2.PoI[0].Value; p != 0.5 {
		t.Errorf("last-2 P(KFC++ > CQL) = %v, want 0.5", p)
	}
	if p := final.PoI[0].Value; p != 0 {
		t.Errorf("final P(KFC++ > CQL) = %v, want 0", p)
	}
	if last2.Settings.Score != "mean of the last 2 evaluations" || final.Settings.Score != "final evaluation" {
		t.Errorf("settings say %q and %q", last2.Settings.Score, final.Settings.Score)
	}
	if !strings.Contains(last2.Summary(), "mean of its last 2 evaluations") {
		t.Error("summary does not say which score it tabulates")
	}
	if runs[0].Score != 90 {
		t.Errorf("Build changed the collected runs: score %v, want 90", runs[0].Score)
	}
	if _, err := Build(runs, Options{Reps: 50, Last: 5}); err == nil || !strings.Contains(err.Error(), "has 4 evaluations") {
		t.Errorf("--last 5 over 4 evaluations: error %v", err)
	}
}

// collectAndBuild collects the runs under root and builds their report.
func collectAndBuild(t *testing.T, root string, o Options) ([]Result, *Report) {
	t.Helper()
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(runs, o)
	if err != nil {
		t.Fatal(err)
	}
	return runs, rep
}

// Runs of two sweeps reported together keep each sweep's own method order,
// the sweeps in the order the directories are given: a sweep index means
// nothing across specs (the follow-up's KFC++-clean, index 2 of its spec,
// must not land between the study's CQL, index 0, and KFC++, index 5).
func TestMethodOrderAcrossSweeps(t *testing.T) {
	study, follow := t.TempDir(), t.TempDir()
	for s := uint64(0); s < 2; s++ {
		writeRun(t, study, int(s), "hopper-medium", "CQL", "", s, 80, []float64{70, 80}, true)
		writeRun(t, study, 4+int(s), "hopper-medium", "KFC++", "", s, 60, []float64{50, 60}, true)
		writeRun(t, follow, 2+int(s), "hopper-medium", "KFC++-clean", "", s, 75, []float64{65, 75}, true)
	}
	for _, tc := range []struct {
		dirs []string
		want []string
	}{
		{[]string{study, follow}, []string{"CQL", "KFC++", "KFC++-clean"}},
		{[]string{follow, study}, []string{"KFC++-clean", "CQL", "KFC++"}},
	} {
		runs, err := Collect(tc.dirs...)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Build(runs, Options{Reps: 50, Baseline: "CQL"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Methods, tc.want) {
			t.Errorf("methods %v, want %v", rep.Methods, tc.want)
		}
		var got []string
		for _, r := range rep.runsInOrder() {
			got = append(got, fmt.Sprintf("%s/%d", r.Method, r.Seed))
		}
		var want []string
		for _, m := range tc.want {
			want = append(want, m+"/0", m+"/1")
		}
		if !slices.Equal(got, want) {
			t.Errorf("runs %v, want %v", got, want)
		}
	}
}

// Curve legends count seeds in English: a method with one finished run is
// "CQL (1 seed)", not "(1 seeds)" as the study's first fixed-weight run was
// labelled.
func TestCurveLegendCountsSeeds(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, 0, "hopper-medium", "CQL", "", 0, 50, []float64{25, 50}, true)
	writeRun(t, root, 1, "hopper-medium", "KFC", "", 0, 60, []float64{30, 60}, true)
	writeRun(t, root, 2, "hopper-medium", "KFC", "", 1, 64, []float64{32, 64}, true)
	runs, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(runs, Options{Reps: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "report")
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "curves-hopper-medium.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CQL (1 seed)", "KFC (2 seeds)"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("curves-hopper-medium.svg lacks the legend %q", want)
		}
	}
	if bytes.Contains(b, []byte("1 seeds")) {
		t.Error(`curves-hopper-medium.svg says "1 seeds"`)
	}
}

// Gradient-step axes label their ticks as plain numbers: gonum's default
// labels the range 1000–23000 as 2500.00, 12500.00, …
func TestStepTicksArePlainNumbers(t *testing.T) {
	for _, r := range [][2]float64{{1000, 23000}, {5000, 100000}, {0, 300}} {
		var labels []string
		for _, tk := range (plainTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			labels = append(labels, tk.Label)
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || v != tk.Value || strings.Contains(tk.Label, ".") {
				t.Errorf("range %v: tick %v labelled %q", r, tk.Value, tk.Label)
			}
		}
		if len(labels) < 2 {
			t.Errorf("range %v: labels %v, want at least two", r, labels)
		}
	}
}

// The diagnostics read a Koopman run's CQL statistics on model-branch and
// noise-branch batches apart: from the logged model_batch where a run has
// it (even when its shifts would say otherwise), else from the two
// clusters of its logged shift_l2; each over the run's own last fifth of
// training, not the last fifth of the selected rows.
func TestDiagnosticsByBatchBranch(t *testing.T) {
	root := t.TempDir()
	// Steps 1000…10000; the window is 9000 and 10000. The CQL gap is
	// −step/1000 on model batches and +1 on noise batches.
	logOf := func(noise map[int]bool, logBranch bool) string {
		var b strings.Builder
		b.WriteString("step,cql_gap,shift_l2")
		if logBranch {
			b.WriteString(",model_batch")
		}
		b.WriteString("\n")
		for s := 1000; s <= 10000; s += 1000 {
			gap, shift, model := -float64(s)/1000, 0.2+float64(s)*1e-6, 1
			if noise[s] {
				gap, shift, model = 1, 0.0100+float64(s)*1e-7, 0
			}
			if logBranch {
				shift = 0.5 // uninformative: the logged branch decides
				fmt.Fprintf(&b, "%d,%g,%g,%d\n", s, gap, shift, model)
			} else {
				fmt.Fprintf(&b, "%d,%g,%g\n", s, gap, shift)
			}
		}
		return b.String()
	}
	writeRun(t, root, 0, "walker2d-medium", "CQL", "", 0, 50, []float64{50}, true)
	writeMetrics(t, root, "walker2d-medium", "CQL", 0, "metrics.csv", "step,cql_gap,shift_l2\n1000,-2,0\n2000,-3,0\n")
	writeRun(t, root, 1, "walker2d-medium", "KFC++", "", 0, 50, []float64{50}, true)
	writeMetrics(t, root, "walker2d-medium", "KFC++", 0, "metrics.csv", logOf(map[int]bool{3000: true, 9000: true}, true))
	writeRun(t, root, 2, "walker2d-medium", "KFC++", "", 1, 50, []float64{50}, true)
	writeMetrics(t, root, "walker2d-medium", "KFC++", 1, "metrics.csv", logOf(map[int]bool{4000: true, 10000: true}, false))
	_, rep := collectAndBuild(t, root, Options{Reps: 50})
	d, br := rep.Diagnostics, rep.BranchDiagnostics
	if d == nil || !slices.Equal(d.Columns, []string{"cql_gap", "shift_l2"}) {
		t.Fatalf("diagnostics %+v, want columns cql_gap and shift_l2", d)
	}
	if br == nil || !slices.Equal(br.Columns, []string{"shift_l2_model", "cql_gap_model", "cql_gap_noise"}) {
		t.Fatalf("branch diagnostics %+v, want columns shift_l2_model, cql_gap_model, cql_gap_noise", br)
	}
	// CQL has no branches: in the main table only.
	if len(d.Rows) != 2 || len(br.Rows) != 1 || br.Rows[0].Method != "KFC++" {
		t.Fatalf("rows: main %+v, branches %+v; want CQL and KFC++, and KFC++ alone", d.Rows, br.Rows)
	}
	// Seed 0 (logged): model rows in the window: 10000 → −10; noise: 9000.
	// Seed 1 (inferred): model 9000 → −9; noise 10000. Over all batches
	// both runs average −10 and 1 (or 1 and −9): −4.5 and −4.
	all, model, noise := d.Rows[1].Cells[0], br.Rows[0].Cells[1], br.Rows[0].Cells[2]
	if !slices.Equal(model.Scores, []float64{-10, -9}) || !slices.Equal(noise.Scores, []float64{1, 1}) ||
		!slices.Equal(all.Scores, []float64{-4.5, -4}) {
		t.Errorf("KFC++ CQL gap: all %v, model batches %v, noise batches %v; want [-4.5 -4], [-10 -9], [1 1]", all.Scores, model.Scores, noise.Scores)
	}
	if md := br.Markdown(); !strings.Contains(md, "| ‖s̃ − s‖, model | CQL gap, model | CQL gap, noise |") ||
		!strings.Contains(md, "| walker2d-medium | KFC++ | 2 | 0.3545 ± 0.21 | -9.5 ± 0.71 | 1 ± 0 |") {
		t.Errorf("markdown:\n%s", md)
	}
	sum := rep.Summary()
	if !strings.Contains(sum, "## Training diagnostics by batch branch") || !strings.Contains(sum, "inferred from `shift_l2`") {
		t.Errorf("summary lacks the branch table:\n%s", sum)
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "diagnostics-branches.csv"))
	if err != nil || !strings.Contains(string(b), "walker2d-medium,KFC++,cql_gap_noise,1,0,2\n") {
		t.Errorf("diagnostics-branches.csv (%v):\n%s", err, b)
	}
}

// modelBatches infers branches only from a clear split: a gap of at least
// branchGap between a tight noise cluster and the model shifts, for an
// augmenter that has branches.
func TestModelBatchesInference(t *testing.T) {
	series := func(v ...float64) map[string][]Point {
		var pts []Point
		for i, x := range v {
			pts = append(pts, Point{Step: 1000 * (i + 1), Score: x})
		}
		return map[string][]Point{"shift_l2": pts}
	}
	for _, c := range []struct {
		name, augment string
		train         map[string][]Point
		want          map[int]bool
	}{
		{"two clusters", "kfc", series(0.2, 0.0121, 0.19, 0.0124), map[int]bool{1000: true, 2000: false, 3000: true, 4000: false}},
		{"hopper-like", "kfc++", series(0.0095, 0.047, 0.0099, 0.05), map[int]bool{1000: false, 2000: true, 3000: false, 4000: true}},
		{"S4RL-N has no branches", "gaussian", series(0.2, 0.0121, 0.19, 0.0124), nil},
		{"one cluster", "kfc++", series(0.2, 0.21, 0.19, 0.15), nil},
		{"loose lower cluster", "kfc++", series(0.01, 0.015, 0.2, 0.21), nil},
		{"a zero shift", "kfc++", series(0, 0.0121, 0.2), nil},
		{"one row", "kfc++", series(0.2), nil},
		{"no shifts logged", "kfc++", map[string][]Point{}, nil},
		{"logged from a resume on", "kfc++", map[string][]Point{
			"shift_l2":    series(0.2, 0.0121, 0.19, 0.5)["shift_l2"],
			"model_batch": {{Step: 4000, Score: 0}},
		}, map[int]bool{1000: true, 2000: false, 3000: true, 4000: false}},
		{"logged, shifts inseparable", "kfc++", map[string][]Point{
			"shift_l2":    series(0.2, 0.21)["shift_l2"],
			"model_batch": {{Step: 2000, Score: 1}},
		}, map[int]bool{2000: true}},
	} {
		got := modelBatches(c.augment, c.train)
		if len(got) != len(c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for k, v := range c.want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}
