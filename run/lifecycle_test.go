package run

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/nn"
)

// csvWithoutWall drops the wall_seconds column of a metrics.csv.
func csvWithoutWall(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	head := strings.Split(lines[0], ",")
	col := -1
	for i, h := range head {
		if h == "wall_seconds" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("%s: header %q has no wall_seconds column", path, lines[0])
	}
	for i, l := range lines {
		f := strings.Split(l, ",")
		if len(f) != len(head) {
			t.Fatalf("%s line %d has %d fields, header %d", path, i+1, len(f), len(head))
		}
		lines[i] = strings.Join(append(f[:col:col], f[col+1:]...), ",")
	}
	return lines
}

// Bug 2: a run stopped after a checkpoint but before its first metric row
// kept a metrics.csv without header after resume.
func TestResumeBeforeFirstMetricRowKeepsCSVHeader(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	cfg.LogEvery, cfg.CheckpointEvery = 10, 100
	dirA, _ := NewDir(t.TempDir(), "a")
	if _, err := Train(context.Background(), cfg, dirA, d, false, nil); err != nil {
		t.Fatal(err)
	}
	dirB, _ := NewDir(t.TempDir(), "b")
	trainInterrupted(t, cfg, dirB, d, 6)
	if _, err := Train(context.Background(), cfg, dirB, d, true, nil); err != nil {
		t.Fatal(err)
	}
	a, b := csvWithoutWall(t, dirA.File("metrics.csv")), csvWithoutWall(t, dirB.File("metrics.csv"))
	if !strings.HasPrefix(b[0], "step,") || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("resumed metrics.csv:\n%s\nwant\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
}

// Bug 3: resuming a finished run appended the final evaluation again and
// zeroed last_stats. Now it changes no file.
func TestResumeFinishedRunChangesNothing(t *testing.T) {
	d, cfg, dir := trainFinished(t, 2)
	before := fileContents(t, dir, "results.json", "history.json", "metrics.csv", "metrics.jsonl", "policy.safetensors", "checkpoints/latest.safetensors")
	for i := 0; i < 2; i++ {
		if _, err := Train(context.Background(), cfg, dir, d, true, nil); err != nil {
			t.Fatal(err)
		}
	}
	if c := changedFiles(dir, before); len(c) > 0 {
		t.Errorf("resuming a finished run changed %v", c)
	}
}

// Bug 4: a diverged update was checkpointed with NaN weights over the last
// good checkpoint. Now training stops with an error and every checkpoint on
// disk is finite.
func TestDivergedRunWritesNoNonFiniteCheckpoint(t *testing.T) {
	d := pendulumLike(300, 3)
	cfg := tinyConfig()
	cfg.CQL.MinQWeight = 1e300
	cfg.CheckpointEvery = 1
	dir, _ := NewDir(t.TempDir(), "a")
	_, err := Train(context.Background(), cfg, dir, d, false, nil)
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("want a divergence error, got %v", err)
	}
	ckpt := dir.File("checkpoints/latest.safetensors")
	if _, err := os.Stat(ckpt); os.IsNotExist(err) {
		return // no checkpoint at all: fine
	}
	ts, _, err := nn.LoadSafetensors(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	for name, x := range ts {
		for _, v := range x.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("checkpoint tensor %s holds %v", name, v)
			}
		}
	}
}

// Bug 8: a second process on the same run directory fails at once, and
// stale temporary files of a killed process are removed.
func TestRunDirectoryLockAndTempCleanup(t *testing.T) {
	d := pendulumLike(300, 4)
	cfg := tinyConfig()
	dir, _ := NewDir(t.TempDir(), "a")
	unlock, err := dir.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Train(context.Background(), cfg, dir, d, false, nil); err == nil || !strings.Contains(err.Error(), "in use by another koopq process") {
		t.Fatalf("second user of a locked directory: %v", err)
	}
	if _, err := os.Stat(dir.File("config.json")); !os.IsNotExist(err) {
		t.Fatal("a refused Train wrote config.json")
	}
	unlock()
	if _, err := Train(context.Background(), cfg, dir, d, false, nil); err != nil {
		t.Fatal(err)
	}
	stale := []string{dir.File(".tmp-results.json-123"), dir.File("checkpoints/.tmp-latest.safetensors-456")}
	for _, p := range stale {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Train(context.Background(), cfg, dir, d, true, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("stale %s survived a resume", filepath.Base(p))
		}
	}
}

// Bug 6: invalid settings are rejected before the directory is touched.
func TestTrainValidatesBeforeWriting(t *testing.T) {
	d := pendulumLike(100, 5)
	for name, mutate := range map[string]func(*TrainConfig){
		"nan lr":         func(c *TrainConfig) { c.CQL.LRActor = math.NaN() },
		"inf sigma":      func(c *TrainConfig) { c.GaussianSigma = math.Inf(1) },
		"negative batch": func(c *TrainConfig) { c.CQL.Batch = -1 },
		"bad augment":    func(c *TrainConfig) { c.Augment = "nope" },
		"bad env":        func(c *TrainConfig) { c.Env = "nope" },
		"all bc":         func(c *TrainConfig) { c.CQL.BCSteps = c.CQL.Steps },
		"bad adv mode":   func(c *TrainConfig) { c.AugmentParams.AdvMode = "diagonal" },
	} {
		cfg := tinyConfig()
		mutate(&cfg)
		dir, _ := NewDir(t.TempDir(), "x")
		if _, err := Train(context.Background(), cfg, dir, d, false, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if ents, _ := os.ReadDir(dir.Path); len(ents) != 1 { // checkpoints/ only
			t.Errorf("%s: directory holds %d entries after the error", name, len(ents))
		}
	}
}

// TrainWith trusts a CheckTrain result only for the config and dataset it
// checked: with them it does not read or check again (cfg.Data
// "in-memory" is no file), with another config or dataset it checks anew.
func TestTrainWithCheckedReusedOnlyForItsInputs(t *testing.T) {
	d := pendulumLike(200, 5)
	cfg := tinyConfig()
	checked, err := CheckTrain(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if checked.Dataset() != d {
		t.Fatal("CheckTrain's Dataset is not the dataset it was given")
	}
	bad := cfg
	bad.CQL.LRActor = math.NaN()
	dir, _ := NewDir(t.TempDir(), "bad")
	if _, err := TrainWith(context.Background(), bad, dir, d, TrainOptions{Checked: checked}); err == nil || !strings.Contains(err.Error(), "lr") {
		t.Errorf("another config with the check of the first: got %v, want it checked anew and refused", err)
	}
	other := pendulumLike(200, 6)
	other.ActDim = 2
	dir, _ = NewDir(t.TempDir(), "other")
	if _, err := TrainWith(context.Background(), cfg, dir, other, TrainOptions{Checked: checked}); err == nil {
		t.Error("another dataset with the check of the first: accepted")
	}
	dir, _ = NewDir(t.TempDir(), "ok")
	res, err := TrainWith(context.Background(), cfg, dir, nil, TrainOptions{Checked: checked})
	if err != nil {
		t.Fatalf("the checked config, no dataset given: %v", err)
	}
	if res.Steps != cfg.CQL.Steps || res.Transitions != d.Len() || res.FinalPhase != PhaseCQL {
		t.Errorf("steps %d transitions %d final phase %q", res.Steps, res.Transitions, res.FinalPhase)
	}
}

func TestValidateNamesFlagAndKey(t *testing.T) {
	cfg := tinyConfig()
	cfg.CQL.Tau = math.NaN()
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "--tau") || !strings.Contains(err.Error(), "cql.tau") {
		t.Fatalf("got %v", err)
	}
	cfg = tinyConfig()
	cfg.CQL.Steps, cfg.CQL.BCSteps = 3000, 40000
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "behaviour cloning") {
		t.Fatalf("pure BC run: %v", err)
	}
}

func TestConfigFileOverPreset(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("preset: pendulum\ncql:\n  lr_critic: 1e-3\n  net:\n    hidden: [32]\neval_episodes: 3\n"), 0o644)
	base, _ := Preset("paper")
	cfg, err := LoadConfigFile(p, base, "")
	if err != nil {
		t.Fatal(err)
	}
	pend, _ := Preset("pendulum")
	if cfg.Preset != "pendulum" || cfg.CQL.LRCritic != 1e-3 || len(cfg.CQL.Net.Hidden) != 1 || cfg.EvalEpisodes != 3 ||
		cfg.CQL.MinQWeight != pend.CQL.MinQWeight || cfg.CQL.Steps != pend.CQL.Steps {
		t.Fatalf("file over preset: %+v", cfg)
	}
	// An explicit preset wins over the file's key.
	cfg, err = LoadConfigFile(p, base, "paper")
	if err != nil || cfg.CQL.Steps != base.CQL.Steps || cfg.CQL.LRCritic != 1e-3 {
		t.Fatalf("preset override: %v %+v", err, cfg.CQL)
	}
	os.WriteFile(p, []byte("cql:\n  lr_critc: 1e-3\n"), 0o644)
	if _, err := LoadConfigFile(p, base, ""); err == nil || !strings.Contains(err.Error(), "lr_critc") {
		t.Fatalf("unknown key: %v", err)
	}
	// config.json written by a run reads back to the same config.
	dir, _ := NewDir(t.TempDir(), "x")
	want := tinyConfig()
	want.KoopmanHidden = []int{4, 4}
	want.Preset = "pendulum"
	dir.WriteJSON("config.json", want)
	got, err := LoadConfigFile(dir.File("config.json"), base, "")
	if err != nil {
		t.Fatal(err)
	}
	if diffs, _ := DiffConfigs(want, got); len(diffs) != 0 {
		t.Fatalf("config.json round trip differs: %v", diffs)
	}
}

func TestCheckResume(t *testing.T) {
	a := tinyConfig()
	b := a
	b.CQL.Steps = 80
	if err := CheckResume(a, b); err != nil {
		t.Fatalf("larger steps refused: %v", err)
	}
	b.CQL.Steps = 20
	if err := CheckResume(a, b); err == nil {
		t.Fatal("smaller steps accepted")
	}
	b = a
	b.Augment, b.KoopmanModel, b.CQL.Net.Hidden = "kfc++", "/x.safetensors", []int{16}
	err := CheckResume(a, b)
	for _, k := range []string{"augment", "koopman_model", "cql.net.hidden"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Fatalf("want %s named, got %v", k, err)
		}
	}
}

// Every preset is a valid configuration once data and env are given, and the
// demo trains with the pendulum preset.
func TestPresets(t *testing.T) {
	for _, n := range PresetNames() {
		c, err := Preset(n)
		if err != nil {
			t.Fatal(err)
		}
		c.Data = "x.hdf5"
		if c.Env == "" || n == "halfcheetah-medium" {
			c.Env = "pendulum" // env registry here has only the classic envs
		}
		if err := c.Validate(); err != nil {
			t.Errorf("preset %s: %v", n, err)
		}
	}
	p, _ := Preset("pendulum")
	if diffs, _ := DiffConfigs(p, DefaultDemoConfig().Train); len(diffs) != 0 {
		t.Errorf("demo differs from the pendulum preset: %v", diffs)
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "--preset") {
		t.Errorf("unknown preset: %v", err)
	}
}

// Extending a run with a larger step count ends where an uninterrupted run
// of that length does.
func TestExtendRunMatchesLongerRun(t *testing.T) {
	d := pendulumLike(300, 6)
	cfg := tinyConfig()
	long := cfg
	long.CQL.Steps = 60
	dirA, _ := NewDir(t.TempDir(), "a")
	resA, err := Train(context.Background(), long, dirA, d, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirB, _ := NewDir(t.TempDir(), "b")
	if _, err := Train(context.Background(), cfg, dirB, d, false, nil); err != nil {
		t.Fatal(err)
	}
	resB, err := Train(context.Background(), long, dirB, d, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resA.Final.Mean != resB.Final.Mean || resA.Final.Std != resB.Final.Std || resA.LastStats != resB.LastStats || len(resA.History) != len(resB.History) {
		t.Fatalf("extended run differs: %+v vs %+v", resA.History, resB.History)
	}
	for i := range resA.History {
		if resA.History[i] != resB.History[i] {
			t.Fatalf("history %d: %+v vs %+v", i, resA.History[i], resB.History[i])
		}
	}
	var rec TrainConfig
	dirB.ReadJSON("config.json", &rec)
	if rec.CQL.Steps != 60 {
		t.Fatalf("config.json after extension records %d steps", rec.CQL.Steps)
	}
}
