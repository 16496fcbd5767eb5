package main

// Issue 66 items 7, 10 and 11: inputs that contradict the environment,
// single huge values, and files that are not regular files are refused
// with a clear error before anything is written.

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
)

// writeData writes a pendulum-shaped (3 → 1) D4RL file with metadata meta,
// changing actions with edit first (may be nil).
func writeData(t *testing.T, path string, meta map[string]string, edit func(d *dataset.Dataset)) string {
	t.Helper()
	d := dataset.Synthetic(3, 1, 200, rand.New(rand.NewPCG(5, 6)))
	d.Timeouts[99], d.Timeouts[199] = 1, 1
	d.Meta = meta
	if edit != nil {
		edit(d)
	}
	if err := dataset.WriteD4RL(path, d); err != nil {
		t.Fatal(err)
	}
	return path
}

// koopman train --env hopper on pendulum data wrote a model labelled
// hopper; train accepted data whose metadata/env names another env and
// actions outside the env's range.
func TestDataMustFitTheEnv(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	r := runCLI(t, tmp, time.Minute, "koopman", "train", "--data", fx.Data, "--env", "hopper", "--out", "m.safetensors", "--epochs", "1")
	expectCLIError(t, r, "collected in env pendulum", "not --env hopper")
	noEnv := writeData(t, filepath.Join(tmp, "noenv.hdf5"), nil, nil)
	r = runCLI(t, tmp, time.Minute, "koopman", "train", "--data", noEnv, "--env", "hopper", "--out", "m.safetensors", "--epochs", "1")
	expectCLIError(t, r, "env hopper has 11-dimensional observations", "has 3")

	// Same dimensions, but the file says it is hopper data (D4RL name).
	other := writeData(t, filepath.Join(tmp, "other.hdf5"), map[string]string{"env": "hopper-medium-v2"}, nil)
	out := filepath.Join(tmp, "runs")
	r = runCLI(t, tmp, time.Minute, tinyTrain(other, out, "r")...)
	expectCLIError(t, r, `collected in env hopper (metadata/env "hopper-medium-v2"), not --env pendulum`)
	r = runCLI(t, tmp, time.Minute, "koopman", "train", "--data", other, "--env", "pendulum", "--out", "m.safetensors", "--epochs", "1")
	expectCLIError(t, r, "collected in env hopper", "not --env pendulum")
	// Env versions are the same env.
	same := writeData(t, filepath.Join(tmp, "same.hdf5"), map[string]string{"env": "Pendulum-v1"}, nil)
	// Actions outside pendulum's [-2, 2] (a float32 rounding step beyond is fine).
	wide := writeData(t, filepath.Join(tmp, "wide.hdf5"), map[string]string{"env": "pendulum"}, func(d *dataset.Dataset) {
		d.Actions[0] = 2.0000002
		d.Actions[17] = 3.5
		d.Actions[40] = -7
	})
	r = runCLI(t, tmp, time.Minute, tinyTrain(wide, out, "w")...)
	expectCLIError(t, r, "actions row 17 column 0 is 3.5, outside env pendulum's action range [-2, 2] (2 values out of range)")
	if got := listTree(t, tmp); strings.Contains(strings.Join(got, " "), "runs") || strings.Contains(strings.Join(got, " "), "m.safetensors") {
		t.Errorf("refused inputs left files: %v", got)
	}
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(same, out, "ok")...); r.Code != 0 {
		t.Errorf("Pendulum-v1 data refused for --env pendulum: %d\n%s", r.Code, r.Stderr)
	}
}

// One huge value: a makeslice panic (collect --transitions, eval
// --episodes), an out-of-memory dump (collect 1e12 transitions, train
// --hidden 200000,200000, which also left a run directory), a hang (train
// --batch 1000000000). Each is a clear error with nothing written.
func TestHugeValuesAreRefused(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	out := filepath.Join(tmp, "runs")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"collect", "hopper-random-v2", "--transitions", "9223372036854775807", "--out", "d1"},
			[]string{"--transitions 9223372036854775807 (hopper-random-v2) needs about", "of memory, more than the"}},
		{[]string{"collect", "hopper-medium-v2", "--transitions", "1000000000000", "--out", "d2"},
			[]string{"--transitions 1000000000000 (hopper-medium-v2) needs about"}},
		{[]string{"collect", "--env", "pendulum", "--transitions", "9223372036854775807", "--out", "d3"},
			[]string{"--transitions 9223372036854775807 with --sac-steps 20000 needs about"}},
		{[]string{"collect", "--env", "hopper", "--run-dir", "d4", "--sac-steps", "9223372036854775807"},
			[]string{"--sac-steps 9223372036854775807 (the run's replay buffer) needs about"}},
		{[]string{"eval", "--env", "pendulum", "--policy", fx.PendulumPolicy, "--episodes", "9223372036854775807"},
			[]string{"--episodes 9223372036854775807 needs about"}},
		{withFlag(tinyTrain(fx.Data, out, "h"), "--hidden", "200000,200000"),
			[]string{"training with --hidden [200000 200000]", "needs about", "of memory"}},
		{tinyTrain(fx.Data, out, "b", "--batch", "1000000000"),
			[]string{"--batch (cql.batch) 1000000000 is larger than the dataset's 396 transitions"}},
		{tinyTrain(fx.Data, out, "e", "--eval-episodes", "9223372036854775807"),
			[]string{"--eval-episodes 9223372036854775807 needs about"}},
	} {
		r := runCLI(t, tmp, time.Minute, c.args...)
		expectCLIError(t, r, c.want...)
		if got := listTree(t, tmp); len(got) != 0 {
			t.Fatalf("%v left %v", c.args, got)
		}
	}
}

// withFlag returns args with the value after flag replaced (a repeated
// slice flag would append to it).
func withFlag(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out[:len(out)-1] {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

// A named pipe in place of checkpoints/latest.safetensors blocked
// 'train --resume' forever; it is refused as not a regular file.
func TestResumeRefusesANamedPipe(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r")...); r.Code != 0 {
		t.Fatalf("train: %d\n%s", r.Code, r.Stderr)
	}
	dir := runDir(t, out)
	ckpt := filepath.Join(dir, "checkpoints", "latest.safetensors")
	if err := os.Remove(ckpt); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ckpt, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r := runCLI(t, tmp, time.Minute, "train", "--resume", dir, "--steps", "60")
	expectCLIError(t, r, ckpt, "is a named pipe (FIFO), not a regular file")
	r = runCLI(t, tmp, time.Minute, "eval", "--env", "pendulum", "--policy", ckpt, "--episodes", "1")
	expectCLIError(t, r, "is a named pipe (FIFO), not a regular file")
	r = runCLI(t, tmp, time.Minute, "train", "--data", ckpt, "--env", "pendulum", "--out", out)
	expectCLIError(t, r, "is a named pipe (FIFO), not a regular file")
}

// An output file that is one of the command's inputs (by path or through
// a link) is refused before anything is written: the input survives.
// Before, koopman train --out DATA, export --out POLICY and fqe/eval
// --json INPUT replaced the file the command had read.
func TestOutputsAreNotInputs(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	cp := func(src, name string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	data, pol, model := cp(fx.Data, "d.hdf5"), cp(fx.PendulumPolicy, "p.safetensors"), cp(fx.Model, "m.safetensors")
	if err := os.Symlink("d.hdf5", filepath.Join(tmp, "link.hdf5")); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, f := range []string{data, pol, model} {
		before[f] = fileSHA256(t, filepath.Join(tmp, f))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"koopman", "train", "--data", data, "--out", data, "--epochs", "1"}, "--out d.hdf5: is the file --data reads"},
		{[]string{"koopman", "inspect", "--model", model, "--data", data, "--json", model}, "--json m.safetensors: is the file --model reads"},
		{[]string{"export", "--policy", pol, "--out", pol}, "--out p.safetensors: is the file --policy reads"},
		{[]string{"fqe", "--policy", pol, "--data", data, "--steps", "5", "--json", "link.hdf5"}, "--json link.hdf5: is the file --data reads (d.hdf5)"},
		{[]string{"eval", "--policy", pol, "--episodes", "1", "--json", pol}, "--json p.safetensors: is the file --policy reads"},
	} {
		r := runCLI(t, tmp, time.Minute, c.args...)
		expectCLIError(t, r, c.want, "choose another name")
	}
	for f, sum := range before {
		if got := fileSHA256(t, filepath.Join(tmp, f)); got != sum {
			t.Errorf("%s changed", f)
		}
	}
}

// Refusals that only a run's set-up finds (after its directory exists)
// leave no run directory: rewards that cannot be normalized (every episode
// returns the same) and a Koopman validation split that rounds to no
// transition. Before, both left config.json, inputs.json and a lock.
func TestSetupRefusalsLeaveNothing(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	flat := writeData(t, filepath.Join(tmp, "flat.hdf5"), map[string]string{"env": "pendulum"}, func(d *dataset.Dataset) {
		for i := range d.Rewards {
			d.Rewards[i] = -1
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"flat returns", tinyTrain(flat, filepath.Join(tmp, "a"), "r", "--normalize-reward"), []string{"normalize_reward", "different returns"}},
		{"empty validation split", tinyTrain(fx.Data, filepath.Join(tmp, "b"), "r", "--augment", "kfc", "--koopman-val-fraction", "0.001",
			"--koopman-hidden", "8", "--koopman-latent", "2", "--koopman-max-epochs", "1"),
			[]string{"validation fraction of 0.001 leaves 0 of", "new run directory was removed"}},
	} {
		r := runCLI(t, tmp, time.Minute, c.args...)
		expectCLIError(t, r, c.want...)
		out := c.args[slices.Index(c.args, "--out")+1]
		if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) != 0 {
			t.Errorf("%s: left %v", c.name, m)
		}
	}
	// koopman train refuses the split before it takes its lock (it left
	// .m.safetensors.lock).
	k := filepath.Join(tmp, "k")
	if err := os.Mkdir(k, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, tmp, time.Minute, "koopman", "train", "--data", fx.Data, "--out", filepath.Join(k, "m.safetensors"), "--val-fraction", "0.001", "--epochs", "1")
	expectCLIError(t, r, "--val-fraction: a validation fraction of 0.001 leaves 0 of")
	if got := listTree(t, k); len(got) != 0 {
		t.Errorf("koopman train left %v", got)
	}
}

// symcheck printed "trained model saved to OUT/koopman.safetensors" and
// then, on a later failure, removed OUT without a word; the error now
// says that OUT and the model went.
func TestSymcheckFailureSaysOutWasRemoved(t *testing.T) {
	fx := fixtures(t)
	tmp := t.TempDir()
	r := runCLI(t, tmp, time.Minute, "symcheck", "--data", fx.Data, "--env", "pendulum", "--n", "20", "--train-epochs", "1",
		"--train-hidden", "8", "--train-latent", "2", "--shift-l2", "1e30", "--out", "sc")
	expectCLIError(t, r, "reaches only", "--out sc, which this command made, was removed with everything in it, a trained model included")
	if _, err := os.Stat(filepath.Join(tmp, "sc")); !os.IsNotExist(err) {
		t.Errorf("sc: %v, want it removed", err)
	}
}
