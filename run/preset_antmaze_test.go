package run

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The antmaze preset holds CORL's AntMaze values (its doc comment's table)
// and survives a round trip through a run's config.json, +∞ clip included.
func TestAntMazePreset(t *testing.T) {
	c, err := Preset("antmaze")
	if err != nil {
		t.Fatal(err)
	}
	q := c.CQL
	checks := []struct {
		name      string
		got, want any
	}{
		{"min_q_weight", q.MinQWeight, 5.0}, {"lagrange", q.Lagrange, true}, {"lagrange_thresh (5·0.8)", q.LagrangeThres, 4.0},
		{"log_alpha_prime_init", q.LogAlphaPrimeInit, 1.0}, {"max_target_backup", q.MaxTargetBackup, true},
		{"clip_diff", q.ClipDiff, true}, {"clip_diff_min", q.ClipDiffMin, -200.0}, {"clip_diff_max", q.ClipDiffMax, math.MaxFloat64},
		{"reward_scale", q.RewardScale, 10.0}, {"reward_bias", q.RewardBias, -5.0},
		{"lr_actor", q.LRActor, 1e-4}, {"lr_critic", q.LRCritic, 3e-4}, {"lr_alpha_prime", q.LRAlphaPrime, 3e-4},
		{"actor hidden", q.Net.Hidden, []int{256, 256, 256}}, {"q1_hidden", q.Q1Hidden, []int{256, 256, 256, 256, 256}},
		{"q2_hidden", q.Q2Hidden, []int{256, 256, 256}}, {"init", q.Net.Init, "orthogonal"},
		{"normalize_states", q.Normalize, false}, {"bc_steps", q.BCSteps, 0}, {"auto_entropy", q.AutoEntropy, true},
		{"backup_entropy", q.BackupEntropy, false}, {"num_actions", q.NumActions, 10}, {"steps", q.Steps, 1000000},
		{"eval_every", c.EvalEvery, 50000}, {"eval_episodes", c.EvalEpisodes, 100},
	}
	for _, k := range checks {
		if !reflect.DeepEqual(k.got, k.want) {
			t.Errorf("antmaze preset %s = %v, want %v", k.name, k.got, k.want)
		}
	}
	c.Data, c.Env = "x.hdf5", "pendulum"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfigFile(p, DefaultTrainConfig(), "")
	if err != nil {
		t.Fatal(err)
	}
	if diffs, _ := DiffConfigs(c, back); len(diffs) != 0 {
		t.Errorf("config.json round trip changed %v", diffs)
	}
}
