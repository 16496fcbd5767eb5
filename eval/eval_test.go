package eval

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/env"
	_ "github.com/koopq/koopq/env/classic"
)

// constPolicy always applies the same torque.
type constPolicy struct{ u float64 }

func (p constPolicy) Act(_ []float64, act []float64) { act[0] = p.u }

func TestEvaluateIndependentOfWorkers(t *testing.T) {
	newP := func() Policy { return constPolicy{0.5} }
	a, err := Evaluate("pendulum", newP, 7, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Evaluate("pendulum", newP, 7, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Returns {
		if a.Returns[i] != b.Returns[i] || a.Lengths[i] != 200 {
			t.Fatalf("episode %d: %v (1 worker) vs %v (3 workers), length %d", i, a.Returns[i], b.Returns[i], a.Lengths[i])
		}
	}
	// Normalized score follows the reference formula.
	ref := References["pendulum"]
	if want := 100 * (a.Mean - ref.Random) / (ref.Expert - ref.Random); math.Abs(float64(a.Normalized)-want) > 1e-9 {
		t.Fatalf("normalized %v, want %v", a.Normalized, want)
	}
	if _, err := Evaluate("no-such-env", newP, 2, 0, 1); err == nil {
		t.Fatal("unknown env accepted")
	}
	if _, err := Evaluate("pendulum", newP, 0, 0, 1); err == nil {
		t.Fatal("zero episodes accepted")
	}
}

func TestRandomPolicyWithinBounds(t *testing.T) {
	e, _ := env.Make("pendulum")
	p := &RandomPolicy{Space: e.ActionSpace(), Rng: rand.New(rand.NewPCG(1, 1))}
	act := make([]float64, 1)
	lo, hi := 0.0, 0.0
	for i := 0; i < 2000; i++ {
		p.Act(nil, act)
		if act[0] < -2 || act[0] > 2 {
			t.Fatalf("action %v outside [-2, 2]", act[0])
		}
		lo, hi = math.Min(lo, act[0]), math.Max(hi, act[0])
	}
	if lo > -1.9 || hi < 1.9 {
		t.Fatalf("random actions do not cover the range: [%v, %v]", lo, hi)
	}
}

func TestMeanStdAndScoreJSON(t *testing.T) {
	m, s := MeanStd([]float64{1, 2, 3, 4})
	if m != 2.5 || math.Abs(s-math.Sqrt(1.25)) > 1e-12 {
		t.Fatalf("mean %v std %v", m, s)
	}
	b, err := json.Marshal(struct{ A, B Score }{Score(math.NaN()), 1.5})
	if err != nil || string(b) != `{"A":null,"B":1.5}` {
		t.Fatalf("%s %v", b, err)
	}
	var back struct{ A, B Score }
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(float64(back.A)) || back.B != 1.5 {
		t.Fatalf("round trip %+v %v", back, err)
	}
}

func TestReferenceFor(t *testing.T) {
	for id, want := range map[string]string{
		"hopper": "hopper", "hopper-medium-v2": "hopper", "Hopper-v3": "hopper",
		"mujoco/halfcheetah/medium-v0": "halfcheetah", "walker2d_medium_replay": "walker2d",
		"pendulum-medium": "pendulum", "cartpole": "", "": "", "humanoid-medium-v2": "",
	} {
		name, ref, ok := ReferenceFor(id)
		if name != want || ok != (want != "") {
			t.Errorf("ReferenceFor(%q) = %q, %v; want %q", id, name, ok, want)
		}
		if ok && ref != References[want] {
			t.Errorf("ReferenceFor(%q) returned %+v, want %+v", id, ref, References[want])
		}
	}
}
