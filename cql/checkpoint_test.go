package cql

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/sac"
)

// A learner with a non-finite weight is never checkpointed, and the last
// good checkpoint on disk survives the refused write.
func TestCheckpointRefusesNonFiniteWeights(t *testing.T) {
	d := dataset.Synthetic(3, 1, 200, rand.New(rand.NewPCG(1, 2)))
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	tr, err := NewTrainer(smallConfig(5), d, nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := tr.StepOnce(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := tr.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	if err := tr.Learner.CheckFinite(); err != nil {
		t.Fatalf("finite learner reported: %v", err)
	}
	for _, poison := range []func(){
		func() { tr.Learner.Q[1].Params()[0].Data[3] = float32(math.NaN()) },
		func() { tr.Learner.Actor.Params()[1].Data[0] = float32(math.Inf(-1)) },
		func() { tr.Learner.LogAlphaPrime = math.NaN() },
		func() { tr.Learner.Opt[0].V[0][0] = float32(math.Inf(1)) }, // Adam moment: checked on save only
	} {
		tr2, _ := NewTrainer(smallConfig(5), d, nil, scale)
		if _, err := tr2.Resume(path); err != nil {
			t.Fatal(err)
		}
		tr = tr2
		poison()
		if err := tr.Save(path, nil); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Fatalf("non-finite learner saved: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != string(good) {
			t.Fatal("the last good checkpoint was overwritten")
		}
	}
	// The weight and scalar poisons are also caught by CheckFinite after an update.
	tr3, _ := NewTrainer(smallConfig(5), d, nil, scale)
	tr3.Resume(path)
	tr3.Learner.QT[0].Params()[2].Data[1] = float32(math.NaN())
	if err := tr3.Learner.CheckFinite(); err == nil || !strings.Contains(err.Error(), "target.q1") {
		t.Fatalf("NaN target weight: %v", err)
	}
}

// BenchmarkCheckFinite times the per-step weight check (actor, critics,
// targets) for the paper's Hopper-sized learner; compare with
// BenchmarkCQLStep/hopper-paper, the step it follows.
func BenchmarkCheckFinite(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := NewLearner(DefaultConfig(), 11, 3, nil, rng)
	for i := 0; i < b.N; i++ {
		if err := l.CheckFinite(); err != nil {
			b.Fatal(err)
		}
	}
}
