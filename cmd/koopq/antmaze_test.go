package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/collect"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/policies"
	"github.com/koopq/koopq/sac"
)

// antmazeFile writes a tiny AntMaze-layout dataset (29-dim observations,
// 8-dim actions): 30 steps from the start towards the U-maze's first turn,
// with metadata naming antmaze-umaze-v2 when withMeta.
func antmazeFile(t *testing.T, dir string, withMeta bool) string {
	t.Helper()
	d := &dataset.Dataset{ObsDim: 29, ActDim: 8}
	for k := range 30 {
		o := make([]float32, 29)
		o[0] = float32(k) * 0.2
		d.Observations = append(d.Observations, o...)
		n := make([]float32, 29)
		n[0] = float32(k+1) * 0.2
		d.NextObservations = append(d.NextObservations, n...)
		d.Actions = append(d.Actions, make([]float32, 8)...)
		d.Rewards = append(d.Rewards, 0)
		d.Terminals = append(d.Terminals, 0)
		to := float32(0)
		if k == 29 {
			to = 1
		}
		d.Timeouts = append(d.Timeouts, to)
	}
	if withMeta {
		d.Meta = map[string]string{"env": "antmaze-umaze-v2"}
	}
	path := filepath.Join(dir, "antmaze.hdf5")
	if err := dataset.WriteD4RL(path, d); err != nil {
		t.Fatal(err)
	}
	return path
}

// dataset info on AntMaze data reports coverage (the walk covers cells
// (1,1) and (1,2) of the U-maze's 7), the goal episodes, and writes the
// coverage PNG; --coverage on non-AntMaze data is an error naming the flag.
func TestDatasetInfoAntMaze(t *testing.T) {
	dir := t.TempDir()
	path := antmazeFile(t, dir, true)
	png := filepath.Join(dir, "cov.png")
	r := runCLI(t, dir, time.Minute, "dataset", "info", path, "--coverage", png)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "antmaze umaze: 2 of 7 free cells visited") || !strings.Contains(r.Stdout, "0 of 1 episodes reach the goal") {
		t.Errorf("stdout lacks the coverage line:\n%s", r.Stdout)
	}
	if b, err := os.ReadFile(png); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("coverage PNG: %v", err)
	}
	r = runCLI(t, dir, time.Minute, "dataset", "info", path, "--json")
	var out struct {
		AntMaze struct {
			VisitedCells int `json:"visited_cells"`
		} `json:"antmaze"`
		Rows int `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out.AntMaze.VisitedCells != 2 || out.Rows != 30 {
		t.Errorf("--json: %+v, %v\n%s", out, err, r.Stdout)
	}
	plain := antmazeFile(t, t.TempDir(), false)
	r = runCLI(t, dir, time.Minute, "dataset", "info", plain, "--coverage", filepath.Join(dir, "x.png"))
	expectCLIError(t, r, "--coverage")
	if _, err := os.Stat(filepath.Join(dir, "x.png")); err == nil {
		t.Error("a failed --coverage left a file behind")
	}
}

// `koopq collect antmaze-…`: without --goal-policy it uses the committed
// goal-reaching policy (named with its sha256 in the file's metadata) and
// writes the same bytes every time; with --goal-policy (here an untrained
// antgoal actor) it writes the dataset and says how many episodes reach the
// goal; --goal-policy without AntMaze names is refused.
func TestCollectAntMazeCLI(t *testing.T) {
	dir := t.TempDir()
	en, _, err := policies.Lookup(mujoco.AntGoalName, collect.GoalPolicyRole)
	if err != nil {
		t.Fatalf("no committed goal-reaching policy: %v", err)
	}
	var first []byte
	for _, out := range []string{"a", "b"} {
		r := runCLI(t, dir, time.Minute, "collect", "antmaze-umaze-v2", "--transitions", "300", "--out", out)
		if r.Code != 0 {
			t.Fatalf("collect from the committed policy: exit %d: %s", r.Code, r.Stderr)
		}
		f := filepath.Join(dir, out, "antmaze-umaze-v2.hdf5")
		// 300 rows; qlearning_dataset conventions drop the last one.
		d, err := dataset.ReadD4RL(f, dataset.ReadOptions{})
		if err != nil || d.Len() != 299 || d.Meta["policy_sha256"] != en.SHA256 {
			t.Fatalf("dataset from the committed policy: %v, %d rows (policy_sha256 %q, manifest %q)", err, d.Len(), d.Meta["policy_sha256"], en.SHA256)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Error("two collections with the same seed differ")
		}
	}
	e, err := env.Make(mujoco.AntGoalName)
	if err != nil {
		t.Fatal(err)
	}
	net := sac.NetConfig{Hidden: []int{8}, Init: "xavier"}
	p, err := sac.RandomPolicy(e, net, 1)
	if err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(dir, "goal.safetensors")
	if err := sac.WritePolicy(pf, p.Actor, net, p.Scale, mujoco.AntGoalName, nil); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, dir, time.Minute, "collect", "antmaze-umaze-v2", "--transitions", "300", "--out", "data", "--goal-policy", pf)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "reach the evaluation goal") {
		t.Errorf("stdout: %s", r.Stdout)
	}
	d, err := dataset.ReadD4RL(filepath.Join(dir, "data", "antmaze-umaze-v2.hdf5"), dataset.ReadOptions{})
	if err != nil || d.ObsDim != 29 || d.Meta["policy_sha256"] == "" {
		t.Errorf("written dataset: %v", err)
	}
	r = runCLI(t, dir, time.Minute, "collect", "--goal-policy", pf)
	expectCLIError(t, r, "--goal-policy")
}
