package collect

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

// unwritableDir is an existing directory no file can be created in, even by
// root: /proc.
func unwritableDir(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp("/proc", "probe-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skip("/proc is writable here")
	}
	if _, err := os.Stat("/proc"); err != nil {
		t.Skip("no /proc")
	}
	return "/proc"
}

// An --out that cannot be written to is found before the rollouts (or the
// SAC run), not after them.
func TestCollectChecksOutBeforeRollouts(t *testing.T) {
	dir := unwritableDir(t)
	rolled := false
	progress := func(string, int, int, string) { rolled = true }
	_, err := WriteD4RLDatasets(context.Background(), []string{"hopper-random-v2"}, D4RLOptions{Out: dir, Transitions: 50}, progress)
	if err == nil || !strings.Contains(err.Error(), "--out /proc: cannot write files there") || rolled {
		t.Errorf("WriteD4RLDatasets into %s: %v (rollout started: %v)", dir, err, rolled)
	}
	cfg := sac.CollectConfig{Env: "pendulum", SAC: sac.DefaultConfig(200), EvalEvery: 100, EvalEpisodes: 1, Transitions: 50, MediumLevel: 0.5}
	_, _, err = run.Collect(context.Background(), cfg, dir, progress)
	if err == nil || !strings.Contains(err.Error(), "--out /proc: cannot write files there") || rolled {
		t.Errorf("Collect into %s: %v (SAC started: %v)", dir, err, rolled)
	}
}
