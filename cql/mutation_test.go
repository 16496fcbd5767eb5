package cql

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/koopq/koopq/dataset"
)

// The scalar Adam (α, α′) adds ε = 1e-8 to √v̂ as PyTorch's Adam does: a
// gradient far below ε moves the parameter by lr·g/(|g| + ε), a small
// step in the gradient's descent direction (a sign slip in ε flips it).
func TestScalarAdamEpsilon(t *testing.T) {
	var s scalarAdam
	x := 0.0
	s.step(&x, 1e-10, 1)
	want := -1e-10 / (1e-10 + 1e-8)
	if math.Abs(x-want) > 1e-12 {
		t.Fatalf("x after one step with g = 1e-10: %v, want %v", x, want)
	}
}

// A checkpoint restores the learner's state normalizer: a learner built
// with another normalizer reads back the saved mean and std.
func TestCheckpointRestoresNormalizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 1, 200, rng)
	norm := dataset.FitNormalizer(d, 1e-3)
	cfg := smallConfig(1)
	a := NewLearner(cfg, 3, 1, norm, rand.New(rand.NewPCG(1, 2)))
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	if err := a.SaveCheckpoint(path, rand.NewPCG(3, 3), nil); err != nil {
		t.Fatal(err)
	}
	b := NewLearner(cfg, 3, 1, nil, rand.New(rand.NewPCG(1, 2)))
	if _, err := b.LoadCheckpoint(path, rand.NewPCG(3, 3)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Norm.Mean, norm.Mean) || !slices.Equal(b.Norm.Std, norm.Std) {
		t.Fatalf("restored normalizer %+v, want %+v", b.Norm, norm)
	}
}
