package main

// The train command's flag handling as a new user meets it: the env taken
// from the dataset's metadata, --seeds, errors for bad values, the cql name
// for augment none, intervals that follow a short run, the Koopman epoch
// flag's name and the grouped help.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
)

// without drops flag and its value from train args.
func without(args []string, flags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(flags, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// writeLabelledData writes pendulum data whose metadata/env is label.
func writeLabelledData(t *testing.T, path, label string) string {
	t.Helper()
	tmp := writePendulumData(t, path+".tmp.hdf5", 400, 1)
	d, err := dataset.ReadD4RL(tmp, dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Meta = map[string]string{"env": label}
	if err := dataset.WriteD4RL(path, d); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTrainEnvFromDatasetMetadata(t *testing.T) {
	tmp := t.TempDir()
	data := writeLabelledData(t, filepath.Join(tmp, "pendulum-medium-v0.hdf5"), "pendulum-medium-v0")
	out := filepath.Join(tmp, "runs")
	r := runCLI(t, tmp, 2*time.Minute, without(tinyTrain(data, out, "r"), "--env")...)
	if r.Code != 0 {
		t.Fatalf("train without --env on data recording its env: %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, `env pendulum (from the dataset's metadata/env "pendulum-medium-v0")`) {
		t.Errorf("stdout does not say where the env came from:\n%s", r.Stdout)
	}
	bare := writePendulumData(t, filepath.Join(tmp, "bare.hdf5"), 400, 1)
	// A file that records no known env trains without a simulator (issue
	// 70: offline diagnostics instead of evaluations), and says so.
	r = runCLI(t, tmp, 2*time.Minute, without(tinyTrain(bare, out, "b"), "--env")...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "env none: dataset "+bare+" records no known environment") {
		t.Fatalf("train without --env on data recording no env: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestTrainSeedsFlag(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	r := runCLI(t, tmp, time.Minute, tinyTrain(data, out, "r", "--seed", "0,1,2")...)
	expectCLIError(t, r, "--seed 0,1,2", "--seeds 0,1,2")
	if strings.Contains(r.Stderr, "strconv") {
		t.Errorf("raw parser error: %s", r.Stderr)
	}
	r = runCLI(t, tmp, 3*time.Minute, append(without(tinyTrain(data, out, "r"), "--seed"), "--seeds", "3,4")...)
	if r.Code != 0 {
		t.Fatalf("--seeds 3,4: %d\n%s", r.Code, r.Stderr)
	}
	for _, s := range []string{"r-s3", "r-s4"} {
		if m, _ := filepath.Glob(filepath.Join(out, s+"-*", "results.json")); len(m) != 1 {
			t.Errorf("no finished run %s under %s: %v", s, out, m)
		}
	}
	for _, w := range []string{"2 seeds: final", "(mean ± sample std)", "  seed 3 ", "  seed 4 "} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("comparison lacks %q:\n%s", w, r.Stdout)
		}
	}
}

func TestTrainBadValueErrors(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	r := runCLI(t, tmp, time.Minute, tinyTrain(data, out, "r", "--hidden", "32x32")...)
	expectCLIError(t, r, "--hidden 32x32: want comma-separated widths, e.g. 256,256")
	if strings.Contains(r.Stderr, "strconv") {
		t.Errorf("raw parser error: %s", r.Stderr)
	}
	cfg := filepath.Join(tmp, "c.yaml")
	os.WriteFile(cfg, []byte("cql:\n  batch: lots\n"), 0o644)
	r = runCLI(t, tmp, time.Minute, tinyTrain(data, out, "r", "--config-file", cfg)...)
	expectCLIError(t, r, "--config-file "+cfg, "cql.batch")
	if strings.Contains(r.Stderr, "json:") {
		t.Errorf("YAML error carries a json: prefix: %s", r.Stderr)
	}
	r = runCLI(t, tmp, time.Minute, tinyTrain(filepath.Join(tmp, "data", "hopper-medium-v2.hdf5"), out, "r")...)
	expectCLIError(t, r, "hopper-medium-v2.hdf5: no such file; make one with 'koopq collect")
	for _, c := range []struct{ flag, value, want string }{
		{"--augment", "kfcpp", `did you mean "kfc++"?`},
		{"--env", "pendullum", `did you mean "pendulum"?`},
		{"--preset", "corll", `did you mean "corl"?`},
	} {
		r = runCLI(t, tmp, time.Minute, tinyTrain(data, out, "r", c.flag, c.value)...)
		expectCLIError(t, r, c.value, c.want)
	}
	if l := listTree(t, tmp); slices.Contains(l, "runs") {
		t.Errorf("failed commands left %v", l)
	}
}

func TestTrainCQLName(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	// Default name and augment: cql.
	r := runCLI(t, tmp, 2*time.Minute, without(tinyTrain(data, out, ""), "--name", "--augment")...)
	if r.Code != 0 {
		t.Fatalf("train: %d\n%s", r.Code, r.Stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "pendulum-cql-s1-*")); len(m) != 1 {
		t.Errorf("default run name is not pendulum-cql-s1-…: %v", listTree(t, out))
	}
	// A run of an older koopq says "none": it still resumes, under either name.
	r = runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "old", "--augment", "none", "--seed", "2")...)
	if r.Code != 0 {
		t.Fatalf("--augment none: %d\n%s", r.Code, r.Stderr)
	}
	m, _ := filepath.Glob(filepath.Join(out, "old-*"))
	if len(m) != 1 {
		t.Fatalf("no run old-*: %v", m)
	}
	var cfg struct{ Augment string }
	b, _ := os.ReadFile(filepath.Join(m[0], "config.json"))
	if json.Unmarshal(b, &cfg); cfg.Augment != "none" {
		t.Errorf("config.json augment %q, want the given none", cfg.Augment)
	}
	r = runCLI(t, tmp, 2*time.Minute, "train", "--resume", m[0], "--augment", "cql")
	if r.Code != 0 {
		t.Fatalf("resume a none run with --augment cql: %d\n%s", r.Code, r.Stderr)
	}
	// The report labels both cql.
	r = runCLI(t, tmp, 2*time.Minute, "report", out)
	if r.Code != 0 {
		t.Fatalf("report: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "cql") || strings.Contains(r.Stdout, "none") {
		t.Errorf("report does not call plain CQL cql:\n%s", r.Stdout)
	}
}

// An interval set in the config file is chosen, even when it equals the
// preset's (5000, 1000 in paper): it was rescaled to --steps/10 and
// --steps/100 as if nobody had set it.
func TestTrainConfigFileIntervalsStay(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	cfg := filepath.Join(tmp, "c.yaml")
	if err := os.WriteFile(cfg, []byte("eval_every: 5000\nlog_every: 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "runs")
	r := runCLI(t, tmp, 2*time.Minute, without(tinyTrain(data, out, "r", "--steps", "150", "--checkpoint-every", "150", "--config-file", cfg),
		"--log-every", "--eval-every")...)
	if r.Code != 0 {
		t.Fatalf("train: %d\n%s", r.Code, r.Stderr)
	}
	res := readResults(t, runDir(t, out))
	if res.Config.EvalEvery != 5000 || res.Config.LogEvery != 1000 {
		t.Errorf("eval_every %d log_every %d, want the config file's 5000 and 1000", res.Config.EvalEvery, res.Config.LogEvery)
	}
}

func TestTrainShortRunScalesIntervals(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	r := runCLI(t, tmp, 2*time.Minute, without(tinyTrain(data, out, "r", "--steps", "300", "--checkpoint-every", "300"),
		"--log-every", "--eval-every")...)
	if r.Code != 0 {
		t.Fatalf("train: %d\n%s", r.Code, r.Stderr)
	}
	dir := runDir(t, out)
	res := readResults(t, dir)
	if res.Config.LogEvery != 3 || res.Config.EvalEvery != 30 {
		t.Errorf("log_every %d eval_every %d, want 3 and 30 (steps/100, steps/10)", res.Config.LogEvery, res.Config.EvalEvery)
	}
	if len(res.History) != 10 {
		t.Errorf("%d evaluations, want 10", len(res.History))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "metrics.jsonl")); strings.Count(string(b), "\n") < 90 {
		t.Errorf("metrics.jsonl has %d rows, want about 100", strings.Count(string(b), "\n"))
	}
	// Run directory printed before training starts, as the first line.
	if first, _, _ := strings.Cut(r.Stdout, "\n"); first != "run directory: "+dir {
		t.Errorf("first line %q, want the run directory %s", first, dir)
	}
}

func TestTrainKoopmanMaxEpochsName(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	for _, f := range []string{"--koopman-max-epochs", "--koopman-epochs"} {
		r := runCLI(t, tmp, time.Minute, tinyTrain(data, out, "r", f, "0")...)
		expectCLIError(t, r, "--koopman-max-epochs (koopman_train.max_epochs) = 0")
	}
	r := runCLI(t, tmp, time.Minute, "koopman", "train", "--data", data, "--env", "pendulum", "--out", "m.safetensors", "--epochs", "0")
	expectCLIError(t, r, "--max-epochs 0")
	r = runCLI(t, tmp, time.Minute, "train", "--help")
	if strings.Contains(r.Stdout, "--koopman-epochs") || !strings.Contains(r.Stdout, "--koopman-max-epochs") {
		t.Errorf("train --help does not name only --koopman-max-epochs")
	}
	r = runCLI(t, tmp, time.Minute, "koopman", "train", "--help")
	if strings.Contains(r.Stdout, "--epochs") || !strings.Contains(r.Stdout, "--max-epochs") {
		t.Errorf("koopman train --help does not name only --max-epochs")
	}
}

func TestTrainHelpGroupsFlags(t *testing.T) {
	r := runCLI(t, "", time.Minute, "train", "--help")
	if r.Code != 0 {
		t.Fatalf("train --help: %d\n%s", r.Code, r.Stderr)
	}
	at := func(s string) int {
		i := strings.Index(r.Stdout, s)
		if i < 0 {
			t.Errorf("help lacks %q", s)
		}
		return i
	}
	order := []int{at("\nMain flags:\n"), at("--data string"), at("--env string"), at("--augment string"), at("--steps int"), at("--seed uint"),
		at("\nData:\n"), at("--drop-invalid"), at("\nMethod"), at("--preset string"), at("\nCQL:\n"), at("--hidden"), at("\nKoopman:\n"),
		at("--koopman-lr float"), at("\nEvaluation:\n"), at("--eval-every"), at("\nOutput:\n"), at("--out string"), at("\nGlobal flags:\n"), at("--backend")}
	if !slices.IsSorted(order) {
		t.Errorf("flags not grouped in order (positions %v):\n%s", order, r.Stdout)
	}
}
