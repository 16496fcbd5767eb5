package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/collect"
)

// koopq collect metaworld-push-v2 writes a scripted-controller dataset
// whose success fraction dataset info reports, the help of collect and
// eval names every manipulation task, and eval reports push's success rate.
func TestCollectManipulation(t *testing.T) {
	dir := t.TempDir()
	for _, verb := range []string{"collect", "eval"} {
		h := runCLI(t, dir, time.Minute, verb, "--help")
		for _, n := range collect.ManipDatasetNames() {
			if !strings.Contains(h.Stdout, n) {
				t.Errorf("%s --help does not name %s", verb, n)
			}
		}
	}
	out := filepath.Join(dir, "data")
	r := runCLI(t, dir, 2*time.Minute, "collect", "metaworld-push-v2", "--episodes", "2", "--noise", "0.5", "--seed", "1", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "reach the goal") {
		t.Fatalf("collect: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	info := runCLI(t, dir, time.Minute, "dataset", "info", filepath.Join(out, "metaworld-push-v2.hdf5"))
	// σ 0.5 leaves the scripted controller successful.
	if info.Code != 0 || !strings.Contains(info.Stdout, "2 of 2 episodes (100.0%) reach the goal") {
		t.Fatalf("dataset info:\n%s%s", info.Stdout, info.Stderr)
	}
	ev := runCLI(t, dir, time.Minute, "eval", "--env", "metaworld-push-v2", "--policy", "random", "--episodes", "2")
	if ev.Code != 0 || !strings.Contains(ev.Stdout, "success rate 0.0% (0 of 2 episodes reached the goal)") {
		t.Fatalf("eval:\n%s%s", ev.Stdout, ev.Stderr)
	}
	// A run trained on it: replaying and re-evaluating its final policy
	// print the success rates beside the returns.
	tr := runCLI(t, dir, 3*time.Minute, "train", "--data", filepath.Join(out, "metaworld-push-v2.hdf5"), "--env", "metaworld-push-v2",
		"--hidden", "32,32", "--batch", "32", "--steps", "20", "--bc-steps", "10", "--eval-every", "20", "--eval-episodes", "2",
		"--seed", "1", "--out", "runs")
	if tr.Code != 0 {
		t.Fatalf("train: exit %d\n%s", tr.Code, tr.Stderr)
	}
	rp := runCLI(t, dir, time.Minute, "eval", "--run", "runs")
	if rp.Code != 0 || !strings.Contains(rp.Stdout, "success rate 0.0% / 0.0%: identical") {
		t.Errorf("eval --run: exit %d\n%s%s", rp.Code, rp.Stdout, rp.Stderr)
	}
	re := runCLI(t, dir, time.Minute, "eval", "--run", "runs", "--episodes", "2", "--seed", "3")
	if re.Code != 0 || !strings.Contains(re.Stdout, "; success rate 0.0% re-evaluated, 0.0% recorded\n") {
		t.Errorf("eval --run --episodes: exit %d\n%s%s", re.Code, re.Stdout, re.Stderr)
	}
	bad := runCLI(t, dir, time.Minute, "collect", "hopper-random-v2", "--noise", "0.3", "--out", filepath.Join(dir, "bad"))
	expectCLIError(t, bad, "--noise", "metaworld-push-v2")
	bad = runCLI(t, dir, time.Minute, "collect", "metaworld-push-v2", "--transitions", "1000", "--out", filepath.Join(dir, "bad"))
	expectCLIError(t, bad, "--transitions", "--episodes")
}

// --random-fraction makes the picked episodes uniformly random (door-close:
// random actions never close the door), is recorded in the file's metadata
// and collect-d4rl.json, collect --help lists each task's default recipe,
// and bad values are refused before --out is made.
func TestCollectManipRandomFraction(t *testing.T) {
	dir := t.TempDir()
	h := runCLI(t, dir, time.Minute, "collect", "--help")
	for _, n := range collect.ManipDatasetNames() {
		r, _ := collect.ManipDefaultRecipe(n)
		if !strings.Contains(h.Stdout, fmt.Sprintf("%-27s --noise %-4g --random-fraction %g", n, r.Noise, r.RandomFraction)) {
			t.Errorf("collect --help lacks %s's recipe %+v", n, r)
		}
	}
	if !strings.Contains(h.Stdout, "--random-fraction") || !strings.Contains(h.Stdout, "A task without a row gets noise 0.8") {
		t.Error("collect --help does not describe --random-fraction and the fallback")
	}
	out := filepath.Join(dir, "data")
	r := runCLI(t, dir, 2*time.Minute, "collect", "metaworld-door-close-v2", "--episodes", "2", "--noise", "0.5", "--random-fraction", "1", "--seed", "1", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "0.0% reach the goal (0)") {
		t.Fatalf("collect: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	info := runCLI(t, dir, time.Minute, "dataset", "info", filepath.Join(out, "metaworld-door-close-v2.hdf5"))
	for _, want := range []string{"0 of 2 episodes (0.0%) reach the goal", "random_fraction        1", "random_episodes        0,1"} {
		if info.Code != 0 || !strings.Contains(info.Stdout, want) {
			t.Errorf("dataset info lacks %q:\n%s%s", want, info.Stdout, info.Stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, collect.D4RLSummaryFile))
	if err != nil || !strings.Contains(string(b), "random fraction 1: 2 of 2 episodes uniformly random") {
		t.Errorf("%s: %v\n%s", collect.D4RLSummaryFile, err, b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"metaworld-door-close-v2", "--random-fraction", "1.5"}, "--random-fraction"},
		{[]string{"metaworld-door-close-v2", "--random-fraction", "-0.1"}, "--random-fraction"},
		{[]string{"hopper-random-v2", "--random-fraction", "0.5"}, "--random-fraction"},
	} {
		bad := filepath.Join(dir, "bad")
		expectCLIError(t, runCLI(t, dir, time.Minute, append(append([]string{"collect"}, c.args...), "--out", bad)...), c.want)
		if _, err := os.Stat(bad); !os.IsNotExist(err) {
			t.Errorf("%v: --out made before the check failed (%v)", c.args, err)
		}
	}
}
