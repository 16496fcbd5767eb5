package augment_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	_ "github.com/koopq/koopq/env/classic"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/learntest"
)

var (
	fixOnce  sync.Once
	fixData  *dataset.Dataset
	fixModel *koopman.Model
	fixErr   error
)

// fixture collects a 10000-row Pendulum dataset from a uniformly random
// policy (learntest.Rollouts, seed 3) and trains a small Koopman model on it
// (hidden 64×64, N = 8), once per test binary. It serves the fast tests,
// which check numerics, not learning, so no SAC run is needed to make it
// (the learning test uses cartpoleFixture).
func fixture(t *testing.T) (*dataset.Dataset, *koopman.Model) {
	t.Helper()
	fixOnce.Do(func() {
		start := time.Now()
		random := func(_ []float64, rng *rand.Rand, a []float64) { a[0] = 4*rng.Float64() - 2 }
		fixData, _, fixErr = learntest.Rollouts("pendulum", random, 10000, 3)
		if fixErr != nil {
			return
		}
		mc := koopman.DefaultModelConfig(3, 1)
		mc.Hidden, mc.Latent, mc.Seed = []int{64, 64}, 8, 1
		fixModel, fixErr = koopman.NewModel(mc)
		if fixErr != nil {
			return
		}
		tc := koopman.DefaultTrainConfig()
		tc.MaxEpochs, tc.Batch, tc.LR, tc.Seed = 25, 64, 1e-3, 2
		var res *koopman.TrainResult
		res, fixErr = koopman.Train(context.Background(), fixModel, fixData.Observations, fixData.Actions, fixData.NextObservations, tc, nil)
		if fixErr != nil {
			return
		}
		dc := koopman.DefaultDiagConfig()
		diag, err := fixModel.Diagnose(fixData.Observations, fixData.Actions, fixData.NextObservations, dc)
		if err != nil {
			fixErr = err
			return
		}
		t.Logf("fixture model: %d epochs (%s); recon %.3g, forward %.3g (s'=s: %.3g), shift %.3g, fallbacks %d",
			len(res.Epochs), res.Stopped, diag.ReconL2, diag.ForwardL2, diag.BaselineL2, diag.ShiftL2.Mean, diag.Fallbacks)
		t.Logf("fixture: %d transitions; built in %.1fs", fixData.Len(), time.Since(start).Seconds())
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixData, fixModel
}

// smallModel is an untrained Koopman model for S-D states and A-D actions
// with one hidden layer of width hidden, latent size N and weight seed.
func smallModel(t *testing.T, S, A, hidden, N int, seed uint64) *koopman.Model {
	t.Helper()
	mc := koopman.DefaultModelConfig(S, A)
	mc.Hidden, mc.Latent, mc.Seed = []int{hidden}, N, seed
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func opts(d *dataset.Dataset, m *koopman.Model) augment.Options {
	o := augment.DefaultOptions()
	o.Dataset, o.Model, o.Env = d, m, "pendulum"
	return o
}

// batchOf fills a batch with dataset rows idx.
func batchOf(d *dataset.Dataset, idx []int) *dataset.Batch {
	b := dataset.NewBatch(len(idx), d.ObsDim, d.ActDim)
	S, A := d.ObsDim, d.ActDim
	for i, j := range idx {
		b.Idx[i] = j
		copy(b.Obs[i*S:(i+1)*S], d.Observations[j*S:(j+1)*S])
		copy(b.NextObs[i*S:(i+1)*S], d.NextObservations[j*S:(j+1)*S])
		copy(b.Act[i*A:(i+1)*A], d.Actions[j*A:(j+1)*A])
	}
	return b
}

// maxDiff is max |a − b|, or +Inf when any difference is NaN (math.Max
// would otherwise let a NaN through a "≤ tol" check).
func maxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		d := math.Abs(float64(a[i] - b[i]))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = math.Max(m, d)
	}
	return m
}

// With ε = 0 (ShiftSigma 0) and p_K = 1, every shift mode returns D(E(s))
// for s_t and s_{t+1}, or s itself with residual decoding.
func TestZeroShiftIsReconstruction(t *testing.T) {
	d, m := fixture(t)
	idx := []int{0, 5, 17, 99, 400, 1234}
	b := batchOf(d, idx)
	recT := m.Reconstruct(b.Obs, len(idx))
	recN := m.Reconstruct(b.NextObs, len(idx))
	for _, name := range []string{"kfc", "kfc++", "vae-noise"} {
		for _, residual := range []bool{false, true} {
			o := opts(d, m)
			o.KoopmanProb, o.ShiftSigma, o.LatentSigma, o.Residual = 1, 0, 0, residual
			a, err := augment.New(name, o)
			if err != nil {
				t.Fatal(err)
			}
			obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
			if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatal(err)
			}
			wantT, wantN := recT, recN
			if residual {
				wantT, wantN = b.Obs, b.NextObs
			}
			if e := math.Max(maxDiff(obs, wantT), maxDiff(next, wantN)); e > 1e-5 {
				t.Errorf("%s residual=%v: ε=0 shift differs from the reference by %.3g", name, residual, e)
			}
		}
	}
}

// The cached fast path agrees with the per-batch Shifter path (cache
// disabled) for the same rng, and both are deterministic.
func TestCachedPathMatchesShifter(t *testing.T) {
	d, m := fixture(t)
	rng := rand.New(rand.NewPCG(4, 4))
	idx := make([]int, 64)
	for i := range idx {
		idx[i] = rng.IntN(d.Len())
	}
	b := batchOf(d, idx)
	for _, name := range []string{"kfc++", "kfc", "kfc++-prediction", "kfc++-latent-prediction"} {
		run := func(cache int64) ([]float32, []float32, *augment.Koopman) {
			o := opts(d, m)
			o.KoopmanProb, o.ShiftSigma, o.CacheGiB = 1, 30, gib(cache) // large ε so the shift is visible
			a, err := augment.NewKoopman(name, o)
			if err != nil {
				t.Fatal(err)
			}
			obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
			if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(9, 9)), nil); err != nil {
				t.Fatal(err)
			}
			return obs, next, a
		}
		fo, fn, fast := run(augment.GiB)
		so, sn, slow := run(0)
		// Half the rows cached: the mixed path.
		mo, mn, mixed := run(int64(d.Len()/2) * int64(fast.Precompute().BytesPerTransition))
		fo2, fn2, _ := run(augment.GiB)
		if fast.Stats().SlowRows != 0 || slow.Stats().CachedRows != 0 || mixed.Stats().SlowRows == 0 || mixed.Stats().CachedRows == 0 {
			t.Fatalf("%s: paths not exercised: fast %+v slow %+v mixed %+v", name, fast.Stats(), slow.Stats(), mixed.Stats())
		}
		shift := maxDiff(fo, m.Reconstruct(b.Obs, len(idx)))
		e := math.Max(maxDiff(fo, so), maxDiff(fn, sn))
		e2 := math.Max(maxDiff(fo, mo), maxDiff(fn, mn))
		t.Logf("%s: shift size %.3g, fast vs Shifter %.3g, fast vs mixed %.3g; %+v", name, shift, e, e2, fast.Precompute())
		if !(shift > 1e-4) {
			t.Errorf("%s: shift %.3g too small to test", name, shift)
		}
		if e > 1e-5+1e-3*shift || e2 > 1e-5+1e-3*shift {
			t.Errorf("%s: cached and Shifter paths differ by %.3g / %.3g (shift %.3g)", name, e, e2, shift)
		}
		if maxDiff(fo, fo2) != 0 || maxDiff(fn, fn2) != 0 {
			t.Errorf("%s: same seed, different result", name)
		}
	}
}

// Every augmenter is deterministic given the rng; different seeds differ.
func TestAugmentersDeterministic(t *testing.T) {
	d, m := fixture(t)
	b := batchOf(d, []int{3, 30, 300, 3000})
	q := func(s, a []float32, rows int, g []float32) {
		for i := range g[:rows*d.ObsDim] {
			g[i] = s[i] - 0.5
		}
	}
	for _, name := range []string{"kfc", "kfc++", "kfc++-contact", "vae-noise", "kfc++-prediction", "kfc++-latent-prediction", "fwd-prediction", "s4rl-adv", "gaussian"} {
		o := opts(d, m)
		o.KoopmanProb = 1
		out := func(seed uint64) []float32 {
			a, err := augment.New(name, o)
			if err != nil {
				t.Fatal(err)
			}
			obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
			if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(seed, 1)), q); err != nil {
				t.Fatal(err)
			}
			return append(obs, next...)
		}
		x, y, z := out(1), out(1), out(2)
		if maxDiff(x, y) != 0 {
			t.Errorf("%s: not deterministic", name)
		}
		if name != "s4rl-adv" && maxDiff(x, z) == 0 {
			t.Errorf("%s: different seeds gave identical output", name)
		}
	}
}

func TestKoopmanOptionErrors(t *testing.T) {
	d, m := fixture(t)
	if _, err := augment.New("kfc++", augment.DefaultOptions()); err == nil {
		t.Error("kfc++ without a model accepted")
	}
	other, _ := koopman.NewModel(koopman.ModelConfig{ObsDim: 4, ActDim: 1, Latent: 4, Hidden: []int{4}, EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh"})
	o := opts(d, other)
	if _, err := augment.New("kfc++", o); err == nil || !strings.Contains(err.Error(), "dataset has") {
		t.Errorf("dimension mismatch not reported: %v", err)
	}
	o = opts(d, m)
	o.KoopmanProb = 2
	if _, err := augment.New("kfc", o); err == nil {
		t.Error("p_K = 2 accepted")
	}
	o = opts(d, m)
	o.Env = "unknown"
	if _, err := augment.New("kfc++-contact", o); err == nil {
		t.Error("contact dims for an unknown env accepted")
	}
	if !augment.NeedsKoopman("kfc++") || augment.NeedsKoopman("s4rl-adv") || augment.NeedsKoopman("gaussian") {
		t.Error("NeedsKoopman wrong")
	}
	a, _ := augment.New("s4rl-adv", o)
	b := batchOf(d, []int{1})
	if err := a.Augment(b, make([]float32, 3), make([]float32, 3), rand.New(rand.NewPCG(1, 1)), nil); err == nil {
		t.Error("s4rl-adv without QGradient accepted")
	}
	o.ModelPath = "/nonexistent/model.safetensors"
	o.Model = nil
	if _, err := augment.New("kfc++", o); err == nil {
		t.Error("missing model file accepted")
	}
}

// S4RL-Adv in l2 mode moves s_t by exactly ε along ∂Q/∂s and leaves s_{t+1}.
func TestAdversarialStep(t *testing.T) {
	b := dataset.NewBatch(2, 2, 1)
	copy(b.Obs, []float32{1, 2, 3, 4})
	copy(b.NextObs, []float32{5, 6, 7, 8})
	q := func(s, a []float32, rows int, g []float32) { copy(g, []float32{3, 4, 0, -2}) }
	for mode, want := range map[string][]float32{
		"l2":   {1 + 0.6e-1, 2 + 0.8e-1, 3, 4 - 0.1},
		"sign": {1.1, 2.1, 3, 3.9},
		"raw":  {1.3, 2.4, 3, 3.8},
	} {
		o := augment.DefaultOptions()
		o.AdvEps, o.AdvMode = 0.1, mode
		a, err := augment.New("s4rl-adv", o)
		if err != nil {
			t.Fatal(err)
		}
		obs, next := make([]float32, 4), make([]float32, 4)
		if err := a.Augment(b, obs, next, nil, q); err != nil {
			t.Fatal(err)
		}
		if maxDiff(obs, want) > 1e-6 || maxDiff(next, b.NextObs) != 0 {
			t.Errorf("%s: got %v / %v, want %v", mode, obs, next, want)
		}
	}
}

func fmtStats(s augment.KoopmanStats) string {
	return fmt.Sprintf("koopman batches %d/%d, fallbacks %d, contact rows %d, mean ‖s̃−s‖ %.3g",
		s.KoopmanBatches, s.Batches, s.Fallbacks, s.ContactRows, s.MeanShiftL2)
}

// A latent size N ≥ 128 has conjugate-pair indices beyond int8: the cached
// KFC++ path must still pair-average ε like the per-batch Shifter path
// (regression: the cache stored partners as int8, so pairs past column 127
// lost their averaging and σ(ε) stopped commuting with K(a)).
func TestCachedPathLargeLatent(t *testing.T) {
	const S, A, N = 3, 1, 130
	rng := rand.New(rand.NewPCG(6, 6))
	d := dataset.Synthetic(S, A, 4, rng)
	m := smallModel(t, S, A, 16, N, 5)
	b := batchOf(d, []int{0, 1, 2, 3})
	run := func(cache int64) ([]float32, []float32, augment.KoopmanStats) {
		o := opts(d, m)
		o.KoopmanProb, o.ShiftSigma, o.CacheGiB, o.Workers = 1, 30, gib(cache), 1
		a, err := augment.NewKoopman("kfc++", o)
		if err != nil {
			t.Fatal(err)
		}
		obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
		if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(9, 9)), nil); err != nil {
			t.Fatal(err)
		}
		return obs, next, a.Stats()
	}
	fo, fn, fast := run(augment.GiB)
	so, sn, slow := run(0)
	if fast.CachedRows != 4 || slow.SlowRows != 4 || fast.Fallbacks != 0 || slow.Fallbacks != 0 {
		t.Fatalf("paths not exercised as intended: cached %+v, per-batch %+v", fast, slow)
	}
	shift := maxDiff(fo, m.Reconstruct(b.Obs, 4))
	e := math.Max(maxDiff(fo, so), maxDiff(fn, sn))
	t.Logf("N = %d: shift %.3g, cached vs Shifter %.3g", N, shift, e)
	if !(shift > 1e-4) {
		t.Fatalf("shift %.3g too small to test", shift)
	}
	if e > 1e-5+1e-3*shift {
		t.Errorf("N = %d: cached and Shifter paths differ by %.3g (shift %.3g)", N, e, shift)
	}
}

// Fallback rows are counted the same on the cached and the per-batch paths,
// for KFC as for KFC++ (regression: cached KFC rows were never counted).
func TestFallbacksCountedOnBothPaths(t *testing.T) {
	const S, A = 3, 1
	rng := rand.New(rand.NewPCG(6, 7))
	d := dataset.Synthetic(S, A, 6, rng)
	m := smallModel(t, S, A, 16, 6, 5)
	b := batchOf(d, []int{0, 1, 2, 3, 4, 5})
	for _, name := range []string{"kfc", "kfc++"} {
		var outs [][]float32
		for _, cache := range []int64{augment.GiB, 0} {
			o := opts(d, m)
			o.KoopmanProb, o.CacheGiB = 1, gib(cache)
			o.Symmetry.MaxCond = 1 + 1e-12 // every real eigenbasis is worse conditioned: all rows fall back
			a, err := augment.NewKoopman(name, o)
			if err != nil {
				t.Fatal(err)
			}
			obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
			if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(9, 9)), nil); err != nil {
				t.Fatal(err)
			}
			st := a.Stats()
			if st.Fallbacks != b.B || st.CachedRows+st.SlowRows != b.B {
				t.Errorf("%s, cache %d bytes: %d fallbacks in %d model rows (%+v), want every row", name, cache, st.Fallbacks, b.B, st)
			}
			if pre := a.Report().(augment.KoopmanReport).Precompute; cache > 0 && (pre.Fallbacks != 6 || pre.Cached != 6) {
				t.Errorf("%s: precompute counted %d fallbacks in %d cached rows, want 6 of 6", name, pre.Fallbacks, pre.Cached)
			}
			outs = append(outs, obs, next)
		}
		// The cached fallback and the per-batch shifter's fallback are one
		// rule: the same draws give the same states.
		for k := 0; k < 2; k++ {
			if d := maxDiff(outs[k], outs[2+k]); !(d <= 1e-5) {
				t.Errorf("%s: cached and per-batch fallback shifts differ by %.3g", name, d)
			}
		}
	}
}

// kfc++-prediction is the paper's s̃_{t+1} = D(K(a_t)E(s̃_t)) with s̃_t the
// kfc++ shift (with Residual: s_{t+1} + D(K(a)E(s̃_t)) − D(K(a)E(s_t)));
// kfc++-latent-prediction advances the shifted latent instead,
// D(K(a_t)(1+σ)E(s_t)). All three share s̃_t for the same draws.
func TestPredictionAblations(t *testing.T) {
	d, m := fixture(t)
	idx := []int{3, 50, 77, 300, 901, 2000, 4321, 9000}
	b := batchOf(d, idx)
	B := len(idx)
	for _, residual := range []bool{false, true} {
		run := func(name string) ([]float32, []float32) {
			o := opts(d, m)
			o.KoopmanProb, o.ShiftSigma, o.Residual = 1, 30, residual
			a, err := augment.New(name, o)
			if err != nil {
				t.Fatal(err)
			}
			obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
			if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(5, 1)), nil); err != nil {
				t.Fatal(err)
			}
			return obs, next
		}
		ko, _ := run("kfc++")
		po, pn := run("kfc++-prediction")
		lo, ln := run("kfc++-latent-prediction")
		if maxDiff(ko, po) != 0 || maxDiff(ko, lo) != 0 {
			t.Fatalf("residual %v: s̃_t differs from kfc++'s: %.3g, %.3g", residual, maxDiff(ko, po), maxDiff(ko, lo))
		}
		want := m.Predict(po, b.Act, B)
		if residual {
			ref := m.Predict(b.Obs, b.Act, B)
			for j := range want {
				want[j] = b.NextObs[j] + want[j] - ref[j]
			}
		}
		if e := maxDiff(pn, want); e > 1e-5 {
			t.Errorf("residual %v: kfc++-prediction s̃_{t+1} differs from D(K(a)E(s̃_t)) by %.3g", residual, e)
		}
		if e := maxDiff(ln, pn); !(e > 1e-4) {
			t.Errorf("residual %v: kfc++-latent-prediction equals kfc++-prediction (max diff %.3g)", residual, e)
		}
	}
}

// gib converts a cache bound in bytes to Params.CacheGiB (exactly: the
// bound is a whole number of bytes below 2⁵³ scaled by 2⁻³⁰).
func gib(bytes int64) float64 { return float64(bytes) / float64(augment.GiB) }
