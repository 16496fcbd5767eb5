package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

// A Koopman model found at the path of a spec's koopman: block was adopted
// unchecked: a model of other sizes, settings, env or data was used as
// what the block makes. Now it is compared with the block and refused by
// name; one that matches is adopted, saying what was checked.
func TestAdoptedModelIsCheckedAgainstItsBlock(t *testing.T) {
	work := t.TempDir()
	data := writeData(t, filepath.Join(work, "good.hdf5"), map[string]string{"env": "pendulum"}, nil)
	other := writeData(t, filepath.Join(work, "other.hdf5"), map[string]string{"env": "pendulum"}, func(d *dataset.Dataset) { d.Rewards[3]++ })
	model := filepath.Join(work, "models", "good-koopman.safetensors")
	if err := os.MkdirAll(filepath.Dir(model), 0o755); err != nil {
		t.Fatal(err)
	}
	ok(t, runCLI(t, work, 2*time.Minute, "koopman", "train", "--data", data, "--env", "pendulum", "--out", model,
		"--max-epochs", "1", "--hidden", "8,8", "--latent", "4", "--batch", "64", "--seed", "3", "--diag-n", "20"))
	block := map[string]any{"model": model, "seed": 3, "max-epochs": 1, "hidden": []any{8, 8}, "latent": 4, "batch": 64, "diag-n": 99}
	ds := func(env, data string, edit map[string]any) sweep.Dataset {
		b := maps.Clone(block)
		maps.Copy(b, edit)
		return sweep.Dataset{Name: "good", Env: env, Data: data, Koopman: b}
	}
	checked, err := adoptedFitsBlock(sweep.PrepKoopman, ds("pendulum", data, map[string]any{"enc-out-act": "tanh"}), model, data)
	if err != nil || !strings.Contains(checked, "training settings") || !strings.Contains(checked, "training data") {
		t.Fatalf("the model's own block: checked %q, %v", checked, err)
	}
	corrupt := filepath.Join(work, "corrupt.safetensors")
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 1
	if err := os.WriteFile(corrupt, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var unreadable *sweep.UnreadableError
	if _, err := adoptedFitsBlock(sweep.PrepKoopman, ds("pendulum", data, nil), corrupt, data); !errors.As(err, &unreadable) {
		t.Errorf("a corrupt model: %v, want an UnreadableError", err)
	}
	for _, c := range []struct {
		env, data string
		edit      map[string]any
		want      string
	}{
		{"pendulum", data, map[string]any{"latent": 8}, "--latent 4 in the file, 8 from the block"},
		{"pendulum", data, map[string]any{"hidden": []any{16, 16}}, "--hidden 8,8 in the file, 16,16 from the block"},
		{"pendulum", data, map[string]any{"seed": 0}, "--seed 3 in the file, 0 from the block"},
		{"pendulum", data, map[string]any{"max-epochs": 400}, "--max-epochs 1 in the file, 400 from the block"},
		{"pendulum", data, map[string]any{"lr": 1e-3}, "--lr 0.0003 in the file, 0.001 from the block"},
		{"pendulum", data, map[string]any{"dec-act": "relu"}, "--dec-act tanh in the file, relu from the block"},
		{"cartpole", data, nil, "env pendulum in the file, cartpole from the block"},
		{"pendulum", other, nil, "transitions (content sha256)"},
		{"pendulum", data, map[string]any{"no-such-flag": 1}, "the block's flags: unknown flag: --no-such-flag"},
	} {
		_, err := adoptedFitsBlock(sweep.PrepKoopman, ds(c.env, c.data, c.edit), model, c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("block with %v (env %s, data %s): %v, want %q", c.edit, c.env, filepath.Base(c.data), err, c.want)
		}
	}
}

// A training setting without a flag (a constant of the koopq that trained
// the model, here the Huber δ) must match this koopq's too: the block
// cannot say it, so a model trained under another is not what it makes.
func TestAdoptedModelFlaglessSetting(t *testing.T) {
	work := t.TempDir()
	mc := koopman.DefaultModelConfig(3, 1)
	mc.Latent, mc.Hidden = 4, []int{8, 8}
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	save := func(name string, tc koopman.TrainConfig) string {
		t.Helper()
		b, err := json.Marshal(tc)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(work, name)
		if err := m.Save(p, map[string]string{"train_config": string(b)}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tc := koopman.DefaultTrainConfig()
	same := save("same.safetensors", tc)
	tc.HuberDelta *= 2
	other := save("other.safetensors", tc)
	block := map[string]any{"model": "x", "hidden": []any{8, 8}, "latent": 4}
	d := sweep.Dataset{Name: "x", Env: "pendulum", Data: filepath.Join(work, "none.hdf5"), Koopman: block}
	if _, err := adoptedFitsBlock(sweep.PrepKoopman, d, same, d.Data); err != nil {
		t.Fatalf("the default settings: %v", err)
	}
	want := fmt.Sprintf("train_config.huber_delta %g in the file, %g from the block", tc.HuberDelta, tc.HuberDelta/2)
	if _, err := adoptedFitsBlock(sweep.PrepKoopman, d, other, d.Data); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("another Huber δ: %v, want %q", err, want)
	}
}

// A dataset found at the path of a collect: block is compared with the
// block on what its metadata records.
func TestAdoptedDatasetIsCheckedAgainstItsBlock(t *testing.T) {
	work := t.TempDir()
	d4rl := writeData(t, filepath.Join(work, "hopper-medium-v2.hdf5"),
		map[string]string{"env": "hopper", "dataset": "hopper-medium-v2", "seed": "0"}, nil)
	manip := writeData(t, filepath.Join(work, "metaworld-push-v2.hdf5"), map[string]string{"env": "metaworld-push-v2",
		"dataset": "metaworld-push-v2", "seed": "2", "episodes": "50", "episode_steps": "4", "action_noise": "0.1", "random_fraction": "0"}, nil)
	small := writeData(t, filepath.Join(work, "pendulum-medium.hdf5"),
		map[string]string{"env": "pendulum", "dataset": "medium", "seed": "0", "sac_steps": "3000"}, nil)
	// collect.json beside the in-memory pipeline's dataset records the
	// settings its metadata does not (medium level, SAC sizes).
	rec := defaultCollectOptions()
	f, err := parseFlags("collect", []string{"--env", "pendulum", "--sac-steps", "3000", "--transitions", "200"},
		func(f *pflag.FlagSet) { collectParams().MustRegister(f, &rec, defaultCollectOptions()) })
	if err != nil {
		t.Fatal(err)
	}
	rec.flags = f
	b, err := json.Marshal(run.CollectResult{Config: rec.inMemoryConfig(), Files: map[string]string{"medium": small}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "collect.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env, file string
		block     map[string]any
		want      string // "" for adopted
	}{
		{"hopper", d4rl, map[string]any{"dataset": "hopper-medium-v2", "seed": 0, "transitions": 200}, ""},
		{"hopper", d4rl, map[string]any{"dataset": "hopper-medium-v2", "transitions": 200}, ""}, // collect's default seed is 0
		{"hopper", d4rl, map[string]any{"dataset": "hopper-medium-v2", "seed": 1, "transitions": 200}, "--seed 0 in the file, 1 from the block"},
		{"hopper", d4rl, map[string]any{"dataset": "hopper-medium-v2"}, "rows 200 in the file, 1000000 (--transitions) from the block"},
		{"hopper", d4rl, map[string]any{"dataset": "hopper-expert-v2"}, "dataset hopper-medium-v2 in the file, hopper-expert-v2 from the block"},
		{"metaworld-push-v2", manip, map[string]any{"dataset": "metaworld-push-v2", "seed": 2, "episodes": 50, "noise": 0.1}, ""},
		{"metaworld-push-v2", manip, map[string]any{"dataset": "metaworld-push-v2", "seed": 2}, "--episodes 50 in the file, 200 from the block"},
		{"metaworld-push-v2", manip, map[string]any{"dataset": "metaworld-push-v2", "seed": 2, "episodes": 50, "noise": 0.3},
			"--noise 0.1 in the file, 0.3 from the block"},
		{"pendulum", small, map[string]any{"sac-steps": 3000, "transitions": 200}, ""},
		{"pendulum", small, map[string]any{"sac-steps": 3000, "transitions": 200, "medium-level": 0.9},
			"collect.json medium_level 0.3333333333333333 in the file, 0.9 from the block"},
		{"pendulum", small, map[string]any{"sac-steps": 3000, "transitions": 200, "hidden": []any{64, 64}},
			"collect.json sac.net.hidden 256,256 in the file, 64,64 from the block"},
		{"pendulum", small, map[string]any{"sac-steps": 3000, "transitions": 10000}, "rows 200 in the file, 10000 (--transitions) from the block"},
		{"pendulum", small, map[string]any{"sac-steps": 2000, "transitions": 200}, "--sac-steps 3000 in the file, 2000 from the block"},
		{"metaworld-push-v2", manip, map[string]any{"dataset": "metaworld-push-v2", "seed": 2, "episodes": 60},
			"rows 200 in the file, 240 (--episodes 60 of 4 steps) from the block"},
	} {
		d := sweep.Dataset{Name: "x", Env: c.env, Data: c.file, Collect: c.block}
		checked, err := adoptedFitsBlock(sweep.PrepCollect, d, c.file, c.file)
		switch {
		case c.want == "" && (err != nil || !strings.Contains(checked, "seed")):
			t.Errorf("%v: checked %q, %v; want adopted", c.block, checked, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.block, err, c.want)
		}
	}
}

// A dataset without the block asked about is an error (it sliced nil
// arguments).
func TestAdoptCheckWithoutBlock(t *testing.T) {
	for _, kind := range []string{sweep.PrepKoopman, sweep.PrepCollect} {
		if _, err := adoptedFitsBlock(kind, sweep.Dataset{Name: "x", Env: "pendulum", Data: "d.hdf5"}, "f", "d.hdf5"); err == nil ||
			!strings.Contains(err.Error(), "dataset x has no") {
			t.Errorf("%s without its block: %v", kind, err)
		}
	}
}

// sweep run leaves the runs of a dataset whose model at the block's path is
// not what the block makes pending, and writes no record adopting it.
func TestSweepRefusesAdoptingAnotherModel(t *testing.T) {
	work := t.TempDir()
	for _, dir := range []string{"data", "models"} {
		if err := os.MkdirAll(filepath.Join(work, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := writeData(t, filepath.Join(work, "data", "good.hdf5"), nil, nil)
	model := filepath.Join(work, "models", "good-koopman.safetensors")
	ok(t, runCLI(t, work, 2*time.Minute, "koopman", "train", "--data", data, "--env", "pendulum", "--out", model,
		"--max-epochs", "1", "--hidden", "8,8", "--latent", "4", "--batch", "64", "--diag-n", "20"))
	spec := `name: adopt
datasets:
  - name: good
    env: pendulum
    data: data/good.hdf5
    koopman: {model: models/good-koopman.safetensors, max-epochs: 1, hidden: [8, 8], latent: 8, batch: 64}
methods:
  - {name: KFC++, augment: kfc++}
seeds: [0]
steps: 20
eval: {every: 20, episodes: 1}
flags: {hidden: [8, 8], batch: 16, bc-steps: 0, log-every: 10, checkpoint-every: 20}
threads: 1
`
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, work, 2*time.Minute, "sweep", "run", "spec.yaml", "--out", "sw", "--jobs", "1", "--allow-dirty")
	if r.Code != 1 || !strings.Contains(r.Stdout, "skip    dataset good:") ||
		!strings.Contains(r.Stdout, "is not what the spec's koopman: block makes: --latent 4 in the file, 8 from the block") {
		t.Fatalf("sweep run: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(model + sweep.MadeSuffix); err == nil {
		t.Error("the refused model was recorded as adopted")
	}
	if _, err := os.Stat(filepath.Join(work, "sw", "good__kfcpp__s0")); err == nil {
		t.Error("a run started on the refused model")
	}
}
