package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/nn"
)

// resultsNumbers is results.json without the config (the runs compared
// differ in it), the policy file's fingerprint (its metadata names the
// augmentation; the tests compare its tensors) and the fields
// resultsNoTiming leaves out.
func resultsNumbers(t *testing.T, dir string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(resultsNoTiming(t, dir)), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "config")
	delete(m, "provenance")
	delete(m, "policy")
	out, _ := json.MarshalIndent(m, "", " ")
	return string(out)
}

// Issue 67, paired comparisons: `--augment gaussian --gaussian-sigma 0`
// is the run of `--augment none` with the same seed, bit for bit.
func TestTrainGaussianZeroIsNone(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	var dirs []string
	for _, c := range [][]string{{"--augment", "none"}, {"--augment", "gaussian", "--gaussian-sigma", "0"}} {
		out := filepath.Join(tmp, c[1])
		if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r", append(c, "--quiet")...)...); r.Code != 0 {
			t.Fatalf("train %v: %d\n%s", c, r.Code, r.Stderr)
		}
		dirs = append(dirs, runDir(t, out))
	}
	if a, b := resultsNumbers(t, dirs[0]), resultsNumbers(t, dirs[1]); a != b {
		t.Errorf("results.json numbers differ:\n%s\nvs\n%s", a, b)
	}
	if a, b := csvNoTiming(t, filepath.Join(dirs[0], "metrics.csv")), csvNoTiming(t, filepath.Join(dirs[1], "metrics.csv")); a != b {
		t.Errorf("metrics.csv differs:\n%s\nvs\n%s", a, b)
	}
	for _, f := range []string{"checkpoints/latest.safetensors", "policy.safetensors"} {
		ta, _, err1 := nn.LoadSafetensors(filepath.Join(dirs[0], f))
		tb, _, err2 := nn.LoadSafetensors(filepath.Join(dirs[1], f))
		if err1 != nil || err2 != nil || len(ta) != len(tb) {
			t.Fatalf("%s: %v, %v, %d vs %d tensors", f, err1, err2, len(ta), len(tb))
		}
		for name, x := range ta {
			if y, ok := tb[name]; !ok || !slices.EqualFunc(x.Data, y.Data, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				t.Errorf("%s: tensor %s differs", f, name)
			}
		}
	}
}

// A run whose config.json has no rng_streams, as every run written before
// the paired layout, resumes with the legacy single stream: extended by
// --resume it ends as the uninterrupted run.
func TestTrainResumesLegacyRun(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	legacy := filepath.Join(tmp, "legacy.yaml")
	if err := os.WriteFile(legacy, []byte("cql:\n  rng_streams: \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	train := func(out string, steps string) string {
		r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r", "--config-file", legacy, "--steps", steps, "--quiet")...)
		if r.Code != 0 {
			t.Fatalf("train: %d\n%s", r.Code, r.Stderr)
		}
		return runDir(t, out)
	}
	want := train(filepath.Join(tmp, "whole"), "40")
	got := train(filepath.Join(tmp, "parts"), "20")
	if b, _ := os.ReadFile(filepath.Join(got, "config.json")); strings.Contains(string(b), "rng_streams") {
		t.Fatalf("legacy config.json names rng_streams:\n%s", b)
	}
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", got, "--steps", "40", "--quiet"); r.Code != 0 {
		t.Fatalf("train --resume: %d\n%s", r.Code, r.Stderr)
	}
	compareRuns(t, want, got)
	if _, meta, err := nn.LoadSafetensors(filepath.Join(got, "checkpoints", "latest.safetensors")); err != nil || meta["rng"] == "" || meta["rng_streams"] != "" {
		t.Errorf("resumed legacy run's checkpoint: rng %q, rng_streams %q (%v); want the single stream", meta["rng"], meta["rng_streams"], err)
	}
}
