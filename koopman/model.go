package koopman

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/nn"
)

// ModelConfig describes the architecture of the Koopman forward model of
// Step 1 (paper Eq. Fwdmodel): encoder E: s → g ∈ R^N, bilinear latent step
// g' = K(a) g with K(a) = K0 + Σ_i a_i K_i, decoder D: g → s.
//
// Defaults (DefaultModelConfig) follow the paper's appendix for sizes
// (E: [512, 512, N], D: [512, 512, S], N = 32) and the authors' code for the
// activations: the paper says ReLU, the released code (which the authors'
// README says is the KFC code behind the paper's numbers) uses tanh after
// every layer of E including its output, and tanh on D's hidden layers with
// a linear D output. tanh keeps g in (−1, 1)^N, which keeps K(a)'s spectrum
// and eigenbasis well-behaved; "relu" is available for the paper's variant.
type ModelConfig struct {
	// ObsDim is the state dimension S, ActDim the action dimension m.
	ObsDim int `json:"obs_dim"`
	ActDim int `json:"act_dim"`
	// Latent is the Koopman latent dimension N (paper and code: 32).
	Latent int `json:"latent"`
	// Hidden lists the hidden widths of E and of D (paper and code: [512, 512]).
	Hidden []int `json:"hidden"`
	// EncoderHidden, EncoderOutput and DecoderHidden name the activations
	// ("tanh", "relu", "identity"); the decoder output is always linear.
	// Code: tanh, tanh, tanh. Paper text: ReLU.
	EncoderHidden string `json:"encoder_hidden"`
	EncoderOutput string `json:"encoder_output"`
	DecoderHidden string `json:"decoder_hidden"`
	// Seed initializes the weights.
	Seed uint64 `json:"seed"`
}

// DefaultModelConfig returns the paper's sizes with the authors' activations
// for a state dimension obsDim and action dimension actDim.
func DefaultModelConfig(obsDim, actDim int) ModelConfig {
	return ModelConfig{ObsDim: obsDim, ActDim: actDim, Latent: 32, Hidden: []int{512, 512},
		EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh"}
}

// Validate reports configurations that cannot be built.
func (c ModelConfig) Validate() error {
	if c.ObsDim <= 0 || c.ActDim <= 0 || c.Latent <= 0 {
		return fmt.Errorf("koopman model: obs_dim %d, act_dim %d and latent %d must be positive", c.ObsDim, c.ActDim, c.Latent)
	}
	for _, h := range c.Hidden {
		if h <= 0 {
			return fmt.Errorf("koopman model: hidden widths %v must be positive", c.Hidden)
		}
	}
	for _, a := range []string{c.EncoderHidden, c.EncoderOutput, c.DecoderHidden} {
		if _, ok := nn.ParseActivation(a); !ok {
			return fmt.Errorf("koopman model: unknown activation %q (want tanh, relu or identity)", a)
		}
	}
	return nil
}

// Model is the bilinear Koopman forward model (E, K0, {K_i}, D). It is the
// frozen input of Step 2 and Step 3 once trained.
//
// Methods that take an explicit *nn.Cache or *Workspace are safe for
// concurrent use with distinct caches (they only read the parameters).
type Model struct {
	Cfg ModelConfig
	// Enc is E: [S] → hidden → [N]; Dec is D: [N] → hidden → [S].
	Enc, Dec *nn.MLP
	// K holds the latent operators, shape [m+1, N, N]: block 0 is K0 and
	// block i (1 ≤ i ≤ m) is K_i, each row-major with g'_r = Σ_c K[r,c] g_c
	// (the column-vector convention of the symmetry code and of the
	// authors' bias-free nn.Linear weights).
	K *nn.Param
}

// NewModel builds a model with Xavier-uniform E and D weights (zero biases)
// and K0, K_i drawn from U(−1/√N, 1/√N), PyTorch's default for the authors'
// bias-free nn.Linear(N, N) layers.
func NewModel(cfg ModelConfig) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	act := func(s string) nn.Activation { a, _ := nn.ParseActivation(s); return a }
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6b00b))
	es := append(append([]int{cfg.ObsDim}, cfg.Hidden...), cfg.Latent)
	ds := append(append([]int{cfg.Latent}, cfg.Hidden...), cfg.ObsDim)
	m := &Model{Cfg: cfg}
	m.Enc = nn.NewMLP("enc", es, act(cfg.EncoderHidden), act(cfg.EncoderOutput), rng)
	m.Dec = nn.NewMLP("dec", ds, act(cfg.DecoderHidden), nn.Identity, rng)
	n := cfg.Latent
	m.K = nn.NewParam("koopman.K", cfg.ActDim+1, n, n)
	b := 1 / math.Sqrt(float64(n))
	for i := range m.K.Data {
		m.K.Data[i] = float32((2*rng.Float64() - 1) * b)
	}
	return m, nil
}

// N returns the latent dimension, S the state dimension and M the action dimension.
func (m *Model) N() int { return m.Cfg.Latent }

// S returns the state dimension.
func (m *Model) S() int { return m.Cfg.ObsDim }

// M returns the action dimension.
func (m *Model) M() int { return m.Cfg.ActDim }

// Params lists every trainable parameter (E, D, then K).
func (m *Model) Params() []*nn.Param {
	return append(append(m.Enc.Params(), m.Dec.Params()...), m.K)
}

// Operators returns K0 ([N*N]) and K_i (m × [N*N]) as float64 row-major
// copies, ready for OperatorAt, Decomposer and Shifter.
func (m *Model) Operators() (k0 []float64, ks [][]float64) {
	n2 := m.N() * m.N()
	conv := func(b int) []float64 {
		out := make([]float64, n2)
		for i, v := range m.K.Data[b*n2 : (b+1)*n2] {
			out[i] = float64(v)
		}
		return out
	}
	k0 = conv(0)
	for i := 1; i <= m.M(); i++ {
		ks = append(ks, conv(i))
	}
	return k0, ks
}

// Workspace holds the caches of one concurrent user of a Model.
type Workspace struct {
	Enc, Dec nn.Cache
	y        []float32 // [rows, (m+1)N] bilinear scratch
	g, a     []float32 // inputs of the last Advance (not copied)
	rows     int
}

// Encode computes g = E(s) for s [rows, S]; the result [rows, N] lives in
// c until its next use.
func (m *Model) Encode(c *nn.Cache, s []float32, rows int) []float32 {
	return m.Enc.Forward(c, s, rows)
}

// Decode computes s = D(g) for g [rows, N]; the result [rows, S] lives in c.
func (m *Model) Decode(c *nn.Cache, g []float32, rows int) []float32 {
	return m.Dec.Forward(c, g, rows)
}

// Advance writes the latent step out[r] = K(a_r) g_r for g [rows, N] and raw
// (dataset-unit) actions a [rows, m] into out [rows, N], using one GEMM
// Y = g·[K0; K1; …; Km]ᵀ followed by out = Y_0 + Σ_i a_i Y_i. out must not
// alias g. It remembers g and a for AdvanceBackward.
func (m *Model) Advance(ws *Workspace, g, a []float32, rows int, out []float32) {
	n, M := m.N(), m.M()
	w := (M + 1) * n
	if len(g) < rows*n || len(a) < rows*M || len(out) < rows*n {
		panic(fmt.Sprintf("koopman: Advance: g %d, a %d, out %d entries for %d rows (N=%d, m=%d)", len(g), len(a), len(out), rows, n, M))
	}
	ws.y = growF(ws.y, rows*w)
	ws.g, ws.a, ws.rows = g, a, rows
	blas.MatMul(false, true, rows, w, n, g, m.K.Data, ws.y, false)
	for r := 0; r < rows; r++ {
		o := out[r*n : (r+1)*n]
		y := ws.y[r*w : (r+1)*w]
		copy(o, y[:n])
		for i := 0; i < M; i++ {
			ai := a[r*M+i]
			for j, v := range y[(i+1)*n : (i+2)*n] {
				o[j] += ai * v
			}
		}
	}
}

// AdvanceBackward back-propagates dout = ∂L/∂out [rows, N] through the last
// Advance made with ws: with params it accumulates ∂L/∂K; with dg non-nil it
// writes ∂L/∂g [rows, N]. Actions are data and get no gradient.
func (m *Model) AdvanceBackward(ws *Workspace, dout, dg []float32, params bool) {
	n, M, rows := m.N(), m.M(), ws.rows
	w := (M + 1) * n
	dy := ws.y // the forward values are no longer needed
	for r := 0; r < rows; r++ {
		d := dout[r*n : (r+1)*n]
		y := dy[r*w : (r+1)*w]
		copy(y[:n], d)
		for i := 0; i < M; i++ {
			ai := ws.a[r*M+i]
			blk := y[(i+1)*n : (i+2)*n]
			for j, v := range d {
				blk[j] = ai * v
			}
		}
	}
	if params {
		blas.MatMul(true, false, w, n, rows, dy, ws.g, m.K.Grad, true)
	}
	if dg != nil {
		blas.MatMul(false, false, rows, n, w, dy, m.K.Data, dg, false)
	}
}

// Predict returns the forward prediction D(K(a) E(s)) [rows, S] for states
// s [rows, S] and raw actions a [rows, m]. It allocates; for diagnostics.
func (m *Model) Predict(s, a []float32, rows int) []float32 {
	var ws Workspace
	g := m.Encode(&ws.Enc, s, rows)
	gp := make([]float32, rows*m.N())
	m.Advance(&ws, g, a, rows, gp)
	return append([]float32(nil), m.Decode(&ws.Dec, gp, rows)...)
}

// Reconstruct returns D(E(s)) [rows, S]. It allocates; for diagnostics.
func (m *Model) Reconstruct(s []float32, rows int) []float32 {
	var ws Workspace
	g := m.Encode(&ws.Enc, s, rows)
	return append([]float32(nil), m.Decode(&ws.Dec, g, rows)...)
}

// CheckData validates transition arrays against the model: obs and next
// [rows, S], act [rows, m], all finite.
func (m *Model) CheckData(obs, act, next []float32, rows int) error {
	S, M := m.S(), m.M()
	if rows <= 0 {
		return fmt.Errorf("koopman: no transitions")
	}
	if len(obs) != rows*S || len(next) != rows*S {
		return fmt.Errorf("koopman: model state dimension %d, but data has %d/%d state values for %d rows", S, len(obs), len(next), rows)
	}
	if len(act) != rows*M {
		return fmt.Errorf("koopman: model action dimension %d, but data has %d action values for %d rows", M, len(act), rows)
	}
	for _, x := range [][]float32{obs, act, next} {
		for i, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("koopman: data holds non-finite value %v at flat index %d", v, i)
			}
		}
	}
	return nil
}

// metaConfigKey is the safetensors metadata key holding the ModelConfig JSON.
const metaConfigKey = "koopman_model_config"

// MetaDataContent is the safetensors metadata key holding the content
// sha256 (dataset.Dataset.ContentSHA256) of the transitions the model was
// trained on, so that a run given the model can tell whether it describes
// the run's own data. Absent in models saved before koopq recorded it.
const MetaDataContent = "data_content_sha256"

// Save writes the model as safetensors (atomically: temp file + rename),
// with the ModelConfig as JSON under metadata "koopman_model_config" plus
// any extra metadata (e.g. training summary).
func (m *Model) Save(path string, extra map[string]string) error {
	cj, err := json.Marshal(m.Cfg)
	if err != nil {
		return err
	}
	meta := map[string]string{metaConfigKey: string(cj), "format": "koopq.koopman.v1"}
	for k, v := range extra {
		if k != metaConfigKey {
			meta[k] = v
		}
	}
	return nn.SaveSafetensors(path, m.Params(), meta)
}

// LoadModel reads a model written by Model.Save and returns it with the
// file's metadata.
func LoadModel(path string) (*Model, map[string]string, error) {
	ts, meta, err := nn.LoadSafetensors(path)
	if err != nil {
		return nil, nil, err
	}
	cj, ok := meta[metaConfigKey]
	if !ok {
		return nil, nil, fmt.Errorf("koopman model %s: no %q metadata (not a koopq Koopman model)", path, metaConfigKey)
	}
	var cfg ModelConfig
	if err := json.Unmarshal([]byte(cj), &cfg); err != nil {
		return nil, nil, fmt.Errorf("koopman model %s: bad config metadata: %w", path, err)
	}
	m, err := NewModel(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("koopman model %s: %w", path, err)
	}
	if err := nn.AssignParams(m.Params(), ts); err != nil {
		return nil, nil, fmt.Errorf("koopman model %s: %w", path, err)
	}
	if err := nn.CheckFinite(m.Params()); err != nil {
		return nil, nil, fmt.Errorf("koopman model %s: %w", path, err)
	}
	return m, meta, nil
}

func growF(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
