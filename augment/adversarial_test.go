package augment_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
)

// NewAdversarial accepts ε = 0 (no shift) and the empty mode (l2), and
// rejects negative or non-finite ε and unknown modes, naming them.
func TestNewAdversarialEdges(t *testing.T) {
	a, err := augment.NewAdversarial(augment.Options{Params: augment.Params{AdvEps: 0}})
	if err != nil || a.Mode != "l2" || a.Eps != 0 {
		t.Fatalf("ε = 0, mode \"\": %+v, %v; want l2 with ε 0", a, err)
	}
	for _, eps := range []float64{-1e-9, math.NaN(), math.Inf(1)} {
		if _, err := augment.NewAdversarial(augment.Options{Params: augment.Params{AdvEps: eps, AdvMode: "sign"}}); err == nil || !strings.Contains(err.Error(), "eps") {
			t.Errorf("ε = %v: error %v, want one naming eps", eps, err)
		}
	}
	if _, err := augment.NewAdversarial(augment.Options{Params: augment.Params{AdvEps: 1e-4, AdvMode: "fgsm"}}); err == nil || !strings.Contains(err.Error(), "fgsm") {
		t.Errorf("mode fgsm: error %v, want one naming it", err)
	}
}

// S4RL-Adv hands the critic's gradient callback exactly the batch's states
// and dataset actions ([B, S] and [B, A], B rows), and keeps working when a
// later batch is larger than the first (its gradient buffer grows).
func TestAdversarialGradientCall(t *testing.T) {
	a, err := augment.NewAdversarial(augment.Options{Params: augment.Params{AdvEps: 0.5, AdvMode: "raw"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, B := range []int{3, 5} {
		const S, A = 2, 2
		b := dataset.NewBatch(B, S, A)
		for i := range b.Obs {
			b.Obs[i], b.NextObs[i] = float32(i), float32(-i)
		}
		for i := range b.Act {
			b.Act[i] = float32(i) / 10
		}
		calls := 0
		q := func(s, act []float32, rows int, g []float32) {
			calls++
			if rows != B || !slices.Equal(s, b.Obs) || !slices.Equal(act, b.Act) || len(g) != B*S {
				t.Fatalf("QGradient got rows %d, %d states, %d actions, %d gradient slots; want %d, %v, %v, %d",
					rows, len(s), len(act), len(g), B, b.Obs, b.Act, B*S)
			}
			for i := range g {
				g[i] = 1
			}
		}
		obs, next := make([]float32, B*S), make([]float32, B*S)
		if err := a.Augment(b, obs, next, nil, q); err != nil {
			t.Fatal(err)
		}
		for i := range obs {
			if obs[i] != b.Obs[i]+0.5 || next[i] != b.NextObs[i] {
				t.Fatalf("B=%d row value %d: s̃ %v, s̃' %v; want %v, %v", B, i, obs[i], next[i], b.Obs[i]+0.5, b.NextObs[i])
			}
		}
		if calls != 1 {
			t.Fatalf("QGradient called %d times for one batch", calls)
		}
	}
}

// In l2 mode a state whose Q-gradient is zero stays where it is (no
// division by the zero norm), while the other rows move by exactly ε.
func TestAdversarialZeroGradientRow(t *testing.T) {
	a, err := augment.NewAdversarial(augment.Options{Params: augment.Params{AdvEps: 0.5, AdvMode: "l2"}})
	if err != nil {
		t.Fatal(err)
	}
	b := dataset.NewBatch(2, 2, 1)
	copy(b.Obs, []float32{1, 2, 3, 4})
	q := func(_, _ []float32, _ int, g []float32) { copy(g, []float32{0, 0, 3, 4}) }
	obs, next := make([]float32, 4), make([]float32, 4)
	if err := a.Augment(b, obs, next, nil, q); err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 3.3, 4.4}
	for i := range want {
		if !(math.Abs(float64(obs[i]-want[i])) <= 1e-6) { // also fails on NaN
			t.Fatalf("s̃ = %v, want %v", obs, want)
		}
	}
}
