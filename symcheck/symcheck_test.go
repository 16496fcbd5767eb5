package symcheck

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/learntest"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/stats"
)

func tinyKoopman(t *testing.T, d *dataset.Dataset) *koopman.Model {
	t.Helper()
	tc := koopman.DefaultTrainConfig()
	tc.MaxEpochs, tc.Batch, tc.Patience, tc.Seed, tc.LR = 25, 64, 0, 3, 1e-3
	m, err := run.TrainKoopman(context.Background(), d, tc, []int{32, 32}, 6, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func finiteStats(t *testing.T, what string, s Stats) {
	t.Helper()
	for _, v := range []float64{s.Mean, s.Std, s.Median, s.P10, s.P90, s.Max} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("%s: statistic %v is not a finite non-negative number (%+v)", what, v, s)
		}
	}
}

// The study runs end to end on Pendulum: random shifts get the KFC++ mean ΔS
// to 1e-6, the simulator reproduces the unshifted data, all numbers are
// finite, and the JSON, CSV, PNG and summary are written.
func TestSymcheckPendulum(t *testing.T) {
	d := learntest.PendulumT(t, 1500, 1)
	m := tinyKoopman(t, d)
	cfg := DefaultConfig("pendulum")
	cfg.N, cfg.Seed, cfg.ShiftSigma = 400, 7, 10
	r, err := Run(context.Background(), m, d, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != 400 || len(r.Variants) != 5 {
		t.Fatalf("samples %d, variants %d", r.Samples, len(r.Variants))
	}
	sym := r.Variant("kfc++")
	if sym.DeltaS.Mean <= 0 {
		t.Fatalf("kfc++ mean ΔS %v", sym.DeltaS.Mean)
	}
	for _, name := range []string{"random-shared", "random-independent"} {
		v := r.Variant(name)
		if rel := math.Abs(v.DeltaS.Mean-sym.DeltaS.Mean) / sym.DeltaS.Mean; !(rel <= 1e-6) {
			t.Errorf("%s: mean ΔS %.9g, kfc++ %.9g (relative %.2g)", name, v.DeltaS.Mean, sym.DeltaS.Mean, rel)
		}
		if !(v.LatentScale > 0) {
			t.Errorf("%s: λ = %v", name, v.LatentScale)
		}
	}
	if !r.Matched {
		t.Errorf("Matched false: %v", r.MatchRelErr)
	}
	for _, v := range r.Variants {
		if v.Failures != 0 || v.DeltaE.Count != r.Samples {
			t.Errorf("%s: %d failures, %d values", v.Name, v.Failures, v.DeltaE.Count)
		}
		for what, s := range map[string]Stats{"ΔS": v.DeltaS, "ΔE_pos": v.DeltaEPos, "ΔE_vel": v.DeltaEVel, "ΔE": v.DeltaE, "Δg": v.LatentShift} {
			finiteStats(t, v.Name+" "+what, s)
		}
	}
	// The simulator reproduces the logged transitions (float32 rounding only).
	if e := r.Variant("data").DeltaE.Max; e > 1e-5 {
		t.Errorf("data: max ΔE %g, the simulator does not reproduce the dataset", e)
	}
	if s := r.Variant("data").DeltaS.Max; s != 0 {
		t.Errorf("data: ΔS %g, want 0", s)
	}
	// The shifted variants differ from the unshifted reconstruction.
	if recon := r.Variant("reconstruction"); recon.DeltaS.Mean == sym.DeltaS.Mean {
		t.Errorf("kfc++ ΔS equals the reconstruction's: the shift did nothing")
	}

	dir, err := run.NewDir(t.TempDir(), "symcheck")
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(r, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{JSONFile, CSVFile, PNGFile, SummaryFile} {
		st, err := os.Stat(dir.File(f))
		if err != nil || st.Size() == 0 {
			t.Fatalf("%s not written: %v", f, err)
		}
	}
	png, _ := os.ReadFile(dir.File(PNGFile))
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Error("symcheck.png is not a PNG")
	}
	var back Result
	raw, _ := os.ReadFile(dir.File(JSONFile))
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Variants) != 5 || back.Variant("kfc++").DeltaS.Mean != sym.DeltaS.Mean || back.Provenance.GoVersion == "" {
		t.Errorf("JSON round trip lost numbers or provenance")
	}
	if tab := Table(r); !strings.Contains(tab, "random-independent") || !strings.Contains(tab, "kfc++") {
		t.Errorf("table:\n%s", tab)
	}
	t.Logf("\n%s", Table(r))

	// Paired comparisons: their point values are the variants' own statistics.
	if len(r.Comparisons) != 2 {
		t.Fatalf("%d comparisons", len(r.Comparisons))
	}
	for _, c := range r.Comparisons {
		o := r.Variant(c.Against)
		if !c.Defined || c.Pairs != r.Samples {
			t.Errorf("%s: defined %v, %d pairs", c.Against, c.Defined, c.Pairs)
		}
		if want := sym.DeltaE.Mean / o.DeltaE.Mean; math.Abs(c.MeanRatio.Value-want) > 1e-12*want {
			t.Errorf("%s: mean ratio %v, variants give %v", c.Against, c.MeanRatio.Value, want)
		}
		if want := sym.DeltaE.Median / o.DeltaE.Median; math.Abs(c.MedianRatio.Value-want) > 1e-12*want {
			t.Errorf("%s: median ratio %v, variants give %v", c.Against, c.MedianRatio.Value, want)
		}
		for what, ci := range map[string]stats.CI{"mean": c.MeanRatio, "median": c.MedianRatio, "closer": c.Closer} {
			if !(ci.Lo <= ci.Value && ci.Value <= ci.Hi && ci.Lo < ci.Hi) {
				t.Errorf("%s %s: interval %+v", c.Against, what, ci)
			}
		}
	}
	if tab := Table(r); !strings.Contains(tab, "kfc++ vs random-shared, 400 paired transitions") {
		t.Errorf("table lacks the comparison:\n%s", tab)
	}
	if back.Comparisons[0] != r.Comparisons[0] {
		t.Errorf("JSON round trip changed a comparison: %+v vs %+v", back.Comparisons[0], r.Comparisons[0])
	}

	// Same seed, same numbers.
	r2, err := Run(context.Background(), m, d, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Variant("random-shared").DeltaE.Mean != r.Variant("random-shared").DeltaE.Mean {
		t.Error("not deterministic for a fixed seed")
	}
	if r2.Comparisons[1] != r.Comparisons[1] {
		t.Errorf("comparison not deterministic: %+v vs %+v", r2.Comparisons[1], r.Comparisons[1])
	}
}

// Mismatched dimensions, unknown envs and envs without
// SetStateFromObservation are errors, not panics.
func TestSymcheckErrors(t *testing.T) {
	d := learntest.PendulumT(t, 200, 1)
	mc := koopman.DefaultModelConfig(3, 1)
	mc.Hidden, mc.Latent = []int{8}, 4
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("pendulum")
	cfg.N = 10
	for _, tc := range []struct {
		env  string
		want string
	}{
		{"nosuchenv", "no position/velocity split"},
		{"hopper", "11-dimensional"},
	} {
		c := cfg
		c.Env = tc.env
		if _, err := Run(context.Background(), m, d, c, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %s: error %v, want %q", tc.env, err, tc.want)
		}
	}
	mc2 := mc
	mc2.ObsDim = 4
	m2, _ := koopman.NewModel(mc2)
	if _, err := Run(context.Background(), m2, d, cfg, nil); err == nil || !strings.Contains(err.Error(), "model is for states 4") {
		t.Errorf("model/dataset mismatch: %v", err)
	}
	bad := *d
	bad.ObsDim, bad.Observations, bad.NextObservations = 2, bad.Observations[:400], bad.NextObservations[:400]
	if _, err := Run(context.Background(), m, &bad, cfg, nil); err == nil {
		t.Error("dataset/model mismatch accepted")
	}
}

// hopperTransitions rolls the real Hopper with uniform random actions.
func hopperTransitions(t *testing.T, n int, seed uint64) *dataset.Dataset {
	t.Helper()
	e, err := env.Make("hopper")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	S, A := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	d := &dataset.Dataset{ObsDim: S, ActDim: A}
	obs := e.Reset(rng)
	act := make([]float64, A)
	for len(d.Rewards) < n {
		for j := range act {
			act[j] = 2*rng.Float64() - 1
		}
		next, r, term, trunc, err := e.Step(act)
		if err != nil {
			t.Fatal(err)
		}
		for j := range S {
			d.Observations = append(d.Observations, float32(obs[j]))
			d.NextObservations = append(d.NextObservations, float32(next[j]))
		}
		for _, a := range act {
			d.Actions = append(d.Actions, float32(a))
		}
		d.Rewards = append(d.Rewards, float32(r))
		d.Terminals = append(d.Terminals, map[bool]float32{true: 1, false: 0}[term])
		d.Timeouts = append(d.Timeouts, 0)
		obs = next
		if term || trunc {
			obs = e.Reset(rng)
		}
	}
	return d
}

// The study runs on MuJoCo Hopper (state set from an observation, x = 0):
// the simulator replays the logged transitions (median ΔE at float32
// rounding; a few stiff contact steps may differ), every variant simulates
// without failures, and the random shifts match the KFC++ mean ΔS.
func TestSymcheckHopper(t *testing.T) {
	d := hopperTransitions(t, 1200, 2)
	m := tinyKoopman(t, d)
	cfg := DefaultConfig("hopper")
	cfg.N, cfg.Seed = 300, 4
	r, err := Run(context.Background(), m, d, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := r.Variant("data").DeltaE.Median; e > 1e-5 {
		t.Errorf("data: median ΔE %g, the simulator does not reproduce the dataset", e)
	}
	sym := r.Variant("kfc++")
	if !(sym.DeltaS.Mean > 0) {
		t.Fatalf("kfc++ mean ΔS %v", sym.DeltaS.Mean)
	}
	for _, v := range r.Variants {
		if v.Failures != 0 || v.DeltaE.Count != r.Samples {
			t.Errorf("%s: %d failures, %d values", v.Name, v.Failures, v.DeltaE.Count)
		}
		finiteStats(t, v.Name+" ΔE", v.DeltaE)
	}
	for _, name := range []string{"random-shared", "random-independent"} {
		if rel := math.Abs(r.Variant(name).DeltaS.Mean-sym.DeltaS.Mean) / sym.DeltaS.Mean; !(rel <= 1e-6) {
			t.Errorf("%s: mean ΔS off by %.2g relative to kfc++", name, rel)
		}
	}
	t.Logf("\n%s", Table(r))
}

func TestCompareShifts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	o := make([]float64, 300)
	k := make([]float64, 300)
	for i := range o {
		o[i] = 0.1 + rng.Float64()
		k[i] = 0.5 * o[i]
	}
	k[7], o[9] = math.NaN(), math.Inf(1) // failed in the simulator: left out
	c := compareShifts("x", k, o, 500, rng)
	if !c.Defined || c.Pairs != 298 {
		t.Fatalf("defined %v, pairs %d", c.Defined, c.Pairs)
	}
	// KFC++ exactly half of the other everywhere: every resample agrees.
	for what, ci := range map[string]stats.CI{"mean": c.MeanRatio, "median": c.MedianRatio} {
		if math.Abs(ci.Value-0.5) > 1e-15 || math.Abs(ci.Lo-0.5) > 1e-15 || math.Abs(ci.Hi-0.5) > 1e-15 {
			t.Errorf("%s ratio %+v, want 0.5 exactly", what, ci)
		}
	}
	if c.Closer != (stats.CI{Value: 1, Lo: 1, Hi: 1}) {
		t.Errorf("closer %+v", c.Closer)
	}
	// Swapping the sides inverts the point values.
	for i := range k {
		k[i] = o[i] * (0.5 + rng.Float64())
	}
	a, b := compareShifts("x", k, o, 200, rand.New(rand.NewPCG(3, 4))), compareShifts("x", o, k, 200, rand.New(rand.NewPCG(3, 4)))
	if math.Abs(a.MeanRatio.Value*b.MeanRatio.Value-1) > 1e-12 || math.Abs(a.Closer.Value+b.Closer.Value-1) > 1e-12 {
		t.Errorf("swap: %+v / %+v", a, b)
	}
	if !(a.MeanRatio.Lo < a.MeanRatio.Value && a.MeanRatio.Value < a.MeanRatio.Hi) {
		t.Errorf("interval %+v", a.MeanRatio)
	}
	// No usable pair, or a zero median on the other side: undefined, not NaN.
	for _, c := range []Comparison{
		compareShifts("x", []float64{math.NaN()}, []float64{1}, 10, rng),
		compareShifts("x", []float64{1, 2, 3}, []float64{0, 0, 1}, 10, rng),
	} {
		if c.Defined || c.MeanRatio != (stats.CI{}) {
			t.Errorf("undefined comparison %+v", c)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Error(err)
		}
	}
}
