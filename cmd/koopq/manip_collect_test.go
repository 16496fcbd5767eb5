package main

import (
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
	bad := runCLI(t, dir, time.Minute, "collect", "hopper-random-v2", "--noise", "0.3", "--out", filepath.Join(dir, "bad"))
	expectCLIError(t, bad, "--noise", "metaworld-push-v2")
	bad = runCLI(t, dir, time.Minute, "collect", "metaworld-push-v2", "--transitions", "1000", "--out", filepath.Join(dir, "bad"))
	expectCLIError(t, bad, "--transitions", "--episodes")
}
