package augment_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/learntest"
	"github.com/koopq/koopq/nn"
)

var (
	cp2Once  sync.Once
	cp2Data  *dataset.Dataset
	cp2Model *koopman.Model
	cp2Err   error
)

// cartpoleRandomFixture is a second small dataset for the magnitude tests:
// 4000 rows of cartpole-continuous under a uniformly random policy (seed 5)
// and a Koopman model (hidden 32×32, N = 6) trained on it for 5 epochs.
// The model needs to be neither good nor converged: calibration must work
// for any model.
func cartpoleRandomFixture(t *testing.T) (*dataset.Dataset, *koopman.Model) {
	t.Helper()
	cp2Once.Do(func() {
		random := func(_ []float64, rng *rand.Rand, a []float64) { a[0] = 2*rng.Float64() - 1 }
		if cp2Data, _, cp2Err = learntest.Rollouts("cartpole-continuous", random, 4000, 5); cp2Err != nil {
			return
		}
		mc := koopman.DefaultModelConfig(4, 1)
		mc.Hidden, mc.Latent, mc.Seed = []int{32, 32}, 6, 3
		if cp2Model, cp2Err = koopman.NewModel(mc); cp2Err != nil {
			return
		}
		tc := koopman.DefaultTrainConfig()
		tc.MaxEpochs, tc.Batch, tc.LR, tc.Seed = 5, 64, 1e-3, 4
		_, cp2Err = koopman.Train(context.Background(), cp2Model, cp2Data.Observations, cp2Data.Actions, cp2Data.NextObservations, tc, nil)
	})
	if cp2Err != nil {
		t.Fatal(cp2Err)
	}
	return cp2Data, cp2Model
}

// trainingMean is the mean ‖s̃_t − s_t‖₂ an augmenter produces on training
// batches (other rows and another stream than the calibration's: 40
// batches of 256 uniformly drawn rows, branch choice included), measured
// by a Meter.
func trainingMean(t *testing.T, a augment.Augmenter, d *dataset.Dataset) float64 {
	t.Helper()
	m := augment.NewMeter(a)
	rng := rand.New(rand.NewPCG(77, 78))
	s := dataset.NewSampler(d, rand.New(rand.NewPCG(79, 80)))
	b := dataset.NewBatch(256, d.ObsDim, d.ActDim)
	obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
	for i := 0; i < 40; i++ {
		s.Sample(b)
		if err := m.Augment(b, obs, next, rng, nil); err != nil {
			t.Fatal(err)
		}
	}
	return m.Obs.Mean()
}

// --shift-l2 X makes the mean ‖s̃_t − s_t‖₂ of training batches X within 5%
// for gaussian, kfc++ (residual), kfc (residual) and vae-noise (direct
// decoding, above its floor), on two datasets, at the paper's 2.6e-4 and at
// 1e-2.
func TestCalibrateHitsTarget(t *testing.T) {
	type fix struct {
		name string
		get  func(*testing.T) (*dataset.Dataset, *koopman.Model)
		env  string
	}
	for _, f := range []fix{{"pendulum", fixture, "pendulum"}, {"cartpole", cartpoleRandomFixture, "cartpole-continuous"}} {
		d, model := f.get(t)
		sample := augment.CalibrationSample(d, augment.CalibrationRows, augment.CalibrationSeed)
		floor := augment.ModelErrorL2(model, sample)
		t.Logf("%s: model-error floor %.3g", f.name, floor)
		cases := []struct {
			aug      string
			residual bool
			targets  []float64
		}{
			{"gaussian", false, []float64{2.6e-4, 1e-2}},
			{"kfc++", true, []float64{2.6e-4, 1e-2}},
			{"kfc", true, []float64{2.6e-4, 1e-2}},
			{"vae-noise", false, []float64{2 * floor, 4 * floor}},
		}
		for _, c := range cases {
			for _, x := range c.targets {
				o := opts(d, model)
				o.Env, o.Residual = f.env, c.residual
				a, err := augment.New(c.aug, o)
				if err != nil {
					t.Fatal(err)
				}
				a, cal, err := augment.Calibrate(a, sample, x)
				if err != nil {
					t.Fatalf("%s %s target %.3g: %v", f.name, c.aug, x, err)
				}
				got := trainingMean(t, a, d)
				t.Logf("%s %s target %.3g: %s = %.4g (%s, %d evaluations), calibration sample %.4g, training batches %.4g",
					f.name, c.aug, x, cal.Param, cal.Scale, cal.Method, cal.Evaluations, cal.Measured, got)
				// Bisection measures scale 0, a first upper end and at least
				// one probe, and stops within its 0.1% tolerance.
				if cal.Method == "bisection" && (cal.Evaluations < 3 || !(math.Abs(cal.Measured-x) <= 1e-3*x)) {
					t.Errorf("%s %s: bisection of %d evaluations measured %.5g, want ≥ 3 and within 0.1%% of %.4g", f.name, c.aug, cal.Evaluations, cal.Measured, x)
				}
				if !(math.Abs(got-x) <= 0.05*x) {
					t.Errorf("%s %s: training shift %.4g, want %.4g within 5%%", f.name, c.aug, got, x)
				}
			}
		}
	}
}

// Below the model-error floor, direct decoding cannot be calibrated: the
// error names --residual. Analytic cases: s4rl-adv's l2 step is ε, none has
// no scale, raw s4rl-adv is refused.
func TestCalibrateRefusals(t *testing.T) {
	d, model := fixture(t)
	sample := augment.CalibrationSample(d, augment.CalibrationRows, augment.CalibrationSeed)
	floor := augment.ModelErrorL2(model, sample)
	a, err := augment.New("kfc++", opts(d, model))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := augment.Calibrate(a, sample, floor/2); err == nil || !strings.Contains(err.Error(), "--residual") {
		t.Errorf("target below the floor %.3g: err %v, want one naming --residual", floor, err)
	}
	adv, _ := augment.New("s4rl-adv", opts(d, model))
	if _, c, err := augment.Calibrate(adv, sample, 3e-3); err != nil || adv.(*augment.Adversarial).Eps != 3e-3 || c.Param != "adv_eps" {
		t.Errorf("s4rl-adv l2: eps %v, %+v, %v; want eps = target", adv.(*augment.Adversarial).Eps, c, err)
	}
	o := opts(d, model)
	o.AdvMode = "raw"
	raw, _ := augment.New("s4rl-adv", o)
	if _, _, err := augment.Calibrate(raw, sample, 3e-3); err == nil {
		t.Error("s4rl-adv raw: calibrated, want an error")
	}
	if _, _, err := augment.Calibrate(augment.None{}, sample, 3e-3); err == nil {
		t.Error("none: calibrated, want an error")
	}
}

// Decompose's model-error part equals ‖D(E(s)) − s‖₂ (m.Reconstruct) and
// its symmetry part ‖D((1+σ)E(s)) − D(E(s))‖₂ computed independently with
// koopman.Shifter from the same ε draws (the model branch's stream: one
// uniform for the branch, then B·N normals).
func TestDecomposeMatchesIndependentComputation(t *testing.T) {
	d, m := fixture(t)
	idx := []int{3, 50, 777, 4000, 9001}
	b := batchOf(d, idx)
	B, S, N, M := len(idx), d.ObsDim, m.N(), m.M()
	o := opts(d, m)
	o.ShiftSigma = 30 // a visible shift
	a, err := augment.NewKoopman("kfc++", o)
	if err != nil {
		t.Fatal(err)
	}
	const seed = 11
	dec, ok, err := a.Decompose(b, seed)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	rec := m.Reconstruct(b.Obs, B)
	wantModel := 0.0
	for i := 0; i < B; i++ {
		wantModel += l2(rec[i*S:(i+1)*S], b.Obs[i*S:(i+1)*S]) / float64(B)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	rng.Float64() // the branch draw
	eps := make([]float64, B*N)
	for i := range eps {
		eps[i] = 30 * augment.KFCppEpsUnit * rng.NormFloat64()
	}
	lat32 := m.Encode(new(nn.Cache), append(append([]float32(nil), b.Obs...), b.NextObs...), 2*B)
	lat, act := make([]float64, 2*B*N), make([]float64, B*M)
	for i := 0; i < B; i++ {
		for c := 0; c < N; c++ {
			lat[i*2*N+c] = float64(lat32[i*N+c])
			lat[i*2*N+N+c] = float64(lat32[(B+i)*N+c])
		}
		for c := 0; c < M; c++ {
			act[i*M+c] = float64(d.Actions[idx[i]*M+c])
		}
	}
	k0, ks := m.Operators()
	dst := make([]float64, 2*B*N)
	koopman.NewShifter(k0, ks, N, koopman.DefaultSymmetryConfig(), 1).ShiftKFCpp(dst, lat, act, eps)
	shifted := make([]float32, 2*B*N) // rows 0..B−1 g̃_t, B..2B−1 g_t
	for i := 0; i < B; i++ {
		for c := 0; c < N; c++ {
			shifted[i*N+c] = float32(dst[i*2*N+c])
			shifted[(B+i)*N+c] = lat32[i*N+c]
		}
	}
	out := m.Decode(new(nn.Cache), shifted, 2*B)
	wantSym := 0.0
	for i := 0; i < B; i++ {
		wantSym += l2(out[i*S:(i+1)*S], out[(B+i)*S:(B+i+1)*S]) / float64(B)
	}
	t.Logf("model error %.5g (independent %.5g), symmetry %.5g (independent %.5g)", dec.ModelError, wantModel, dec.Symmetry, wantSym)
	if math.Abs(dec.ModelError-wantModel) > 1e-4*wantModel+1e-6 {
		t.Errorf("model error part %.6g, independent %.6g", dec.ModelError, wantModel)
	}
	if !(wantSym > 1e-4) || math.Abs(dec.Symmetry-wantSym) > 1e-3*wantSym+1e-5 {
		t.Errorf("symmetry part %.6g, independent %.6g", dec.Symmetry, wantSym)
	}
}

func l2(x, y []float32) float64 {
	s := 0.0
	for j := range x {
		v := float64(x[j]) - float64(y[j])
		s += v * v
	}
	return math.Sqrt(s)
}

// TestCalibrationSampleRows: each sample row is the dataset row its index
// names (state, next state, 2-D action, reward, terminal); rows are
// distinct while the dataset has enough, repeat in a cycle when it has
// fewer, and the same seed gives the same sample.
func TestCalibrationSampleRows(t *testing.T) {
	const S, A = 3, 2
	d := dataset.Synthetic(S, A, 12, rand.New(rand.NewPCG(4, 4)))
	for i := range d.Terminals {
		d.Terminals[i] = float32(i % 2)
	}
	for _, n := range []int{10, 30} {
		b := augment.CalibrationSample(d, n, 7)
		again := augment.CalibrationSample(d, n, 7)
		seen := map[int]int{}
		for i := 0; i < n; i++ {
			j := b.Idx[i]
			seen[j]++
			if again.Idx[i] != j {
				t.Fatalf("n %d: row %d index %d, then %d with the same seed", n, i, j, again.Idx[i])
			}
			for k := 0; k < S; k++ {
				if b.Obs[i*S+k] != d.Observations[j*S+k] || b.NextObs[i*S+k] != d.NextObservations[j*S+k] {
					t.Fatalf("n %d: sample row %d is not dataset row %d", n, i, j)
				}
			}
			if b.Act[i*A] != d.Actions[j*A] || b.Act[i*A+1] != d.Actions[j*A+1] || b.Rew[i] != d.Rewards[j] || b.Done[i] != d.Terminals[j] {
				t.Fatalf("n %d: sample row %d's action, reward or terminal is not dataset row %d's", n, i, j)
			}
		}
		// 10 of 12 rows: each once; 30: the permutation cycles 2.5 times,
		// so every row 2 or 3 times.
		lo, hi := 1, 1
		if n > 12 {
			lo, hi = 2, 3
		}
		for j, c := range seen {
			if c < lo || c > hi {
				t.Errorf("n %d: dataset row %d drawn %d times, want %d to %d", n, j, c, lo, hi)
			}
		}
		if n > 12 && len(seen) != 12 {
			t.Errorf("n %d: %d distinct rows, want all 12", n, len(seen))
		}
	}
}

// TestCalibrateTargetMustBePositive: a target of 0, a negative, NaN or
// infinite one is refused before the augmenter is touched.
func TestCalibrateTargetMustBePositive(t *testing.T) {
	d := dataset.Synthetic(2, 1, 8, rand.New(rand.NewPCG(1, 1)))
	sample := augment.CalibrationSample(d, 8, 1)
	g, err := augment.New("gaussian", augment.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []float64{0, -1e-3, math.NaN(), math.Inf(1)} {
		if _, _, err := augment.Calibrate(g, sample, target); err == nil || !strings.Contains(err.Error(), "positive finite") {
			t.Errorf("target %v: got %v", target, err)
		}
	}
}

// TestCalibrateUnreachableTarget: a Koopman model's decoder is bounded (tanh
// hidden layers), so a shift of 1e6 cannot be reached at any scale; the
// search gives up after its 60 quadruplings with an error saying how far it
// got, instead of looping or returning a scale that overflowed.
func TestCalibrateUnreachableTarget(t *testing.T) {
	d, model := fixture(t)
	sample := augment.CalibrationSample(d, augment.CalibrationRows, augment.CalibrationSeed)
	o := opts(d, model)
	o.Residual = true
	a, err := augment.New("kfc++", o)
	if err != nil {
		t.Fatal(err)
	}
	_, c, err := augment.Calibrate(a, sample, 1e6)
	if err == nil || !strings.Contains(err.Error(), "reaches only") {
		t.Fatalf("target 1e6: got %v, want an error saying what it reaches", err)
	}
	if c.Evaluations != 62 { // scale 0, the first upper end, 60 quadruplings
		t.Errorf("%d evaluations, want 62", c.Evaluations)
	}
}

// TestCalibrateIsIdempotent: the search starts from the augmenter's own
// scale, so calibrating an augmenter already at the target keeps its scale
// exactly (the first upper end is within tolerance and is the best seen).
func TestCalibrateIsIdempotent(t *testing.T) {
	d, model := fixture(t)
	sample := augment.CalibrationSample(d, augment.CalibrationRows, augment.CalibrationSeed)
	for _, name := range []string{"kfc++", "vae-noise"} {
		o := opts(d, model)
		o.Residual = true
		a, err := augment.New(name, o)
		if err != nil {
			t.Fatal(err)
		}
		target := 1e-2
		a, first, err := augment.Calibrate(a, sample, target)
		if err != nil {
			t.Fatal(err)
		}
		_, second, err := augment.Calibrate(a, sample, target)
		if err != nil {
			t.Fatal(err)
		}
		if second.Scale != first.Scale || second.Measured != first.Measured || second.Evaluations >= first.Evaluations {
			t.Errorf("%s: recalibrating moved %s from %v (measured %v, %d evaluations) to %v (measured %v, %d evaluations)",
				name, first.Param, first.Scale, first.Measured, first.Evaluations, second.Scale, second.Measured, second.Evaluations)
		}
	}
}

// TestCalibrateSignAndFwdPrediction: s4rl-adv's sign mode moves every
// coordinate by ε, so ‖s̃ − s‖₂ = ε√S and the calibrated ε is target/√S;
// fwd-prediction's s̃_t = s_t + N(0, σ²) is solved analytically like S4RL-N
// (σ = target / E‖z‖, z ~ N(0, I_S)), and both land on the target.
func TestCalibrateSignAndFwdPrediction(t *testing.T) {
	d, model := fixture(t)
	sample := augment.CalibrationSample(d, augment.CalibrationRows, augment.CalibrationSeed)
	S := float64(d.ObsDim)
	o := opts(d, model)
	o.AdvMode = "sign"
	adv, err := augment.New("s4rl-adv", o)
	if err != nil {
		t.Fatal(err)
	}
	_, c, err := augment.Calibrate(adv, sample, 3e-3)
	if eps := adv.(*augment.Adversarial).Eps; err != nil || !(math.Abs(eps-3e-3/math.Sqrt(S)) <= 1e-15) || c.Scale != eps {
		t.Errorf("s4rl-adv sign: eps %v (%+v, %v), want 3e-3/√%v", eps, c, err, S)
	}
	fp, err := augment.New("fwd-prediction", opts(d, model))
	if err != nil {
		t.Fatal(err)
	}
	_, c, err = augment.Calibrate(fp, sample, 1e-2)
	if err != nil || c.Param != "fwd_sigma" || !(math.Abs(c.Measured-1e-2) <= 0.05e-2) {
		t.Errorf("fwd-prediction: %+v, %v; want fwd_sigma measuring 1e-2 within 5%%", c, err)
	}
}

// TestCalibrateFromScaleZero: an augmenter whose own scale is 0 (allowed:
// --shift-sigma 0 turns the shift off) has no scale to start the search
// from; it starts at 1 and lands on the target like one with a scale.
func TestCalibrateFromScaleZero(t *testing.T) {
	d, model := fixture(t)
	sample := augment.CalibrationSample(d, augment.CalibrationRows, augment.CalibrationSeed)
	o := opts(d, model)
	o.Residual, o.ShiftSigma = true, 0
	a, err := augment.New("kfc++", o)
	if err != nil {
		t.Fatal(err)
	}
	const target = 1e-2
	_, c, err := augment.Calibrate(a, sample, target)
	if err != nil || !(c.Scale > 0) || !(math.Abs(c.Measured-target) <= 1e-3*target) {
		t.Fatalf("from shift_sigma 0: %+v, %v; want the target %v within 0.1%%", c, err, target)
	}
}
