package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/run"
)

// A run whose dataset or Koopman model moved (same bytes, another path)
// could not be resumed: --data on resume was a settings change and
// editing config.json was refused by the checkpoint check. Now --data and
// --koopman on resume take the new paths when they hold what the run read
// (its recorded fingerprints), config.json follows them, the segment says
// so, and the run ends with the numbers of the run that never moved.
func TestResumeWithMovedInputs(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	cp := func(src, dst string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	data, model := cp(fx.Data, filepath.Join(tmp, "d.hdf5")), cp(fx.Model, filepath.Join(tmp, "m.safetensors"))
	kfc := []string{"--augment", "kfc++", "--koopman", model}
	for _, name := range []string{"moved", "stayed"} {
		if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, filepath.Join(tmp, name), "r", kfc...)...); r.Code != 0 {
			t.Fatalf("train %s: %s", name, r.Stderr)
		}
	}
	moved, stayed := runDir(t, filepath.Join(tmp, "moved")), runDir(t, filepath.Join(tmp, "stayed"))
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", stayed, "--steps", "60"); r.Code != 0 {
		t.Fatalf("extending the run that stayed: %s", r.Stderr)
	}
	newDir := filepath.Join(tmp, "elsewhere")
	if err := os.MkdirAll(newDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data2, model2 := filepath.Join(newDir, "d.hdf5"), filepath.Join(newDir, "m.safetensors")
	for old, now := range map[string]string{data: data2, model: model2} {
		if err := os.Rename(old, now); err != nil {
			t.Fatal(err)
		}
	}
	resume := func(extra ...string) cliResult {
		return runCLI(t, tmp, time.Minute, append([]string{"train", "--resume", moved, "--steps", "60"}, extra...)...)
	}
	expectCLIError(t, resume(), "dataset "+data+" is not there, and the run's Koopman model "+model+" is not there: if it moved",
		"--data NEWPATH --koopman NEWPATH")
	expectCLIError(t, resume("--data", data2), "Koopman model "+model+" is not there", moved+" --koopman NEWPATH")
	expectCLIError(t, resume("--data", filepath.Join(newDir, "nope.hdf5"), "--koopman", model2), "--data "+filepath.Join(newDir, "nope.hdf5")+": no such file")
	other := writeData(t, filepath.Join(newDir, "other.hdf5"), map[string]string{"env": "pendulum"}, nil)
	expectCLIError(t, resume("--data", other, "--koopman", model2), "--data "+other+" holds other transitions than the run read at "+data)
	otherModel := filepath.Join(newDir, "m-other.safetensors")
	ok(t, runCLI(t, tmp, time.Minute, "koopman", "train", "--data", data2, "--env", "pendulum", "--out", otherModel, "--max-epochs", "1",
		"--hidden", "8", "--latent", "4", "--diag-n", "20"))
	expectCLIError(t, resume("--data", data2, "--koopman", otherModel), "--koopman "+otherModel+" is another model than the run read at "+model)
	// A resume that fails after the checks (here: a corrupt checkpoint)
	// leaves config.json as it was: it follows a move only once a
	// checkpoint records it.
	ckpt := filepath.Join(moved, "checkpoints", "latest.safetensors")
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(good)
	bad[len(bad)-3] ^= 1
	if err := os.WriteFile(ckpt, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := resume("--data", data2, "--koopman", model2); r.Code != 1 || !strings.Contains(r.Stderr, "checksum mismatch") {
		t.Fatalf("resume from a corrupt checkpoint: %d\n%s", r.Code, r.Stderr)
	}
	if err := os.WriteFile(ckpt, good, 0o644); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Data  string `json:"data"`
		Model string `json:"koopman_model"`
	}
	readCfg := func() {
		t.Helper()
		b, _ := os.ReadFile(filepath.Join(moved, "config.json"))
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	if readCfg(); cfg.Data != data || cfg.Model != model {
		t.Fatalf("a failed resume wrote the new paths into config.json: %+v", cfg)
	}
	r := resume("--data", data2, "--koopman", model2)
	if r.Code != 0 || !strings.Contains(r.Stderr, "dataset moved: "+data+" → "+data2) {
		t.Fatalf("resume at the new paths: %d\n%s", r.Code, r.Stderr)
	}
	if readCfg(); cfg.Data != data2 || cfg.Model != model2 {
		t.Fatalf("config.json after the move: %+v", cfg)
	}
	res, want := readResults(t, moved), readResults(t, stayed)
	if n := len(res.Segments); n != 2 || len(res.Segments[0].Moved) != 0 || len(res.Segments[1].Moved) != 2 ||
		!strings.Contains(res.Segments[1].Moved[1], "Koopman model moved: "+model+" → "+model2) {
		t.Fatalf("segments %+v", res.Segments)
	}
	if res.Inputs.Dataset.Path != data2 || res.Inputs.Dataset.ContentSHA256 != want.Inputs.Dataset.ContentSHA256 {
		t.Errorf("inputs %+v", res.Inputs.Dataset)
	}
	if !reflect.DeepEqual(res.Final.Returns, want.Final.Returns) || res.Steps != 60 {
		t.Errorf("final returns %v after the move, %v without it", res.Final.Returns, want.Final.Returns)
	}
	if fileSHA256(t, filepath.Join(moved, "policy.safetensors")) != fileSHA256(t, filepath.Join(stayed, "policy.safetensors")) {
		t.Error("the moved run's policy differs from the run that stayed")
	}
	// The next resume reads the new paths without being told.
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", moved, "--steps", "70"); r.Code != 0 {
		t.Fatalf("resume after the move: %s", r.Stderr)
	}
}

// A sweep whose data root moved (another machine, another --data-root)
// resumes its runs on the data at the new root: it passes the spec's paths
// to `train --resume`, which checks them by content.
func TestSweepResumesOnAMovedDataRoot(t *testing.T) {
	work := t.TempDir()
	for _, dir := range []string{"a/data", "b"} {
		if err := os.MkdirAll(filepath.Join(work, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeData(t, filepath.Join(work, "a", "data", "good.hdf5"), map[string]string{"env": "pendulum"}, nil)
	spec := `name: moved
datasets:
  - {name: good, env: pendulum, data: data/good.hdf5}
methods:
  - {name: CQL, augment: none}
seeds: [0]
steps: STEPS
eval: {every: 20, episodes: 1}
flags: {hidden: [8, 8], batch: 16, bc-steps: 0, log-every: 10, checkpoint-every: 20}
threads: 1
`
	write := func(steps string) {
		if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(strings.Replace(spec, "STEPS", steps, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("20")
	sweepRun := func(root string) cliResult {
		return runCLI(t, work, 2*time.Minute, "sweep", "run", "spec.yaml", "--out", "sw", "--jobs", "1", "--allow-dirty", "--data-root", root)
	}
	if r := sweepRun(filepath.Join(work, "a")); r.Code != 0 {
		t.Fatalf("first sweep: %s%s", r.Stdout, r.Stderr)
	}
	if err := os.Rename(filepath.Join(work, "a", "data"), filepath.Join(work, "b", "data")); err != nil {
		t.Fatal(err)
	}
	write("40")
	if r := sweepRun(filepath.Join(work, "b")); r.Code != 0 {
		t.Fatalf("sweep on the moved root: %s%s", r.Stdout, r.Stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "sw", "good__cql__s0", "run-*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	res := readResults(t, dirs[0])
	if want := filepath.Join(work, "b", "data", "good.hdf5"); res.Steps != 40 || res.Inputs.Dataset.Path != want ||
		len(res.Segments) != 2 || len(res.Segments[1].Moved) != 1 {
		t.Fatalf("steps %d, dataset %s (want %s), segments %+v", res.Steps, res.Inputs.Dataset.Path, want, res.Segments)
	}
}

// A Koopman model the run's augmentation does not use is no input: its
// move neither blocks a resume nor asks for --koopman (it did both).
func TestResumeIgnoresAnUnusedMovedModel(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	model := filepath.Join(tmp, "m.safetensors")
	b, err := os.ReadFile(fx.Model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "runs")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(fx.Data, out, "r", "--augment", "none", "--koopman", model)...); r.Code != 0 {
		t.Fatalf("train: %s", r.Stderr)
	}
	if err := os.Rename(model, model+".moved"); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", runDir(t, out), "--steps", "50"); r.Code != 0 {
		t.Fatalf("resume with the unused model gone: %s", r.Stderr)
	}
}

// Without inputs.json the move is checked against the checkpoint's own
// record of its inputs (it was refused as unverifiable).
func TestMoveCheckedAgainstTheCheckpoint(t *testing.T) {
	tmp, data, dir := tinyRun(t)
	if err := os.Remove(filepath.Join(dir, "inputs.json")); err != nil {
		t.Fatal(err)
	}
	other := writePendulumData(t, filepath.Join(tmp, "other.hdf5"), 300, 9)
	expectCLIError(t, runCLI(t, tmp, time.Minute, "train", "--resume", dir, "--steps", "50", "--data", other), "holds other transitions")
	moved := filepath.Join(tmp, "moved.hdf5")
	if err := os.Rename(data, moved); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", dir, "--steps", "50", "--data", moved)
	if r.Code != 0 || !strings.Contains(r.Stderr, "dataset moved: "+data+" → "+moved) {
		t.Fatalf("move checked against the checkpoint: %d\n%s", r.Code, r.Stderr)
	}
}

// The hint names the flag of each missing input; a model path that
// contains "dataset" was asked for with --data.
func TestMovedInputHintFlags(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 100, 1)
	model := filepath.Join(tmp, "dataset-models", "m.safetensors")
	cfg := run.TrainConfig{Data: data, KoopmanModel: model, Augment: "kfc++"}
	err := movedInputHint(cfg, cfg, "RUN")
	if err == nil || !strings.Contains(err.Error(), "koopq train --resume RUN --koopman NEWPATH;") {
		t.Fatalf("only the model gone: %v", err)
	}
}
