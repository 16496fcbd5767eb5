package ope

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/sac"
	"github.com/koopq/koopq/stats"
)

// constPolicy returns a policy on obsDim inputs whose deterministic action
// is c in every dimension (env bounds [−1, 1]): zero weights, output bias
// atanh(c) on the μ half.
func constPolicy(obsDim, actDim int, c float64) *sac.Policy {
	actor := sac.NewActor(sac.NetConfig{Hidden: []int{4}, Init: "xavier"}, obsDim, actDim, rand.New(rand.NewPCG(1, 2)))
	for _, p := range actor.Params() {
		clear(p.Data)
	}
	last := actor.Layers[len(actor.Layers)-1]
	for j := 0; j < actDim; j++ {
		last.B.Data[j] = float32(math.Atanh(c))
	}
	low, high := make([]float32, actDim), make([]float32, actDim)
	for j := range low {
		low[j], high[j] = -1, 1
	}
	return sac.NewPolicy(actor, dataset.Identity(obsDim), sac.ActionScale{Low: low, High: high})
}

// chain: a 1-d deterministic chain s_{t+1} = s_t + 0.1, ten steps from
// s₀ ~ U(0, 0.05), the tenth ending in a terminal state; reward s + a with
// data actions uniform in [−1, 1] (a behaviour policy unlike the evaluated
// ones).
func chain(episodes int, seed uint64) (*dataset.Dataset, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	d := &dataset.Dataset{ObsDim: 1, ActDim: 1}
	var s0s []float64
	for e := 0; e < episodes; e++ {
		s := 0.05 * rng.Float64()
		s0s = append(s0s, s)
		for t := 0; t < 10; t++ {
			a := 2*rng.Float64() - 1
			next := s + 0.1
			d.Append([]float64{s}, []float64{a}, s+a, []float64{next}, t == 9, false)
			s = next
		}
	}
	return d, s0s
}

// rollout is the reference: the discounted return of the constant action c
// from s₀ on the chain, by simulating it step by step.
func rollout(s0, c, gamma float64) float64 {
	var g, disc float64 = 0, 1
	s := s0
	for t := 0; t < 10; t++ {
		g += disc * (s + c)
		disc *= gamma
		s += 0.1
	}
	return g
}

func TestFQEMatchesRolloutsOnChain(t *testing.T) {
	d, s0s := chain(200, 3)
	cfg := DefaultConfig()
	cfg.Gamma, cfg.Steps, cfg.Hidden, cfg.Tau, cfg.LR, cfg.Bootstrap = 0.9, 4000, []int{32, 32}, 0.05, 1e-3, 500
	var got []float64
	for _, c := range []float64{0.5, -0.5} {
		var want float64
		for _, s0 := range s0s {
			want += rollout(s0, c, cfg.Gamma)
		}
		want /= float64(len(s0s))
		res, err := Evaluate(d, constPolicy(1, 1, c), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Episodes != 200 {
			t.Errorf("episodes %d, want 200", res.Episodes)
		}
		if math.Abs(res.Value-want) > 0.05*math.Abs(want)+0.05 {
			t.Errorf("action %v: FQE value %.4f, rollouts %.4f", c, res.Value, want)
		}
		if !(res.Low <= res.Value && res.Value <= res.High) {
			t.Errorf("interval [%v, %v] does not hold the estimate %v", res.Low, res.High, res.Value)
		}
		t.Logf("action %v: FQE %.4f [%.4f, %.4f], rollouts %.4f, loss %.3g", c, res.Value, res.Low, res.High, want, res.FinalLoss)
		got = append(got, res.Value)
	}
	if !(got[0] > got[1]) {
		t.Errorf("the better policy (a = 0.5) is not ranked above a = −0.5: %v", got)
	}
}

func TestFQESeeded(t *testing.T) {
	d, _ := chain(20, 1)
	cfg := DefaultConfig()
	cfg.Steps, cfg.Hidden, cfg.Batch = 50, []int{8}, 16
	p := constPolicy(1, 1, 0.2)
	a, err := Evaluate(d, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Evaluate(d, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Value != b.Value || a.Low != b.Low {
		t.Errorf("same seed, different results: %v vs %v", a.Value, b.Value)
	}
	cfg.Seed = 9
	c, err := Evaluate(d, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Value == a.Value {
		t.Errorf("a different seed gave the identical value %v", a.Value)
	}
}

func TestFQEBadInputs(t *testing.T) {
	d, _ := chain(5, 1)
	cfg := DefaultConfig()
	cfg.Steps = 10
	for _, tc := range []struct {
		name string
		p    *sac.Policy
		cfg  func(*Config)
		want string
	}{
		{"obs mismatch", constPolicy(3, 1, 0), nil, "observes 3 dimensions, the data has 1"},
		{"act mismatch", constPolicy(1, 2, 0), nil, "acts in 2 dimensions, the data has 1"},
		{"gamma 1", constPolicy(1, 1, 0), func(c *Config) { c.Gamma = 1 }, "gamma"},
		{"no steps", constPolicy(1, 1, 0), func(c *Config) { c.Steps = 0 }, "steps"},
		{"nan lr", constPolicy(1, 1, 0), func(c *Config) { c.LR = math.NaN() }, "learning rate"},
		{"tau 0", constPolicy(1, 1, 0), func(c *Config) { c.Tau = 0 }, "tau"},
		{"no hidden", constPolicy(1, 1, 0), func(c *Config) { c.Hidden = nil }, "hidden"},
		{"level", constPolicy(1, 1, 0), func(c *Config) { c.Level = 1 }, "level"},
	} {
		c := cfg
		if tc.cfg != nil {
			tc.cfg(&c)
		}
		_, err := Evaluate(d, tc.p, c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	bad := *d
	bad.Rewards = append([]float32{float32(math.NaN())}, d.Rewards[1:]...)
	if _, err := Evaluate(&bad, constPolicy(1, 1, 0), cfg); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("NaN reward: error %v", err)
	}
	if _, err := Evaluate(nil, constPolicy(1, 1, 0), cfg); err == nil {
		t.Error("nil dataset: no error")
	}
}

func TestUndiscountedRescaling(t *testing.T) {
	// Constant reward 2 for 1000 steps: V = 2(1−γ¹⁰⁰⁰)/(1−γ); the rescaling
	// gives back 2000.
	g := 0.99
	var v, disc float64 = 0, 1
	for range 1000 {
		v += 2 * disc
		disc *= g
	}
	if u := UndiscountedEstimate(v, g, 1000); math.Abs(u-2000) > 1e-6 {
		t.Errorf("rescaled %v, want 2000", u)
	}
}

// An ensemble of K fits is the mean of the K single fits with seeds
// Seed … Seed+K−1, episode by episode, and reports their spread; a single
// fit has no spread, and the JSON of a result without intervals holds nulls.
func TestFQEEnsembleIsMeanOfSingleFits(t *testing.T) {
	d, _ := chain(30, 2)
	cfg := DefaultConfig()
	cfg.Steps, cfg.Hidden, cfg.Batch, cfg.Seed, cfg.Bootstrap = 60, []int{8}, 16, 5, 0
	p := constPolicy(1, 1, 0.3)
	var singles []*Result
	for i := uint64(0); i < 3; i++ {
		c := cfg
		c.Seed = cfg.Seed + i
		r, err := Evaluate(d, p, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.FitValues) != 1 || r.FitValues[0] != r.Value || !math.IsNaN(r.FitStd) {
			t.Fatalf("single fit: fit values %v, value %v, fit std %v", r.FitValues, r.Value, r.FitStd)
		}
		singles = append(singles, r)
	}
	cfg.Fits = 3
	ens, err := Evaluate(d, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for i, s := range singles {
		if ens.FitValues[i] != s.Value {
			t.Errorf("fit %d: %v, single fit with seed %d: %v", i, ens.FitValues[i], cfg.Seed+uint64(i), s.Value)
		}
		want += s.Value / 3
	}
	if math.Abs(ens.Value-want) > 1e-9*math.Abs(want) {
		t.Errorf("ensemble value %v, mean of single fits %v", ens.Value, want)
	}
	for j := range ens.Initial {
		m := (singles[0].Initial[j] + singles[1].Initial[j] + singles[2].Initial[j]) / 3
		if math.Abs(ens.Initial[j]-m) > 1e-9*(1+math.Abs(m)) {
			t.Fatalf("episode %d: ensemble %v, mean of fits %v", j, ens.Initial[j], m)
		}
	}
	sd := stats.Std(ens.FitValues)
	h := 4.302652729911275 * sd / math.Sqrt(3) // t(2) 0.975 quantile
	if math.Abs(ens.FitStd-sd) > 1e-12 || math.Abs(ens.FitLow-(want-h)) > 1e-9 || math.Abs(ens.FitHigh-(want+h)) > 1e-9 || sd == 0 {
		t.Errorf("fit spread sd %v [%v, %v], want sd %v [%v, %v]", ens.FitStd, ens.FitLow, ens.FitHigh, sd, want-h, want+h)
	}
	b, err := json.Marshal(singles[0])
	if err != nil || !strings.Contains(string(b), `"low":null`) || !strings.Contains(string(b), `"fit_std":null`) {
		t.Errorf("JSON of a result without intervals: %s (err %v)", b, err)
	}
	cfg.Fits = -1
	if _, err := Evaluate(d, p, cfg); err == nil {
		t.Error("fits -1 accepted")
	}
}
