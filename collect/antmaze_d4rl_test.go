package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/policies"
	"github.com/koopq/koopq/sac"
)

// untrainedGoalPolicy writes a randomly initialized (seeded) goal-reaching
// actor for the antgoal env, 2×16 wide, in the format of the SAC run's
// snapshots.
func untrainedGoalPolicy(t *testing.T, envName string) string {
	t.Helper()
	e, err := env.Make(envName)
	if err != nil {
		t.Fatal(err)
	}
	net := sac.NetConfig{Hidden: []int{16, 16}, Init: "xavier"}
	p, err := sac.RandomPolicy(e, net, 7)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), envName+"-actor.safetensors")
	if err := sac.WritePolicy(path, p.Actor, net, p.Scale, envName, map[string]string{"sac_step": "0"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// `koopq collect antmaze-…` with a goal-policy file: the same seed gives
// the same bytes, another seed other bytes; the files carry D4RL's AntMaze
// keys; without a committed policy and without --goal-policy the error
// says how to make one and nothing is written; a policy of the wrong
// shape, or --from-run, is refused before any file exists.
func TestWriteAntMazeDatasets(t *testing.T) {
	goal := untrainedGoalPolicy(t, mujoco.AntGoalName)
	names := []string{"antmaze-umaze-v2", "antmaze-medium-diverse-v2"}
	write := func(seed uint64) (string, []D4RLFile) {
		out := filepath.Join(t.TempDir(), "data")
		files, err := WriteD4RLDatasets(context.Background(), names, D4RLOptions{Out: out, Transitions: 1200, Seed: seed, GoalPolicy: goal}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out, files
	}
	a, files := write(3)
	b, _ := write(3)
	c, _ := write(4)
	for i, n := range names {
		fa, err := os.ReadFile(filepath.Join(a, n+".hdf5"))
		if err != nil {
			t.Fatal(err)
		}
		fb, _ := os.ReadFile(filepath.Join(b, n+".hdf5"))
		fc, _ := os.ReadFile(filepath.Join(c, n+".hdf5"))
		if !bytes.Equal(fa, fb) {
			t.Errorf("%s: same seed, different bytes", n)
		}
		if bytes.Equal(fa, fc) {
			t.Errorf("%s: seeds 3 and 4 gave identical files", n)
		}
		f := files[i]
		if f.Name != n || f.Rows != 1200 || f.Episodes != 2 || !strings.Contains(f.Policy, goal) || len(f.SHA256) != 64 {
			t.Errorf("%s: file record %+v", n, f)
		}
		d, err := dataset.ReadD4RL(f.Path, dataset.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.ObsDim != 29 || d.ActDim != 8 || d.Meta["dataset"] != n || d.Meta["policy_sha256"] != f.SHA256 || d.Meta["seed"] != "3" {
			t.Errorf("%s: %d×%d, metadata %v", n, d.ObsDim, d.ActDim, d.Meta)
		}
	}

	// A checkout without a committed goal policy, and no --goal-policy.
	out := filepath.Join(t.TempDir(), "none")
	lookupGoalPolicy = func(env, role string) (policies.Entry, []byte, error) {
		return policies.Entry{}, nil, fmt.Errorf("policies: no %s %s policy in manifest.json", env, role)
	}
	_, err := WriteD4RLDatasets(context.Background(), names[:1], D4RLOptions{Out: out, Transitions: 100}, nil)
	lookupGoalPolicy = policies.Lookup
	if err == nil || !strings.Contains(err.Error(), "--goal-policy") || !strings.Contains(err.Error(), "koopq collect --env antgoal --run-dir") {
		t.Errorf("missing goal policy: %v", err)
	}
	for _, bad := range []D4RLOptions{
		{Out: out, Transitions: 100, GoalPolicy: untrainedGoalPolicy(t, "hopper")},
		{Out: out, Transitions: 100, GoalPolicy: filepath.Join(out, "missing.safetensors")},
		{Out: out, Transitions: 100, GoalPolicy: goal, FromRun: t.TempDir()},
	} {
		if _, err := WriteD4RLDatasets(context.Background(), names[:1], bad, nil); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
	if _, err := WriteD4RLDatasets(context.Background(), []string{"antmaze-medium-v2"}, D4RLOptions{Out: out, Transitions: 100, GoalPolicy: goal}, nil); err == nil {
		t.Error("the evaluation env name antmaze-medium-v2 accepted as a dataset")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused collections created %s (%v)", out, err)
	}
}

// h5py reads a generated AntMaze file under D4RL's key names: shapes and
// dtypes, timeouts every 1000 steps and on the last row, terminals exactly
// where the reward is 1, infos/qpos[:, :2] = observations[:, :2], goals
// constant within each episode, metadata present.
func TestAntMazeDatasetH5py(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run(); err != nil {
		t.Skip("python3 with h5py not available:", err)
	}
	goal := untrainedGoalPolicy(t, mujoco.AntGoalName)
	out := t.TempDir()
	files, err := WriteD4RLDatasets(context.Background(), []string{"antmaze-large-play-v2"}, D4RLOptions{Out: out, Transitions: 2500, Seed: 1, GoalPolicy: goal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	script := `
import sys, json, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    o, a, r = f["observations"][:], f["actions"][:], f["rewards"][:]
    te, to = f["terminals"][:], f["timeouts"][:]
    g, qp, qv = f["infos/goal"][:], f["infos/qpos"][:], f["infos/qvel"][:]
    n = len(r)
    assert o.dtype == np.float32 and o.shape == (n, 29), o.shape
    assert a.shape == (n, 8) and np.all(np.abs(a) <= 1)
    assert te.dtype == np.bool_ and to.dtype == np.bool_
    assert g.shape == (n, 2) and qp.shape == (n, 15) and qv.shape == (n, 14)
    assert np.array_equal(np.flatnonzero(to), [999, 1999, n - 1]), np.flatnonzero(to)
    assert np.array_equal(te, r == 1) and set(np.unique(r)) <= {0.0, 1.0}
    assert np.array_equal(o[:, :15], qp.astype(np.float32)) and np.array_equal(o[:, 15:], qv.astype(np.float32))
    for s, e in [(0, 1000), (1000, 2000), (2000, n)]:
        assert np.all(g[s:e] == g[s]), "goal changes within an episode"
    meta = {k: f["metadata/" + k][()].decode() for k in f["metadata"]}
    print(json.dumps({"n": n, "meta": meta}))
`
	cmd := exec.Command("/usr/bin/python3", "-c", script, files[0].Path)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("h5py: %v\n%s", err, b)
	}
	var got struct {
		N    int               `json:"n"`
		Meta map[string]string `json:"meta"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if got.N != 2500 || got.Meta["kind"] != "play" || got.Meta["env"] != "antmaze-large-play-v2" || got.Meta["eval_goal"] == "" {
		t.Errorf("h5py: %d rows, metadata %v", got.N, got.Meta)
	}
}

// An AntMaze episode that passes through the goal (terminal rows, rewards
// 1) and walks on is one episode, not one per terminal row (before the fix
// every terminal ended an episode: 3 episodes, 2 reaching the goal).
func TestAntMazeCoverageContinuingTerminals(t *testing.T) {
	d := &dataset.Dataset{ObsDim: 29, ActDim: 8}
	for k := range 10 {
		o := make([]float64, 29)
		n := make([]float64, 29)
		o[0], n[0] = float64(k)*0.1, float64(k+1)*0.1
		hit := k == 3 || k == 4
		d.Append(o, make([]float64, 8), b2f64(hit), n, hit, k == 9)
	}
	c, err := AntMazeCoverage(d, &mujoco.UMaze)
	if err != nil {
		t.Fatal(err)
	}
	if c.Episodes != 1 || c.GoalEpisodes != 1 {
		t.Errorf("%d episodes, %d reaching the goal; want 1, 1", c.Episodes, c.GoalEpisodes)
	}
	// A terminal followed by a jump (a new episode) still ends the episode.
	d.Observations[5*29] = 7
	if c, _ := AntMazeCoverage(d, &mujoco.UMaze); c.Episodes != 2 || c.GoalEpisodes != 1 {
		t.Errorf("terminal before a jump: %d episodes, %d reaching the goal; want 2, 1", c.Episodes, c.GoalEpisodes)
	}
}
