package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/run"
)

// Every koopq train flag koopman-X that sets the training of a run's own
// Koopman model (koopman_train.*, koopman_hidden, koopman_latent) names a
// koopman train flag X, so a sweep hands it to the dataset's default shared
// model; koopman-prob (augmentation, not training) is not one.
func TestSweepKoopmanTrainFlagsMap(t *testing.T) {
	chk := specChecker()
	for _, p := range run.TrainParams() {
		x, ok := strings.CutPrefix(p.Flag, "koopman-")
		if !ok {
			continue
		}
		training := strings.HasPrefix(p.Key, "koopman_train.") || p.Key == "koopman_hidden" || p.Key == "koopman_latent"
		if got := chk.KoopmanTrainFlag(x); got != training {
			t.Errorf("--%s (%s): koopman train flag %q: %v, want %v", p.Flag, p.Key, x, got, training)
		}
	}
}

// examples/smoke.yaml has no koopman: block: its KFC++ runs share one
// default model, trained first with their koopman-* settings.
func TestSweepPlanDefaultSharedModel(t *testing.T) {
	p, _ := filepath.Abs(filepath.Join("..", "..", "examples", "smoke.yaml"))
	r := runCLI(t, "", time.Minute, "sweep", "plan", p)
	if r.Code != 0 || strings.Count(r.Stdout, "first: koopman pendulum-medium → ") != 1 ||
		!strings.Contains(r.Stdout, "--hidden=32,32 --max-epochs=3)") {
		t.Errorf("plan: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
