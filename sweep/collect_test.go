package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koopq/koopq/internal/lockfile"
)

// Prepare trains a missing shared Koopman model and continues an
// interrupted training (<model>.ckpt present) with --resume instead of
// running `koopq koopman train` into its "use --resume" refusal.
func TestPrepareResumesKoopmanTraining(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: data/hopper-medium.hdf5, koopman: {model: models/h.safetensors, seed: 0}}", 1)
	text = walkerPerRun(text)
	s, runs := mustParse(t, text, Checker{})
	for _, interrupted := range []bool{false, true} {
		root := t.TempDir()
		for _, dir := range []string{"data", "models"} {
			if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, "data", "hopper-medium.hdf5"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		model := filepath.Join(root, "models", "h.safetensors")
		if interrupted {
			if err := os.WriteFile(model+".ckpt", []byte("state"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// A stand-in for koopq: records its arguments, writes the --out file.
		fake := filepath.Join(root, "koopq")
		script := "#!/bin/sh\necho \"$@\" > " + filepath.Join(root, "args") +
			"\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then : > \"$2\"; fi; shift; done\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		s.Datasets[1].Data = filepath.Join(root, "data", "hopper-medium.hdf5") // the other dataset exists too
		if failed := Prepare(context.Background(), s, runs, root, fake, nil, nil); len(failed) != 0 {
			t.Fatalf("interrupted=%v: %v", interrupted, failed)
		}
		args, err := os.ReadFile(filepath.Join(root, "args"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(args), "--resume"); got != interrupted {
			t.Errorf("interrupted=%v: koopq %s", interrupted, args)
		}
		if !strings.HasPrefix(string(args), "koopman train --data "+filepath.Join(root, "data", "hopper-medium.hdf5")) {
			t.Errorf("koopq %s", args)
		}
	}
}

// Prepare makes only what the selected runs use: CQL runs need no Koopman
// model, another dataset's runs neither its data nor its model.
func TestPrepareOnlyWhatSelectedRunsUse(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: data/hopper-medium.hdf5, collect: {seed: 0}, koopman: {model: models/h.safetensors, seed: 0}}", 1)
	text = walkerPerRun(text)
	s, runs := mustParse(t, text, Checker{})
	cases := []struct {
		sel  Selection
		want string // the verbs koopq ran, in order
	}{
		{Selection{Methods: []string{"CQL"}, Datasets: []string{"hopper-medium"}}, "collect"},
		{Selection{Datasets: []string{"walker-medium"}}, ""},
		{Selection{Methods: []string{"KFC++"}}, "collect koopman"},
		{Selection{}, "collect koopman"},
	}
	for _, c := range cases {
		root := t.TempDir()
		fake, log := fakePrepKoopq(t, root, 0)
		sel, err := c.sel.Apply(s, runs)
		if err != nil {
			t.Fatal(err)
		}
		if failed := Prepare(context.Background(), s, sel, root, fake, nil, nil); len(failed) != 0 {
			t.Fatalf("%s: %v", c.sel, failed)
		}
		got, _ := os.ReadFile(log)
		if strings.TrimSpace(string(got)) != c.want {
			t.Errorf("%s: koopq ran %q, want %q", c.sel, got, c.want)
		}
	}
}

// Preparation lists what Prepare would run, without running anything: one
// collect per distinct command (shared by the datasets that use it), a
// Koopman training only for datasets whose selected runs need a model and
// whose model file is missing, --resume after an interrupted training.
func TestPreparation(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: data/hopper-medium.hdf5, collect: {seed: 0}, koopman: {model: models/h.safetensors, seed: 0}}", 1)
	// A second dataset on the same file and collect command: collected once.
	text = strings.Replace(text, "  - {name: walker-medium, env: walker2d, data: /abs/walker.hdf5, flags: {min-q-weight: 5}}",
		"  - {name: hopper-copy, env: hopper, data: data/hopper-medium.hdf5, collect: {seed: 0}, koopman: {per_run: true}}", 1)
	s, runs := mustParse(t, text, Checker{})
	root := t.TempDir()
	kinds := func(steps []PrepStep) string {
		var v []string
		for _, st := range steps {
			v = append(v, st.String())
		}
		return strings.Join(v, "; ")
	}
	steps := Preparation(s, runs, root)
	if got, want := kinds(steps), "collect hopper-medium, hopper-copy; koopman hopper-medium"; got != want {
		t.Fatalf("steps %q, want %q", got, want)
	}
	if steps[0].Path != filepath.Join(root, "data", "hopper-medium.hdf5") || steps[1].Path != filepath.Join(root, "models", "h.safetensors") ||
		steps[1].Log != steps[1].Path+".log" || strings.Contains(strings.Join(steps[1].Args, " "), "--resume") {
		t.Errorf("steps %+v", steps)
	}
	cql, err := Selection{Methods: []string{"CQL"}}.Apply(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(Preparation(s, cql, root)); got != "collect hopper-medium, hopper-copy" {
		t.Errorf("CQL only: %q", got)
	}
	// Data present, training interrupted: only the training, resumed.
	for _, f := range []string{"data/hopper-medium.hdf5", "models/h.safetensors.ckpt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps = Preparation(s, runs, root)
	if len(steps) != 1 || steps[0].Kind != PrepKoopman || steps[0].Args[len(steps[0].Args)-1] != "--resume" {
		t.Errorf("after collect, interrupted training: %+v", steps)
	}
	// Everything present: nothing to make.
	if err := os.WriteFile(filepath.Join(root, "models", "h.safetensors"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if steps := Preparation(s, runs, root); len(steps) != 0 {
		t.Errorf("all present: %+v", steps)
	}
}

// Two sweep processes preparing one data root at once (two `sweep run` on
// one --out, started together) collect each dataset and train each Koopman
// model once: the second waits for the first's lock and then finds the
// files made.
func TestConcurrentPrepareMakesEachFileOnce(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: data/hopper-medium.hdf5, collect: {seed: 0}, koopman: {model: models/h.safetensors, seed: 0}}", 1)
	s, runs := mustParse(t, text, Checker{})
	sel, err := Selection{Datasets: []string{"hopper-medium"}}.Apply(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	fake, log := fakePrepKoopq(t, root, 500*time.Millisecond)
	var wg sync.WaitGroup
	var progress [2]strings.Builder
	failed := make([]map[string]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed[i] = Prepare(context.Background(), s, sel, root, fake, nil, &progress[i])
		}()
	}
	wg.Wait()
	for i := range 2 {
		if len(failed[i]) != 0 {
			t.Fatalf("process %d: %v\n%s", i, failed[i], progress[i].String())
		}
	}
	got, _ := os.ReadFile(log)
	if strings.TrimSpace(string(got)) != "collect koopman" {
		t.Errorf("koopq ran %q, want each step once: \"collect koopman\"\n%s\n%s", got, progress[0].String(), progress[1].String())
	}
	if all := progress[0].String() + progress[1].String(); !strings.Contains(all, "made by another process") {
		t.Errorf("neither process says it found the other's files:\n%s", all)
	}

	// A cancelled wait stops at once with the context's error.
	lock := filepath.Join(root, "models", ".h2.safetensors.prepare.lock")
	unlock, _, err := lockfile.TryLock(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := PrepStep{Kind: PrepKoopman, Datasets: []string{"x"}, Path: filepath.Join(root, "models", "h2.safetensors"), Args: []string{"koopman", "train"}, Log: filepath.Join(root, "models", "h2.log")}
	if err := prepareStep(ctx, st, fake, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// fakePrepKoopq writes a stand-in for koopq under root that appends its verb
// to the returned log, waits delay, then writes its --out file (collect:
// --out is a directory, given hopper-medium.hdf5).
func fakePrepKoopq(t *testing.T, root string, delay time.Duration) (fake, log string) {
	t.Helper()
	log = filepath.Join(root, "verbs")
	fake = filepath.Join(root, "koopq")
	script := "#!/bin/sh\nprintf '%s ' \"$1\" >> " + log + fmt.Sprintf("\nsleep %.3f", delay.Seconds()) +
		"\nverb=$1\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then if [ $verb = collect ]; then mkdir -p \"$2\" && : > \"$2/hopper-medium.hdf5\"; else : > \"$2\"; fi; fi; shift; done\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return fake, log
}

// walkerPerRun gives testSpec's walker-medium koopman: {per_run: true}, so
// that only hopper-medium's explicit model is prepared (without it the
// dataset gets a default shared model: TestDefaultSharedKoopmanModel).
func walkerPerRun(text string) string {
	return strings.Replace(text, "flags: {min-q-weight: 5}}", "flags: {min-q-weight: 5}, koopman: {per_run: true}}", 1)
}

// CheckData checks each dataset's existing data file once, against the
// env its runs use, and leaves missing files and directories to
// MissingData; its errors name the dataset.
func TestCheckData(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a.hdf5", "b.hdf5"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := []Run{
		{Dataset: "a", Env: "pendulum", Data: "a.hdf5"}, {Dataset: "a", Env: "pendulum", Data: "a.hdf5"},
		{Dataset: "b", Env: "hopper", Data: "b.hdf5"}, {Dataset: "gone", Env: "hopper", Data: "gone.hdf5"},
		{Dataset: "d", Env: "hopper", Data: "dir"},
	}
	calls := map[string]int{}
	failed := CheckData(runs, root, func(path, env string) error {
		calls[filepath.Base(path)+" "+env]++
		if env == "hopper" {
			return fmt.Errorf("not hopper data")
		}
		return nil
	})
	if want := map[string]int{"a.hdf5 pendulum": 1, "b.hdf5 hopper": 1}; !reflect.DeepEqual(calls, want) {
		t.Errorf("checks: %v, want %v", calls, want)
	}
	if len(failed) != 1 || failed["b"] == nil || failed["b"].Error() != "dataset b: not hopper data" {
		t.Errorf("failed: %v, want dataset b only", failed)
	}
}
