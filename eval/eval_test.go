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
	// The normalized std is the same scaling without the offset.
	if want := 100 * a.Std / (ref.Expert - ref.Random); a.Std == 0 || math.Abs(float64(a.NormalizedStd)-want) > 1e-9 {
		t.Fatalf("normalized std %v, want %v (std %v)", a.NormalizedStd, want, a.Std)
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
	// Population std about a mean far from 0: (1, 2, 3, 6) has mean 3 and
	// squared deviations 4, 1, 0, 9, so std √(14/4).
	if m, s := MeanStd([]float64{1, 2, 3, 6}); m != 3 || math.Abs(s-math.Sqrt(3.5)) > 1e-12 {
		t.Fatalf("(1, 2, 3, 6): mean %v std %v, want 3 and √3.5", m, s)
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

// coinGoalEnv is a goal-reaching test env named like an AntMaze env: an
// episode whose reset draws u < 0.5 reaches the goal on its first step
// (reward 1, terminated); the others time out after 3 steps with return 0.
type coinGoalEnv struct {
	lucky bool
	steps int
}

func (e *coinGoalEnv) Name() string { return "antmaze-coin-v0" }
func (e *coinGoalEnv) ObservationSpace() env.Space {
	return env.Space{Low: []float64{0}, High: []float64{1}}
}
func (e *coinGoalEnv) ActionSpace() env.Space {
	return env.Space{Low: []float64{-1}, High: []float64{1}}
}
func (e *coinGoalEnv) MaxEpisodeSteps() int           { return 3 }
func (e *coinGoalEnv) State() []float64               { return nil }
func (e *coinGoalEnv) SetState(state []float64) error { return nil }
func (e *coinGoalEnv) Reset(rng *rand.Rand) []float64 {
	e.lucky, e.steps = rng.Float64() < 0.5, 0
	return []float64{0}
}
func (e *coinGoalEnv) Step(action []float64) ([]float64, float64, bool, bool, error) {
	e.steps++
	if e.lucky {
		return []float64{1}, 1, true, false, nil
	}
	return []float64{0}, 0, false, e.steps >= 3, nil
}

// Goal-reaching envs (AntMaze names) report the success rate and D4RL's
// normalization 100·return; other envs report no success rate.
func TestSuccessRate(t *testing.T) {
	env.Register("antmaze-coin-v0", func() (env.Env, error) { return &coinGoalEnv{}, nil })
	const episodes, seed = 41, 9
	res, err := Evaluate("antmaze-coin-v0", func() Policy { return constPolicy{0} }, episodes, seed, 2)
	if err != nil {
		t.Fatal(err)
	}
	lucky := 0
	for k := range episodes {
		if rand.New(rand.NewPCG(seed, uint64(k))).Float64() < 0.5 {
			lucky++
		}
	}
	if want := float64(lucky) / episodes; float64(res.SuccessRate) != want || lucky == 0 || lucky == episodes {
		t.Fatalf("success rate %v, want %v", res.SuccessRate, want)
	}
	if math.Abs(float64(res.Normalized)-100*res.Mean) > 1e-12 {
		t.Fatalf("normalized %v, want 100 × mean return %v", res.Normalized, res.Mean)
	}
	if name, _, _ := ReferenceFor("antmaze-medium-diverse-v2"); name != "antmaze" {
		t.Fatalf("ReferenceFor(antmaze-medium-diverse-v2) = %q", name)
	}
	p, err := Evaluate("pendulum", func() Policy { return constPolicy{0} }, 2, 0, 1)
	if err != nil || !math.IsNaN(float64(p.SuccessRate)) {
		t.Fatalf("pendulum success rate %v (err %v), want NaN", p.SuccessRate, err)
	}
}

// rampEnv pays reward t+1 on its (t+1)-th step and times out after 4
// steps, so an episode's discounted return is Σ_{t<4} γᵗ (t+1).
type rampEnv struct{ steps int }

func (e *rampEnv) Name() string { return "ramp-v0" }
func (e *rampEnv) ObservationSpace() env.Space {
	return env.Space{Low: []float64{0}, High: []float64{4}}
}
func (e *rampEnv) ActionSpace() env.Space {
	return env.Space{Low: []float64{-1}, High: []float64{1}}
}
func (e *rampEnv) MaxEpisodeSteps() int       { return 4 }
func (e *rampEnv) State() []float64           { return nil }
func (e *rampEnv) SetState([]float64) error   { return nil }
func (e *rampEnv) Reset(*rand.Rand) []float64 { e.steps = 0; return []float64{0} }
func (e *rampEnv) Step([]float64) ([]float64, float64, bool, bool, error) {
	e.steps++
	return []float64{float64(e.steps)}, float64(e.steps), false, e.steps >= 4, nil
}

// EvaluateDiscounted records Σₜ γᵗ rₜ per episode, starting at γ⁰ on the
// first reward, leaves the undiscounted results as Evaluate gives them,
// and refuses a discount outside [0, 1).
func TestEvaluateDiscounted(t *testing.T) {
	env.Register("ramp-v0", func() (env.Env, error) { return &rampEnv{}, nil })
	newP := func() Policy { return constPolicy{0} }
	const gamma = 0.9
	res, err := EvaluateDiscounted("ramp-v0", newP, 3, 0, 2, gamma)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + 2*0.9 + 3*0.81 + 4*0.729
	if res.Gamma != gamma || len(res.DiscountedReturns) != 3 || math.Abs(res.DiscountedMean-want) > 1e-12 {
		t.Fatalf("gamma %v, discounted %v (mean %v), want %v each", res.Gamma, res.DiscountedReturns, res.DiscountedMean, want)
	}
	for _, d := range res.DiscountedReturns {
		if math.Abs(d-want) > 1e-12 {
			t.Fatalf("discounted return %v, want %v", d, want)
		}
	}
	plain, err := Evaluate("ramp-v0", newP, 3, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Mean != 10 || res.Mean != 10 || plain.DiscountedReturns != nil || plain.Gamma != 0 {
		t.Fatalf("undiscounted mean %v / %v, want 10; Evaluate's discounted %v", plain.Mean, res.Mean, plain.DiscountedReturns)
	}
	for _, g := range []float64{-0.1, 1, math.NaN()} {
		if _, err := EvaluateDiscounted("ramp-v0", newP, 1, 0, 1, g); err == nil {
			t.Errorf("discount %v accepted", g)
		}
	}
}

// CheckEpisodes refuses a count whose per-episode results (16 bytes each)
// cannot be held, and accepts an ordinary one.
func TestCheckEpisodes(t *testing.T) {
	if err := CheckEpisodes(1000); err != nil {
		t.Errorf("1000 episodes: %v", err)
	}
	if err := CheckEpisodes(1 << 60); err == nil {
		t.Error("2⁶⁰ episodes (16 EiB of results) accepted")
	}
}

// References holds D4RL v2's REF_MIN_SCORE / REF_MAX_SCORE for the MuJoCo
// tasks (d4rl/infos.py), which every normalized score depends on.
func TestD4RLReferenceValues(t *testing.T) {
	for name, want := range map[string][2]float64{
		"hopper": {-20.272305, 3234.3}, "halfcheetah": {-280.178953, 12135.0},
		"walker2d": {1.629008, 4592.3}, "ant": {-325.6, 3879.7},
	} {
		if r := References[name]; r.Random != want[0] || r.Expert != want[1] {
			t.Errorf("%s: random %v expert %v, want D4RL's %v, %v", name, r.Random, r.Expert, want[0], want[1])
		}
	}
}

// An env without a success test records none: its result's JSON is what
// it was before koopq recorded successes.
func TestNoSuccessesWithoutSuccessTest(t *testing.T) {
	res, err := Evaluate("pendulum", func() Policy { return constPolicy{0.5} }, 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Successes != nil || !math.IsNaN(float64(res.SuccessRate)) {
		t.Fatalf("pendulum: successes %v, success rate %v; want none", res.Successes, res.SuccessRate)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys["successes"]; ok {
		t.Errorf("pendulum result has a successes key: %s", b)
	}
	if string(keys["success_rate"]) != "null" {
		t.Errorf("pendulum success_rate %s, want null", keys["success_rate"])
	}
}
