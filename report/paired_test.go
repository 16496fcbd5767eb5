package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// pairedRun is a finished run held in memory, as Collect returns it.
func pairedRun(dataset, method, augment string, seed uint64, score float64) Result {
	return Result{Dir: filepath.Join("/runs", dataset, method, fmt.Sprint(seed)), Dataset: dataset, Method: method,
		Augment: augment, Seed: seed, Score: score, Final: score, Order: -1}
}

// pairedRuns are hopper runs with known per-seed differences against CQL
// (seeds 0–2; CQL also has seed 4, KFC++ seed 3, each unpaired):
//
//	KFC++ − CQL: 8, 5, 8       (beats)
//	S4RL-N − CQL: −10, −8, −8  (loses)
//	KFC − CQL: 1, −1, 0.5      (no difference, equivalent within ±5)
//	RND − CQL: 10, −10, 3      (no difference, not equivalent)
func pairedRuns() []Result {
	scores := map[string][]float64{
		"CQL":    {50, 52, 47},
		"KFC++":  {58, 57, 55},
		"S4RL-N": {40, 44, 39},
		"KFC":    {51, 51, 47.5},
		"RND":    {60, 42, 50},
	}
	augment := map[string]string{"CQL": "cql", "KFC++": "kfc++", "S4RL-N": "gaussian", "KFC": "kfc", "RND": "random"}
	var rs []Result
	for _, m := range []string{"CQL", "KFC++", "S4RL-N", "KFC", "RND"} {
		for s, v := range scores[m] {
			rs = append(rs, pairedRun("hopper", m, augment[m], uint64(s), v))
		}
	}
	return append(rs, pairedRun("hopper", "KFC++", "kfc++", 3, 90), pairedRun("hopper", "CQL", "cql", 4, 49))
}

// pairedOf finds a comparison of the report.
func pairedOf(t *testing.T, rep *Report, method, over string) PairedDifference {
	t.Helper()
	for _, d := range rep.Paired {
		if d.Method == method && d.Over == over {
			return d
		}
	}
	t.Fatalf("no paired comparison %s − %s in %+v", method, over, rep.Paired)
	return PairedDifference{}
}

// The per-seed differences, their mean, sample std and Student-t interval
// match hand and scipy computations, every verdict branch is taken, and the
// unpaired seeds are listed. Intervals: scipy.stats.t.interval(0.95,
// len(d)-1, loc=np.mean(d), scale=scipy.stats.sem(d)) for each d.
func TestPairedDifferencesBySeed(t *testing.T) {
	rep, err := Build(pairedRuns(), Options{Reps: 50})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		method          string
		diffs           []float64
		mean, std       float64
		lo, hi          float64
		verdict         string
		equivalent      bool
		unpairedMethod  []uint64
		unpairedOverAll []uint64
	}{
		// mean 7, std √3, 7 ± t_{0.975,2}·√3/√3 = 7 ± 4.302652729911275.
		{"KFC++", []float64{8, 5, 8}, 7, math.Sqrt(3), 2.6973472700887253, 11.302652729911275, VerdictBeats, false, []uint64{3}, []uint64{4}},
		{"S4RL-N", []float64{-10, -8, -8}, -26.0 / 3, 1.1547005383792517, -11.535101819940849, -5.798231513392483, VerdictLoses, false, nil, []uint64{4}},
		{"KFC", []float64{1, -1, 0.5}, 1.0 / 6, 1.0408329997330665, -2.4189058397017025, 2.7522391730350355, VerdictNoDifference, true, nil, []uint64{4}},
		{"RND", []float64{10, -10, 3}, 1, 10.14889156509222, -24.211244270258547, 26.211244270258547, VerdictNoDifference, false, nil, []uint64{4}},
	}
	if len(rep.Paired) != len(want) {
		t.Fatalf("%d comparisons, want %d: %+v", len(rep.Paired), len(want), rep.Paired)
	}
	for _, w := range want {
		d := pairedOf(t, rep, w.method, "CQL")
		m := d.Score
		if !slices.Equal(m.Seeds, []uint64{0, 1, 2}) || len(m.Differences) != 3 {
			t.Fatalf("%s: seeds %v differences %v", w.method, m.Seeds, m.Differences)
		}
		for i := range w.diffs {
			if !near(m.Differences[i], w.diffs[i], 1e-12) {
				t.Errorf("%s: differences %v, want %v", w.method, m.Differences, w.diffs)
			}
		}
		if !near(m.Mean, w.mean, 1e-12) || !near(m.Std, w.std, 1e-12) || !near(m.Lo, w.lo, 1e-9) || !near(m.Hi, w.hi, 1e-9) {
			t.Errorf("%s: mean %v std %v [%v, %v], want %v %v [%v, %v]", w.method, m.Mean, m.Std, m.Lo, m.Hi, w.mean, w.std, w.lo, w.hi)
		}
		if m.Verdict != w.verdict || m.Equivalent != w.equivalent || d.Verdict != w.verdict || d.Equivalent != w.equivalent {
			t.Errorf("%s: verdict %q equivalent %v (combined %q %v), want %q %v", w.method, m.Verdict, m.Equivalent, d.Verdict, d.Equivalent, w.verdict, w.equivalent)
		}
		if !slices.Equal(d.UnpairedMethod, w.unpairedMethod) || !slices.Equal(d.UnpairedOver, w.unpairedOverAll) {
			t.Errorf("%s: unpaired %v / %v, want %v / %v", w.method, d.UnpairedMethod, d.UnpairedOver, w.unpairedMethod, w.unpairedOverAll)
		}
		if d.Reevaluated != nil || d.NotReevaluated != nil {
			t.Errorf("%s: a re-evaluated measure without re-evaluations: %+v", w.method, d)
		}
	}
	// A narrower margin makes KFC − CQL no longer equivalent.
	rep2, err := Build(pairedRuns(), Options{Reps: 50, EquivalenceMargin: 2.5})
	if err != nil {
		t.Fatal(err)
	}
	if d := pairedOf(t, rep2, "KFC", "CQL"); d.Equivalent || rep2.Settings.EquivalenceMargin != 2.5 {
		t.Errorf("margin 2.5: KFC − CQL equivalent %v (interval hi 2.75), margin %v", d.Equivalent, rep2.Settings.EquivalenceMargin)
	}
	if _, err := Build(pairedRuns(), Options{Reps: 50, EquivalenceMargin: -1}); err == nil || !strings.Contains(err.Error(), "equivalence margin") {
		t.Errorf("negative margin: %v", err)
	}

	md := rep.PairedMarkdown()
	for _, s := range []string{
		"| KFC++ − CQL | hopper | 3 | +7.0 ± 1.7 | [+2.7, +11.3] | * | beats | only KFC++: 3; only CQL: 4 |",
		"| KFC − CQL | hopper | 3 | +0.2 ± 1.0 | [-2.4, +2.8] | * | no difference detected, equivalent | only CQL: 4 |",
		"| S4RL-N − CQL | hopper | 3 | -8.7 ± 1.2 | [-11.5, -5.8] | * | loses |",
		"One measure: score (final evaluation); no re-evaluations",
		"within ±5 points",
	} {
		if !mdHas(md, s) {
			t.Errorf("paired.md lacks %q:\n%s", s, md)
		}
	}
	out := t.TempDir()
	if _, err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(out, "paired.csv"))
	if err != nil || !strings.Contains(string(csv), "KFC++,CQL,hopper,score,3,0 1 2,8 5 8,7,1.732050808,2.69734727,11.30265273,beats,false,3,4,\n") {
		t.Errorf("paired.csv: %v\n%s", err, csv)
	}
	var js struct {
		Paired []struct {
			Method  string `json:"method"`
			Verdict string `json:"verdict"`
			Score   struct {
				N  int      `json:"n"`
				Lo *float64 `json:"lo"`
			} `json:"score"`
		} `json:"paired_differences"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	// Methods outside a sweep come in name order: KFC, KFC++, RND, S4RL-N.
	if err := json.Unmarshal(b, &js); err != nil || len(js.Paired) != 4 || js.Paired[1].Method != "KFC++" || js.Paired[1].Score.N != 3 ||
		js.Paired[1].Score.Lo == nil || js.Paired[1].Verdict != VerdictBeats {
		t.Errorf("report.json paired_differences: %v %+v", err, js.Paired)
	}
}

// One paired seed has no interval: the verdict says so rather than
// reading a NaN bound as "no difference".
func TestPairedTooFewSeeds(t *testing.T) {
	rs := []Result{pairedRun("hopper", "CQL", "cql", 0, 50), pairedRun("hopper", "CQL", "cql", 1, 51),
		pairedRun("hopper", "KFC++", "kfc++", 1, 60), pairedRun("hopper", "KFC++", "kfc++", 2, 61)}
	rep, err := Build(rs, Options{Reps: 50})
	if err != nil {
		t.Fatal(err)
	}
	d := pairedOf(t, rep, "KFC++", "CQL")
	if d.Score.N() != 1 || d.Score.Differences[0] != 9 || d.Verdict != VerdictTooFew || !math.IsNaN(d.Score.Lo) ||
		!slices.Equal(d.UnpairedMethod, []uint64{2}) || !slices.Equal(d.UnpairedOver, []uint64{0}) {
		t.Errorf("one paired seed: %+v", d)
	}
}

// writeReevaluations writes a koopq eval --json file re-evaluating runs
// (run directory → normalized score) on 100 episodes from seed.
func writeReevaluations(t *testing.T, path string, seed uint64, scores map[string]float64) {
	t.Helper()
	type entry struct {
		Run         string         `json:"run"`
		Recorded    map[string]any `json:"recorded"`
		Reevaluated map[string]any `json:"reevaluated"`
	}
	var es []entry
	for run, v := range scores {
		es = append(es, entry{run, map[string]any{"env": "hopper", "episodes": 10},
			map[string]any{"env": "hopper", "episodes": 100, "seed": seed, "normalized_score": v, "normalized_std": 3.0}})
	}
	b, _ := json.Marshal(map[string]any{"episodes": 100, "seed": seed, "reevaluations": es, "no_policy": []string{}})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// reevalScores are re-evaluated scores of pairedRuns, giving per-seed
// differences against CQL of KFC++ 6, 4, 7 (beats: [1.87, 9.46]), S4RL-N
// −3, −4, −2 (loses: [−5.48, −0.52]), KFC 1, −1, 0.5 (equivalent) and RND
// 2, −1, 3 (no difference: [−3.84, 6.50]); KFC++ − RND: 4, 5, 4 (beats,
// [2.90, 5.77]). scipy.stats.t.interval(0.95, 2, loc=mean, scale=sem).
func reevalScores() map[string][]float64 {
	return map[string][]float64{
		"CQL": {40, 41, 42}, "KFC++": {46, 45, 49}, "S4RL-N": {37, 37, 40}, "KFC": {41, 40, 42.5}, "RND": {42, 40, 45},
	}
}

// With re-evaluations the table has both measures and the combined verdict
// needs both: beats and loses where both agree, no difference where one
// measure beats and the other does not (KFC++ − RND: score −2, 15, 5),
// equivalent where both intervals lie within ±5.
func TestPairedWithReevaluations(t *testing.T) {
	dir := t.TempDir()
	scores := map[string]float64{}
	for m, vs := range reevalScores() {
		for s, v := range vs {
			scores[filepath.Join("/runs/hopper", m, fmt.Sprint(s))+"/"] = v // unclean on purpose
		}
	}
	file := filepath.Join(dir, "reeval.json")
	writeReevaluations(t, file, 1000, scores)
	re, err := LoadReevaluations(file)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := ParsePair("KFC++:RND")
	rep, err := Build(pairedRuns(), Options{Reps: 50, Pairs: []Pair{p}, Reevaluations: re, ReevaluationFiles: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		method, over     string
		score, reeval    string
		lo, hi           float64 // the re-evaluated interval
		combined         string
		equivalent       bool
		reevalEquivalent bool
	}{
		{"KFC++", "CQL", VerdictBeats, VerdictBeats, 1.8720836329272021, 9.461249700406132, VerdictBeats, false, false},
		{"S4RL-N", "CQL", VerdictLoses, VerdictLoses, -5.484137711843752, -0.5158622881562471, VerdictLoses, false, false},
		{"KFC", "CQL", VerdictNoDifference, VerdictNoDifference, -2.4189058397017025, 2.7522391730350355, VerdictNoDifference, true, true},
		{"RND", "CQL", VerdictNoDifference, VerdictNoDifference, -3.837811679403404, 6.50447834607007, VerdictNoDifference, false, false},
		{"KFC++", "RND", VerdictNoDifference, VerdictBeats, 4.333333333333333 - 4.302652729911275/3, 4.333333333333333 + 4.302652729911275/3, VerdictNoDifference, false, false},
	}
	if len(rep.Paired) != len(want) {
		t.Fatalf("%d comparisons, want %d", len(rep.Paired), len(want))
	}
	for _, w := range want {
		d := pairedOf(t, rep, w.method, w.over)
		if d.Reevaluated == nil {
			t.Fatalf("%s − %s: no re-evaluated measure", w.method, w.over)
		}
		r := *d.Reevaluated
		if d.Score.Verdict != w.score || r.Verdict != w.reeval || d.Verdict != w.combined || d.Equivalent != w.equivalent ||
			r.Equivalent != w.reevalEquivalent || r.N() != 3 || !near(r.Lo, w.lo, 1e-9) || !near(r.Hi, w.hi, 1e-9) {
			t.Errorf("%s − %s: score %q, re-evaluated %q [%v, %v] eq %v, combined %q eq %v; want %q, %q [%v, %v] eq %v, %q eq %v", w.method, w.over,
				d.Score.Verdict, r.Verdict, r.Lo, r.Hi, r.Equivalent, d.Verdict, d.Equivalent, w.score, w.reeval, w.lo, w.hi, w.reevalEquivalent, w.combined, w.equivalent)
		}
	}
	// Combined: beats on score alone is not a gain (combine's other branches).
	if v, eq := combine(PairedMeasure{Verdict: VerdictBeats, Equivalent: true}, PairedMeasure{Verdict: VerdictTooFew}); v != VerdictTooFew || eq {
		t.Errorf("beats + too few: %q %v", v, eq)
	}
	if v, _ := combine(PairedMeasure{Verdict: VerdictBeats}, PairedMeasure{Verdict: VerdictLoses}); v != VerdictNoDifference {
		t.Errorf("beats + loses: %q", v)
	}
	md := rep.PairedMarkdown()
	for _, s := range []string{
		"re-evaluated (the final policy's re-evaluation, 100 episodes from seed 1000)",
		"| KFC++ − CQL | hopper | 3 | +7.0 ± 1.7 | [+2.7, +11.3] | * | beats | 3 | +5.7 ± 1.5 | [+1.9, +9.5] | * | beats | beats | only KFC++: 3; only CQL: 4 |",
		"| KFC++ − RND | hopper | 3 | +6.0 ± 8.5 | [-15.2, +27.2] | * | no difference detected | 3 | +4.3 ± 0.6 | [+2.9, +5.8] | * | beats | no difference detected |",
	} {
		if !mdHas(md, s) {
			t.Errorf("paired.md lacks %q:\n%s", s, md)
		}
	}
	if rep.Settings.ReevaluationEpisodes != "100 episodes from seed 1000" || !slices.Equal(rep.Settings.Reevaluations, []string{file}) {
		t.Errorf("settings %+v", rep.Settings)
	}
	if csv := rep.PairedCSV(); !strings.Contains(csv, "KFC++,RND,hopper,both,,,,,,,,no difference detected,false,3,,\n") ||
		!strings.Contains(csv, "KFC++,RND,hopper,reevaluated,3,0 1 2,4 5 4,4.333333333,") {
		t.Errorf("paired.csv:\n%s", csv)
	}

	// A paired run without a re-evaluation leaves its seed out of that
	// measure, listed.
	delete(scores, "/runs/hopper/KFC/2/")
	writeReevaluations(t, file, 1000, scores)
	re, err = LoadReevaluations(file)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Build(pairedRuns(), Options{Reps: 50, Reevaluations: re})
	if err != nil {
		t.Fatal(err)
	}
	if d := pairedOf(t, rep, "KFC", "CQL"); d.Reevaluated.N() != 2 || !slices.Equal(d.NotReevaluated, []uint64{2}) ||
		!strings.Contains(unpaired(d), "not re-evaluated: 2") {
		t.Errorf("KFC seed 2 not re-evaluated: %+v", d)
	}
}

// Re-evaluation files are matched to runs by their cleaned absolute
// directory; an unknown run, a run given twice, re-evaluations from other
// episodes, a recorded score that is not the run's, and a file that is not
// a re-evaluation are errors that say what is wrong.
func TestReevaluationErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	runs := []Result{pairedRun("hopper", "CQL", "cql", 0, 50), pairedRun("hopper", "KFC++", "kfc++", 0, 60)}
	runs[0].Dir = "runs/cql0" // relative, as Collect gives runs under a relative DIR
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	build := func(files ...string) error {
		var re []Reevaluation
		for _, f := range files {
			r, err := LoadReevaluations(f)
			if err != nil {
				return err
			}
			re = append(re, r...)
		}
		_, err := Build(runs, Options{Reps: 20, Reevaluations: re})
		return err
	}
	writeReevaluations(t, a, 1000, map[string]float64{"./runs/cql0/": 40, "/runs/hopper/KFC++/0": 45})
	if err := build(a); err != nil {
		t.Fatalf("relative and absolute run paths: %v", err)
	}
	writeReevaluations(t, b, 1000, map[string]float64{"/runs/hopper/KFC++/7": 45})
	if err := build(b); err == nil || !strings.Contains(err.Error(), "/runs/hopper/KFC++/7") || !strings.Contains(err.Error(), "not among the 2 finished runs") {
		t.Errorf("unknown run: %v", err)
	}
	writeReevaluations(t, b, 1000, map[string]float64{filepath.Join(dir, "runs/cql0"): 41})
	if err := build(a, b); err == nil || !strings.Contains(err.Error(), "re-evaluated twice") || !strings.Contains(err.Error(), "a.json") ||
		!strings.Contains(err.Error(), "b.json") {
		t.Errorf("a run in two files: %v", err)
	}
	writeReevaluations(t, b, 7, map[string]float64{"/runs/hopper/CQL/1": 41})
	runs = append(runs, pairedRun("hopper", "CQL", "cql", 1, 50))
	if err := build(a, b); err == nil || !strings.Contains(err.Error(), "from seed 7") {
		t.Errorf("other episodes: %v", err)
	}
	os.WriteFile(b, []byte(`{"reevaluations": [{"run": "/runs/hopper/CQL/1", "recorded": {"normalized_score": 12},
		"reevaluated": {"episodes": 100, "seed": 1000, "normalized_score": 40}}]}`), 0o644)
	if err := build(a, b); err == nil || !strings.Contains(err.Error(), "trained again") {
		t.Errorf("recorded score not the run's: %v", err)
	}
	os.WriteFile(b, []byte(`{"replays": []}`), 0o644)
	if _, err := LoadReevaluations(b); err == nil || !strings.Contains(err.Error(), `no "reevaluations"`) {
		t.Errorf("a replay file: %v", err)
	}
	os.WriteFile(b, []byte(`{"reevaluations": [{"run": "/runs/hopper/CQL/1", "reevaluated": {"episodes": 100, "mean_return": 3}}]}`), 0o644)
	if _, err := LoadReevaluations(b); err == nil || !strings.Contains(err.Error(), "no normalized score or success rate") {
		t.Errorf("no score: %v", err)
	}
}

// The dose–response points are each method's mean shift_l2_mean and mean
// score with its t-interval, lines per augment in order of magnitude, CQL
// as the baseline; a dataset where no augment has two magnitudes has none.
func TestDoseResponse(t *testing.T) {
	var rs []Result
	add := func(ds, method, augment string, mags, scores []float64) {
		for s := range scores {
			r := pairedRun(ds, method, augment, uint64(s), scores[s])
			if mags != nil {
				r.Magnitude = map[string]float64{"shift_l2_mean": mags[s]}
			}
			rs = append(rs, r)
		}
	}
	add("hopper", "CQL", "cql", nil, []float64{50, 52, 47})
	add("hopper", "KFC++-3e-3", "kfc++", []float64{3e-3, 3.2e-3, 2.8e-3}, []float64{55, 54, 56})
	add("hopper", "KFC++-2.6e-4", "kfc++", []float64{2.5e-4, 2.7e-4, 2.6e-4}, []float64{51, 50, 52})
	add("hopper", "S4RL-N-2.6e-4", "gaussian", []float64{2.6e-4, 2.6e-4, 2.6e-4}, []float64{49, 48, 50})
	add("walker", "CQL", "cql", nil, []float64{70, 71, 72})
	add("walker", "KFC++-2.6e-4", "kfc++", []float64{2.6e-4, 2.6e-4, 2.6e-4}, []float64{60, 61, 62})
	rep, err := Build(rs, Options{Reps: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.DoseResponse) != 1 || rep.DoseResponse[0].Dataset != "hopper" {
		t.Fatalf("dose-response %+v, want hopper only", rep.DoseResponse)
	}
	// KFC++-3e-3: scores 55, 54, 56, mean 55, std 1, 55 ± t_{0.975,2}/√3 = 55 ± 2.4841377118437524
	// (scipy.stats.t.ppf(0.975, 2) = 4.302652729911275).
	csv := rep.DoseCSV()
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	want := []string{
		"dataset,method,augment,role,seeds,shift_l2_mean,score,lo,hi",
		"hopper,KFC++-2.6e-4,kfc++,augmented,3,0.00026,51,48.51586229,53.48413771",
		"hopper,KFC++-3e-3,kfc++,augmented,3,0.003,55,52.51586229,57.48413771",
		"hopper,S4RL-N-2.6e-4,gaussian,augmented,3,0.00026,49,46.51586229,51.48413771",
	}
	if len(lines) != 5 || !slices.Equal(lines[:4], want) || !strings.HasPrefix(lines[4], "hopper,CQL,cql,baseline,3,0,49.66666667,") {
		t.Errorf("dose-response.csv:\n%s\nwant\n%s\nhopper,CQL,cql,baseline,3,0,49.66666667,…", csv, strings.Join(want, "\n"))
	}
	out := t.TempDir()
	files, err := rep.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dose-response.png", "dose-response.svg", "dose-response.csv"} {
		if !slices.Contains(files, filepath.Join(out, name)) {
			t.Errorf("%s not written: %v", name, files)
		}
	}
	if w, h := pngSize(t, filepath.Join(out, "dose-response.png")); w < 300 || h < 200 {
		t.Errorf("dose-response.png is %d×%d", w, h)
	}
	// Two qualifying datasets: one figure each, named by dataset.
	add("walker", "KFC++-3e-3", "kfc++", []float64{3e-3, 3e-3, 3e-3}, []float64{63, 61, 62})
	if rep, err = Build(rs, Options{Reps: 50}); err != nil {
		t.Fatal(err)
	}
	figs, err := rep.doseFigures(400, 300)
	if err != nil || len(figs) != 2 || figs[0].name != "dose-response-hopper" || figs[1].name != "dose-response-walker" {
		t.Errorf("figures %v %v", err, figs)
	}
}

// The dose figure's data area fills its panel: with gonum's log scale the
// axis label was sized as if centred at the range's linear midpoint, and
// the data area of a 5.5-inch panel shrank to 232 of 390 points. Each
// point is drawn where its magnitude's log lies between the decade ticks.
func TestDoseFigureFillsItsPanel(t *testing.T) {
	var rs []Result
	for s, v := range []float64{82, 80, 84} {
		rs = append(rs, pairedRun("hopper", "CQL", "cql", uint64(s), v))
		for _, m := range []float64{2.6e-4, 3e-3, 3e-2} {
			r := pairedRun("hopper", fmt.Sprintf("S4RL-N-%g", m), "gaussian", uint64(s), v-100*m)
			r.Magnitude = map[string]float64{"shift_l2_mean": m}
			rs = append(rs, r)
		}
	}
	rep, err := Build(rs, Options{Reps: 50})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := rep.doseFigures(5.5*vg.Inch, 3.8*vg.Inch)
	if err != nil || len(figs) != 1 {
		t.Fatalf("figures %v %v", err, figs)
	}
	f := figs[0]
	_, data, _ := render(t, f)
	panel := 5.5 * vg.Inch
	if got := data[0].Max.X - data[0].Min.X; got < 0.8*panel {
		t.Errorf("data area %.0f points wide in a %.0f-point panel", got, panel)
	}
	p := f.panels[0]
	if lo, hi := p.X.Min, p.X.Max; lo >= math.Log10(2.6e-4) || hi <= math.Log10(3e-2) || hi-lo > 2.5 {
		t.Errorf("x range [%g, %g], want just around log10 of 2.6e-4 … 3e-2", lo, hi)
	}
	var labels []string
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !slices.Equal(labels, []string{"0.001", "0.01"}) {
		t.Errorf("x labels %v, want 0.001 and 0.01", labels)
	}
}

// decadeTicks labels powers of ten with the quantity, marks 2–9 times them
// as minor ticks, and labels 2 and 5 too where the range holds fewer than
// two powers of ten; nothing outside the range.
func TestDecadeTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		labels []string
		n      int
	}{
		{0.99e-4, 1.01e-2, []string{"0.0001", "0.001", "0.01"}, 19},
		{2.5e-4, 4e-2, []string{"0.001", "0.01"}, 20},
		{1.1e-3, 6e-3, []string{"0.002", "0.005"}, 5},
		{3, 3, nil, 1},
		{0.5, 30, []string{"1", "10"}, 17},
	} {
		ts := decadeTicks{}.Ticks(math.Log10(c.lo), math.Log10(c.hi))
		var labels []string
		for _, tk := range ts {
			if tk.Value < math.Log10(c.lo)-1e-12 || tk.Value > math.Log10(c.hi)+1e-12 {
				t.Errorf("[%g, %g]: tick at 10^%g outside", c.lo, c.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.labels) || len(ts) != c.n {
			t.Errorf("[%g, %g]: labels %v and %d ticks, want %v and %d", c.lo, c.hi, labels, len(ts), c.labels, c.n)
		}
	}
}

// mdHas reports whether md contains row, where a cell "*" stands for any
// bootstrap interval (seeded resampling; TestPairedPooled checks its
// bounds).
func mdHas(md, row string) bool {
	var pat strings.Builder
	for i, p := range strings.Split(row, " | * | ") {
		if i > 0 {
			pat.WriteString(` \| \[[^]]*\] \| `)
		}
		pat.WriteString(regexp.QuoteMeta(p))
	}
	return regexp.MustCompile(pat.String()).MatchString(md)
}

// TestPairedPooled: with a comparison on two datasets, a pooled row pools
// every (dataset, seed) pair; its mean, std and t-interval are those of
// the pooled differences (scipy: t.interval(0.95, 5, loc=mean, scale=sem)
// of 8, 5, 8, 2, 4, 3 = [2.345114, 7.654886]); each row's bootstrap interval
// lies within its differences' range around the mean; a comparison on one
// dataset has no pooled row.
func TestPairedPooled(t *testing.T) {
	rs := pairedRuns()
	for s, v := range []float64{30, 31, 32} {
		rs = append(rs, pairedRun("walker2d", "CQL", "cql", uint64(s), v), pairedRun("walker2d", "KFC++", "kfc++", uint64(s), v+[]float64{2, 4, 3}[s]))
	}
	rep, err := Build(rs, Options{Reps: 400, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var pool *PairedDifference
	rows := 0
	for i, d := range rep.Paired {
		if d.Method == "KFC++" && d.Over == "CQL" {
			rows++
			if d.Dataset == PooledDataset {
				pool = &rep.Paired[i]
			}
		}
		if d.Method == "S4RL-N" && d.Dataset == PooledDataset {
			t.Errorf("S4RL-N − CQL runs on hopper only, yet has a pooled row")
		}
		m := d.Score
		if m.N() >= 2 {
			lo, hi := slices.Min(m.Differences), slices.Max(m.Differences)
			if m.Boot == nil || m.Boot.Lo < lo || m.Boot.Hi > hi || m.Boot.Lo > m.Mean || m.Boot.Hi < m.Mean {
				t.Errorf("%s − %s on %s: bootstrap %+v outside [%v, %v] or not around the mean %v", d.Method, d.Over, d.Dataset, m.Boot, lo, hi, m.Mean)
			}
		}
	}
	if pool == nil || rows != 3 {
		t.Fatalf("KFC++ − CQL: %d rows, pooled %v; want hopper, walker2d and pooled", rows, pool)
	}
	m := pool.Score
	if !slices.Equal(m.Differences, []float64{8, 5, 8, 2, 4, 3}) || !slices.Equal(m.Seeds, []uint64{0, 1, 2, 0, 1, 2}) ||
		!slices.Equal(m.Datasets, []string{"hopper", "hopper", "hopper", "walker2d", "walker2d", "walker2d"}) {
		t.Fatalf("pooled pairs %v seeds %v datasets %v", m.Differences, m.Seeds, m.Datasets)
	}
	if math.Abs(m.Mean-5) > 1e-12 || math.Abs(m.Lo-2.345114) > 1e-6 || math.Abs(m.Hi-7.654886) > 1e-6 || m.Verdict != VerdictBeats {
		t.Errorf("pooled mean %v interval [%v, %v] verdict %q", m.Mean, m.Lo, m.Hi, m.Verdict)
	}
	if !slices.Equal(pool.UnpairedMethod, []uint64{3}) || !slices.Equal(pool.UnpairedOver, []uint64{4}) {
		t.Errorf("pooled unpaired %v / %v", pool.UnpairedMethod, pool.UnpairedOver)
	}
	if !mdHas(rep.PairedMarkdown(), "| KFC++ − CQL | pooled | 6 | +5.0 ± 2.5 | [+2.3, +7.7] | * | beats |") {
		t.Errorf("paired.md lacks the pooled row:\n%s", rep.PairedMarkdown())
	}
}

// A dose line is labelled by the name its methods share without their
// magnitude suffixes, beside the augment; by the augment alone otherwise.
func TestDoseLabel(t *testing.T) {
	pts := []DosePoint{{Method: "S4RL-N-2.6e-4", Augment: "gaussian"}, {Method: "S4RL-N-3e-3", Augment: "gaussian"},
		{Method: "S4RL-N-3e-2", Augment: "gaussian"}, {Method: "KFC++_0.01", Augment: "kfc++"}, {Method: "KFC++ 1E+2", Augment: "kfc++"},
		{Method: "a", Augment: "vae-noise"}, {Method: "b", Augment: "vae-noise"}, {Method: "kfc-1e-3", Augment: "kfc"}}
	for a, want := range map[string]string{
		"gaussian":  "S4RL-N (gaussian, 3 magnitudes)",
		"kfc++":     "KFC++ (kfc++, 2 magnitudes)",
		"vae-noise": "vae-noise (2 magnitudes)",
		"kfc":       "kfc (1 magnitude)",
	} {
		if got := doseLabel(pts, a); got != want {
			t.Errorf("%s: %q, want %q", a, got, want)
		}
	}
}
