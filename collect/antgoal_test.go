package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/sac"
)

// TestSACRunConfigAntGoal: the goal-reaching ant has no D4RL reference
// returns, yet `koopq collect --env antgoal --run-dir` must start a run
// (before the fix SACRunConfig refused it: no D4RL medium level). The run
// never picks a medium policy (its returns are negative distances, and no
// return reaches the sentinel) and writes actor snapshots; a medium score
// is refused with an error naming the flag.
func TestSACRunConfigAntGoal(t *testing.T) {
	cfg, err := SACRunConfig(mujoco.AntGoalName, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.SAC.TotalSteps != 1_000_000 || cfg.SnapshotEvery != 5000 {
		t.Fatalf("antgoal run: %d steps, snapshots every %d; want D4RL's recipe 1000000/5000", cfg.SAC.TotalSteps, cfg.SnapshotEvery)
	}
	if i := cfg.PickMedium([]sac.RunSnapshot{{Return: -3, StochReturn: -3}, {Return: 0, StochReturn: 0}, {Return: 1e300, StochReturn: 1e300}}); i != -1 {
		t.Fatalf("antgoal run picked snapshot %d as medium", i)
	}
	if _, err := SACRunConfig(mujoco.AntGoalName, 40); err == nil {
		t.Fatal("--medium-score accepted for antgoal")
	}

	// A tiny run: it must go end to end and save loadable actor snapshots.
	cfg.SAC.TotalSteps, cfg.SAC.StartSteps, cfg.SAC.Batch = 40, 20, 8
	cfg.SAC.Net.Hidden = []int{8}
	cfg.SnapshotEvery, cfg.CheckpointEvery, cfg.EvalEpisodes = 20, 20, 1
	dir := filepath.Join(t.TempDir(), "run")
	res, err := sac.StartRun(context.Background(), cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Medium != nil || len(res.Snapshots) != 2 {
		t.Fatalf("medium %v, %d snapshots; want none and 2", res.Medium, len(res.Snapshots))
	}
	for _, s := range res.Snapshots {
		if !(s.Return < 0) {
			t.Fatalf("snapshot at step %d: return %v, want negative (−distance per step)", s.Step, s.Return)
		}
		if _, err := os.Stat(filepath.Join(dir, s.File)); err != nil {
			t.Fatal(err)
		}
		p, _, err := sac.ReadPolicy(filepath.Join(dir, s.File))
		if err != nil {
			t.Fatal(err)
		}
		if p.Actor.In() != 29 || p.ActDim != 8 {
			t.Fatalf("snapshot policy is %d→%d, want 29→8", p.Actor.In(), p.ActDim)
		}
	}
	// --export-policies commits the final actor as antgoal's "expert", the
	// entry `koopq collect antmaze-…` looks up, and it loads as a goal policy.
	dst := filepath.Join(t.TempDir(), "policies")
	es, err := ExportPolicies(dir, dst, "", 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Env != mujoco.AntGoalName || es[0].Role != GoalPolicyRole || !strings.Contains(es[0].Made, "goal-reaching") {
		t.Fatalf("exported %+v", es)
	}
	if _, _, _, steps, err := loadGoalPolicy(filepath.Join(dst, es[0].File)); err != nil || steps != 40 {
		t.Fatalf("exported goal policy: SAC step %d, %v", steps, err)
	}
}
