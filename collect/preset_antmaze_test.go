package collect

import (
	"context"
	"math"
	"testing"

	"github.com/koopq/koopq/run"
)

// The antmaze preset trains end to end on collected AntMaze data (networks
// shrunk to keep the test short; every AntMaze option stays on) and the
// result carries the evaluation's success rate.
func TestAntMazePresetTrains(t *testing.T) {
	d, _, err := AntMazeDataset(AntMazeConfig{Dataset: "antmaze-umaze-v2", Transitions: 400, EpisodeSteps: 100, ActionNoise: 0.2, Seed: 2}, &zeroPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := run.Preset("antmaze")
	cfg.Env, cfg.Data = "antmaze-umaze-v2", "collected"
	cfg.CQL.Net.Hidden, cfg.CQL.Q1Hidden, cfg.CQL.Q2Hidden = []int{16, 16}, []int{16, 16, 16}, []int{16}
	cfg.CQL.Batch, cfg.CQL.Steps = 32, 20
	cfg.EvalEvery, cfg.EvalEpisodes, cfg.LogEvery, cfg.CheckpointEvery = 0, 2, 10, 0
	dir, err := run.NewDir(t.TempDir(), "antmaze")
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Train(context.Background(), cfg, dir, d, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	sr := float64(res.Final.SuccessRate)
	if res.Steps != 20 || res.Final.Episodes != 2 || math.IsNaN(sr) || sr < 0 || sr > 1 {
		t.Errorf("steps %d, %d evaluation episodes, success rate %v", res.Steps, res.Final.Episodes, sr)
	}
	if !res.Config.CQL.MaxTargetBackup || !res.Config.CQL.ClipDiff || res.Config.CQL.RewardScale != 10 {
		t.Errorf("the run's config lost the AntMaze options: %+v", res.Config.CQL)
	}
}
