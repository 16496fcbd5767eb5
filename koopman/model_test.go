package koopman

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/classic"
	"github.com/koopq/koopq/internal/gradcheck"
	"github.com/koopq/koopq/nn"
)

// checkGradF compares analytic gradients with central finite differences of
// loss, probing up to 30 entries.
func checkGradF(t *testing.T, name string, x, analytic []float32, loss func() float64, rng *rand.Rand) {
	t.Helper()
	gradcheck.Check(t, name, x, analytic, loss, rng, gradcheck.Options{Floor: 1e-2, AbsTol: 2e-4})
}

// The whole-model gradient (E, K0, K_i, D through both loss terms) matches
// finite differences, for tanh and ReLU variants.
func TestModelGradients(t *testing.T) {
	for _, acts := range [][3]string{{"tanh", "tanh", "tanh"}, {"tanh", "identity", "tanh"}} {
		rng := rand.New(rand.NewPCG(3, 4))
		cfg := ModelConfig{ObsDim: 3, ActDim: 2, Latent: 4, Hidden: []int{6, 5},
			EncoderHidden: acts[0], EncoderOutput: acts[1], DecoderHidden: acts[2], Seed: 9}
		m, err := NewModel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Scale K up so the bilinear terms matter.
		for i := range m.K.Data {
			m.K.Data[i] *= 2
		}
		tc := DefaultTrainConfig()
		tc.AEWeight = 3
		tc.HuberDelta = 0.5
		tr := &trainer{m: m, cfg: tc}
		rows := 4
		obs := randF(rng, rows*3, 1)
		act := randF(rng, rows*2, 1)
		next := randF(rng, rows*3, 1)
		idx := []int{0, 1, 2, 3}
		tr.gather(obs, act, next, idx, 0.3, rng)
		noisy := append([]float32(nil), tr.x...)
		loss := func() float64 {
			copy(tr.x, noisy)
			f, a := tr.lossGrad(rows, false)
			return f + tc.AEWeight*a
		}
		nn.ZeroGrad(m.Params())
		copy(tr.x, noisy)
		tr.lossGrad(rows, true)
		for _, p := range m.Params() {
			g := append([]float32(nil), p.Grad...)
			checkGradF(t, acts[1]+"/"+p.Name, p.Data, g, loss, rng)
		}
	}
}

func randF(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return v
}

// pendulumData rolls out a uniform-random policy on Pendulum-v1 for n
// transitions: obs and next [n, 3], raw actions [n, 1] in [−2, 2].
func pendulumData(t testing.TB, n int, seed uint64) (obs, act, next []float32) {
	t.Helper()
	e, err := env.Make(classic.NamePendulum)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	s := e.Reset(rng)
	a := make([]float64, 1)
	for len(act) < n {
		a[0] = 4*rng.Float64() - 2
		s2, _, term, trunc, err := e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		for j := range s {
			obs = append(obs, float32(s[j]))
			next = append(next, float32(s2[j]))
		}
		act = append(act, float32(a[0]))
		s = s2
		if term || trunc {
			s = e.Reset(rng)
		}
	}
	return obs, act, next
}

// sharedPendulumModel trains a small model on 4000 random Pendulum
// transitions once per test binary.
func sharedPendulumModel(t *testing.T) (*Model, *TrainResult, [3][]float32) {
	t.Helper()
	pendOnce.Do(func() {
		obs, act, next := pendulumData(t, 4000, 1)
		cfg := DefaultModelConfig(3, 1)
		cfg.Hidden = []int{64, 64}
		cfg.Latent = 8
		cfg.Seed = 2
		m, err := NewModel(cfg)
		if err != nil {
			pendErr = err
			return
		}
		tc := DefaultTrainConfig()
		tc.MaxEpochs = 40
		tc.Batch = 64
		tc.LR = 1e-3
		tc.Seed = 5
		res, err := Train(context.Background(), m, obs, act, next, tc, func(st EpochStats) {
			t.Logf("epoch %2d train %.5f (fwd %.5f ae %.5f) val %.5f (fwd %.5f ae %.5f) %.0f samples/s",
				st.Epoch, st.TrainTotal, st.TrainFwd, st.TrainAE, st.ValTotal, st.ValFwd, st.ValAE, st.SamplesPerSec)
		})
		pendModel, pendRes, pendData, pendErr = m, res, [3][]float32{obs, act, next}, err
	})
	if pendErr != nil {
		t.Fatal(pendErr)
	}
	return pendModel, pendRes, pendData
}

// A model trained on Pendulum predicts s' on held-out transitions better
// than the constant baseline s' = s, and reconstructs states.
func TestModelLearnsPendulum(t *testing.T) {
	m, res, data := sharedPendulumModel(t)
	obs, act, next := data[0], data[1], data[2]
	if len(res.Epochs) == 0 || res.BestEpoch == 0 {
		t.Fatalf("no epochs recorded: %+v", res)
	}
	first, last := res.Epochs[0], res.Epochs[len(res.Epochs)-1]
	if !(last.TrainTotal < first.TrainTotal) {
		t.Errorf("training loss did not fall: %v → %v", first.TrainTotal, last.TrainTotal)
	}
	// Held-out rows only.
	S := 3
	var vo, va, vn []float32
	for _, i := range res.ValIdx {
		vo = append(vo, obs[i*S:(i+1)*S]...)
		vn = append(vn, next[i*S:(i+1)*S]...)
		va = append(va, act[i])
	}
	rows := len(res.ValIdx)
	pred := m.Predict(vo, va, rows)
	mse := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			d := float64(a[i] - b[i])
			s += d * d
		}
		return s / float64(len(a))
	}
	model, base := mse(pred, vn), mse(vo, vn)
	rec := mse(m.Reconstruct(vo, rows), vo)
	t.Logf("held-out MSE: model %.3g, s'=s baseline %.3g (ratio %.3f); reconstruction %.3g; best epoch %d (%s)",
		model, base, model/base, rec, res.BestEpoch, res.Stopped)
	if !(model < 0.5*base) {
		t.Errorf("forward prediction MSE %.3g is not well below the s'=s baseline %.3g", model, base)
	}
	if !(rec < 0.5*base) {
		t.Errorf("reconstruction MSE %.3g too large (baseline %.3g)", rec, base)
	}
}

func TestModelSaveLoad(t *testing.T) {
	cfg := ModelConfig{ObsDim: 4, ActDim: 2, Latent: 5, Hidden: []int{7}, EncoderHidden: "relu", EncoderOutput: "tanh", DecoderHidden: "tanh", Seed: 1}
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(path, map[string]string{"note": "x"}); err != nil {
		t.Fatal(err)
	}
	m2, meta, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta["note"] != "x" || m2.Cfg.EncoderHidden != "relu" || m2.N() != 5 {
		t.Fatalf("round trip lost config or metadata: %+v %v", m2.Cfg, meta)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	s, a := randF(rng, 8, 1), randF(rng, 4, 1)
	p1, p2 := m.Predict(s, a, 2), m2.Predict(s, a, 2)
	for i := range p1 {
		if p1[i] != p2[i] {
			t.Fatalf("prediction differs after load: %v vs %v", p1, p2)
		}
	}
	k0, ks := m2.Operators()
	if len(k0) != 25 || len(ks) != 2 || float32(ks[1][3]) != m.K.Data[2*25+3] {
		t.Fatalf("Operators layout wrong")
	}
	// A plain nn checkpoint is rejected with an error.
	other := filepath.Join(t.TempDir(), "o.safetensors")
	if err := nn.SaveSafetensors(other, m.Params(), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadModel(other); err == nil {
		t.Fatal("loading a file without model config succeeded")
	}
}

// Advance agrees with the explicit operator K(a) from Operators/OperatorAt.
func TestAdvanceMatchesOperator(t *testing.T) {
	m, err := NewModel(ModelConfig{ObsDim: 2, ActDim: 3, Latent: 6, Hidden: []int{4}, EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh", Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	g, a := randF(rng, 2*6, 1), randF(rng, 2*3, 1)
	out := make([]float32, 12)
	var ws Workspace
	m.Advance(&ws, g, a, 2, out)
	k0, ks := m.Operators()
	for r := 0; r < 2; r++ {
		ad := []float64{float64(a[r*3]), float64(a[r*3+1]), float64(a[r*3+2])}
		k := OperatorAt(nil, k0, ks, ad)
		for i := 0; i < 6; i++ {
			s := 0.0
			for j := 0; j < 6; j++ {
				s += k[i*6+j] * float64(g[r*6+j])
			}
			if math.Abs(s-float64(out[r*6+i])) > 1e-5 {
				t.Fatalf("row %d dim %d: Advance %v, K(a)g %v", r, i, out[r*6+i], s)
			}
		}
	}
}

func TestTrainRejectsBadData(t *testing.T) {
	m, _ := NewModel(ModelConfig{ObsDim: 3, ActDim: 1, Latent: 4, Hidden: []int{4}, EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh"})
	tc := DefaultTrainConfig()
	tc.MaxEpochs = 1
	obs := make([]float32, 30)
	if _, err := Train(context.Background(), m, obs, make([]float32, 20), make([]float32, 30), tc, nil); err == nil {
		t.Error("wrong action dimension accepted")
	}
	if _, err := Train(context.Background(), m, obs[:29], make([]float32, 10), make([]float32, 29), tc, nil); err == nil {
		t.Error("ragged states accepted")
	}
	bad := make([]float32, 30)
	bad[4] = float32(math.NaN())
	if _, err := Train(context.Background(), m, bad, make([]float32, 10), make([]float32, 30), tc, nil); err == nil {
		t.Error("NaN accepted")
	}
}

// BenchmarkModelTrain reports Koopman training throughput (samples/s, one
// minibatch gradient step with Adam per iteration) at the paper's sizes on
// Hopper-shaped data (S = 11, m = 3, N = 32, hidden 512×512, batch 256).
func BenchmarkModelTrain(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	cfg := DefaultModelConfig(11, 3)
	m, _ := NewModel(cfg)
	tc := DefaultTrainConfig()
	tr := &trainer{m: m, cfg: tc}
	n := 4096
	obs, act, next := randF(rng, n*11, 1), randF(rng, n*3, 1), randF(rng, n*11, 1)
	idx := rng.Perm(n)[:tc.Batch]
	opt := nn.NewAdam(m.Params(), tc.LR)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.gather(obs, act, next, idx, tc.NoiseSigma, rng)
		nn.ZeroGrad(m.Params())
		tr.lossGrad(tc.Batch, true)
		opt.Step()
	}
	rate := float64(b.N*tc.Batch) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "samples/s")
	b.ReportMetric(rate*trainFLOPsPerSample(cfg)/1e9, "GFLOP/s")
}

// trainFLOPsPerSample counts the multiply-adds (×2) of one training sample:
// the forward path runs E, K(a) and D on s; the autoencoder runs E and D on
// s̃ and s̃'; backward costs a weight gradient per layer and an input
// gradient per layer except E's first.
func trainFLOPsPerSample(c ModelConfig) float64 {
	macs := func(sizes []int) (all, first float64) {
		for i := 0; i+1 < len(sizes); i++ {
			all += float64(sizes[i] * sizes[i+1])
		}
		return all, float64(sizes[0] * sizes[1])
	}
	e, e0 := macs(append(append([]int{c.ObsDim}, c.Hidden...), c.Latent))
	d, _ := macs(append(append([]int{c.Latent}, c.Hidden...), c.ObsDim))
	k := float64(c.Latent * c.Latent * (c.ActDim + 1))
	return 2 * (3*(3*e-e0) + 3*(3*d) + 3*k)
}

var (
	pendOnce  sync.Once
	pendModel *Model
	pendRes   *TrainResult
	pendData  [3][]float32
	pendErr   error
)

// TestModelConfigValidateEdges: every size must be at least 1 (1 is
// accepted), every hidden width too.
func TestModelConfigValidateEdges(t *testing.T) {
	ok := ModelConfig{ObsDim: 1, ActDim: 1, Latent: 1, Hidden: []int{1}, EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "relu"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("sizes of 1 refused: %v", err)
	}
	for name, mut := range map[string]func(*ModelConfig){
		"obs_dim 0":    func(c *ModelConfig) { c.ObsDim = 0 },
		"act_dim 0":    func(c *ModelConfig) { c.ActDim = 0 },
		"latent 0":     func(c *ModelConfig) { c.Latent = 0 },
		"hidden 0":     func(c *ModelConfig) { c.Hidden = []int{4, 0} },
		"activation x": func(c *ModelConfig) { c.DecoderHidden = "sigmoid" },
	} {
		c := ok
		c.Hidden = append([]int(nil), ok.Hidden...)
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// TestKoopmanOperatorInit: K0 and every K_i start uniform in ±1/√N, both
// signs well represented.
func TestKoopmanOperatorInit(t *testing.T) {
	cfg := DefaultModelConfig(3, 2)
	cfg.Hidden, cfg.Latent, cfg.Seed = []int{8}, 16, 7
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := 1 / math.Sqrt(16)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range m.K.Data {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	if lo < -b-1e-7 || hi > b+1e-7 || lo > -0.8*b || hi < 0.8*b {
		t.Errorf("K entries span [%v, %v], want U(±%v)", lo, hi, b)
	}
	if len(m.K.Data) != 3*16*16 {
		t.Errorf("K has %d entries, want (1 + 2 actions) × 16 × 16", len(m.K.Data))
	}
}

// TestCheckDataShapes: no rows is refused; with two action dimensions the
// action array must hold rows·2 values.
func TestCheckDataShapes(t *testing.T) {
	cfg := DefaultModelConfig(3, 2)
	cfg.Hidden, cfg.Latent = []int{4}, 4
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 4
	obs, act, next := make([]float32, rows*3), make([]float32, rows*2), make([]float32, rows*3)
	if err := m.CheckData(obs, act, next, rows); err != nil {
		t.Fatalf("well-shaped data refused: %v", err)
	}
	if err := m.CheckData(nil, nil, nil, 0); err == nil {
		t.Error("no transitions accepted")
	}
	if err := m.CheckData(obs, act[:rows], next, rows); err == nil {
		t.Error("one action value per row accepted for a 2-D action")
	}
}

// TestAdvanceRefusesShortBuffers: Advance's size check names itself
// (a programming error, so a panic) instead of an index error deep inside.
func TestAdvanceRefusesShortBuffers(t *testing.T) {
	cfg := DefaultModelConfig(3, 2)
	cfg.Hidden, cfg.Latent = []int{4}, 4
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 3
	for name, c := range map[string][3]int{"g": {rows*4 - 1, rows * 2, rows * 4}, "a": {rows * 4, rows*2 - 1, rows * 4},
		"out": {rows * 4, rows * 2, rows*4 - 1}} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, "koopman: Advance") {
					t.Errorf("short %s: recovered %v, want Advance's size panic", name, r)
				}
			}()
			var ws Workspace
			m.Advance(&ws, make([]float32, c[0]), make([]float32, c[1]), rows, make([]float32, c[2]))
		}()
	}
}
