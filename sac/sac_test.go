package sac

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/env"
	_ "github.com/koopq/koopq/env/classic"
)

// SAC on Pendulum-v1 must reach a mean return far above a random policy's.
// A uniform-random policy scores about −1200 (measured: −1150 to −1300 over
// seeds); a learned swing-up policy scores above −400 (typically −150). The
// threshold −600 sits far from both, so seed noise cannot flip the outcome.
func TestSACLearnsPendulum(t *testing.T) {
	if testing.Short() {
		t.Skip("learning test")
	}
	e, err := env.Make("pendulum")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(8000)
	cfg.Net.Hidden = []int{64, 64}
	cfg.Seed = 1
	ag, buf, err := Train(context.Background(), cfg, e, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 8000 {
		t.Fatalf("replay holds %d transitions, want 8000", buf.Len())
	}
	if err := buf.Validate(); err != nil {
		t.Fatal(err)
	}
	scale, _ := Scale(e)
	ret, err := deterministicReturn("pendulum", NewPolicy(ag.Actor, nil, scale), 10, rand.New(rand.NewPCG(99, 7)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SAC pendulum mean return after 8000 steps: %.1f", ret)
	if ret < -600 {
		t.Fatalf("SAC mean return %.1f, want > −600 (random ≈ −1200)", ret)
	}
}
