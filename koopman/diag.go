package koopman

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"
)

// DiagConfig controls ModelDiagnostics.
type DiagConfig struct {
	// Samples is the number of transitions examined (drawn without
	// replacement, seeded); 0 or more than the data means all. Default 1000.
	Samples int `json:"samples"`
	// EpsStd is the KFC++ ε standard deviation per eigen-direction used for
	// the shift-size and commutator measurements (authors' code:
	// shift_sigma·3e-3 with shift_sigma = 1, i.e. 3e-3; README example 1.5e-3).
	EpsStd float64 `json:"eps_std"`
	// Symmetry configures the eigendecomposition (fallback threshold).
	Symmetry SymmetryConfig `json:"symmetry"`
	// Seed selects the sample and the ε draws.
	Seed uint64 `json:"seed"`
}

// DefaultDiagConfig returns the defaults documented on DiagConfig.
func DefaultDiagConfig() DiagConfig {
	return DiagConfig{Samples: 1000, EpsStd: 3e-3, Symmetry: DefaultSymmetryConfig()}
}

// Summary is a five-number summary of a sample.
type Summary struct {
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

func summarize(x []float64) Summary {
	if len(x) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	m := 0.0
	for _, v := range s {
		m += v
	}
	q := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s)-1)+0.5))] }
	return Summary{Mean: m / float64(len(s)), Min: s[0], Median: q(0.5), P95: q(0.95), Max: s[len(s)-1]}
}

// String formats the summary compactly.
func (s Summary) String() string {
	return fmt.Sprintf("mean %.3g, min %.3g, median %.3g, p95 %.3g, max %.3g", s.Mean, s.Min, s.Median, s.P95, s.Max)
}

// ModelDiagnostics measures how usable a trained Koopman model is for KFC /
// KFC++ augmentation. Distances are Euclidean norms in raw state units,
// averaged over the sampled transitions.
type ModelDiagnostics struct {
	Samples int `json:"samples"`
	// ReconL2 is mean ‖D(E(s)) − s‖₂ (autoencoder error; it enters every
	// decoded shifted state unless residual decoding is used).
	ReconL2 float64 `json:"recon_l2"`
	// ForwardL2 is mean ‖D(K(a)E(s)) − s'‖₂; BaselineL2 is mean ‖s − s'‖₂,
	// the error of the constant prediction s' = s.
	ForwardL2  float64 `json:"forward_l2"`
	BaselineL2 float64 `json:"baseline_l2"`
	// EigAbs summarizes |λ| over all eigenvalues of the sampled K(a);
	// ComplexFraction is the share of non-real eigenvalues.
	EigAbs          Summary `json:"eig_abs"`
	ComplexFraction float64 `json:"complex_fraction"`
	// Cond summarizes cond₁ of the real eigenbasis (finite values only).
	Cond Summary `json:"cond"`
	// CommKFCpp and CommKFC summarize the relative commutator residuals
	// ‖[σ, K(a)]‖_F/(‖σ‖_F‖K(a)‖_F) of the KFC++ σ(ε) and the KFC generator
	// (non-fallback transitions).
	CommKFCpp Summary `json:"comm_kfcpp"`
	CommKFC   Summary `json:"comm_kfc"`
	// ShiftL2 summarizes the symmetry part of the KFC++ shift of s_t,
	// ‖D(E(s) + σ(ε)E(s)) − D(E(s))‖₂ (the paper reports a mean L2 shift of
	// 2.6e-4 on D4RL); ShiftL2Total is mean ‖D(E(s) + σ(ε)E(s)) − s‖₂, the
	// full augmentation distance with the authors' direct decoding.
	ShiftL2      Summary `json:"shift_l2"`
	ShiftL2Total float64 `json:"shift_l2_total"`
	// Fallbacks counts transitions whose K(a) used the scalar fallback
	// generator, by reason.
	Fallbacks       int            `json:"fallbacks"`
	FallbackReasons map[string]int `json:"fallback_reasons,omitempty"`
}

// Diagnose computes ModelDiagnostics for model m on transitions obs
// [n, S], raw actions act [n, m], next [n, S].
func (m *Model) Diagnose(obs, act, next []float32, cfg DiagConfig) (*ModelDiagnostics, error) {
	S, M, N := m.S(), m.M(), m.N()
	if S == 0 || len(obs)%S != 0 {
		return nil, fmt.Errorf("koopman diagnostics: %d state values for state dimension %d", len(obs), S)
	}
	n := len(obs) / S
	if err := m.CheckData(obs, act, next, n); err != nil {
		return nil, fmt.Errorf("koopman diagnostics: %w", err)
	}
	if !(cfg.EpsStd >= 0) {
		return nil, fmt.Errorf("koopman diagnostics: eps_std %v must be >= 0", cfg.EpsStd)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xd1a6))
	idx := rng.Perm(n)
	if cfg.Samples > 0 && cfg.Samples < n {
		idx = idx[:cfg.Samples]
	}
	rows := len(idx)
	so, sa, sn := make([]float32, rows*S), make([]float32, rows*M), make([]float32, rows*S)
	for r, i := range idx {
		copy(so[r*S:(r+1)*S], obs[i*S:(i+1)*S])
		copy(sn[r*S:(r+1)*S], next[i*S:(i+1)*S])
		copy(sa[r*M:(r+1)*M], act[i*M:(i+1)*M])
	}
	d := &ModelDiagnostics{Samples: rows, FallbackReasons: map[string]int{}}
	var ws Workspace
	g := append([]float32(nil), m.Encode(&ws.Enc, so, rows)...)
	rec := append([]float32(nil), m.Decode(&ws.Dec, g, rows)...)
	pred := m.Predict(so, sa, rows)
	dist := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			x := float64(a[i] - b[i])
			s += x * x
		}
		return math.Sqrt(s)
	}
	k0, ks := m.Operators()
	dec := NewDecomposer(N, cfg.Symmetry)
	rb := NewRealBasis(N)
	k := make([]float64, N*N)
	a64 := make([]float64, M)
	eps := make([]float64, N)
	g64, dg := make([]float64, N), make([]float64, N)
	shifted := make([]float32, rows*N)
	var eigAbs, conds, commPP, commK []float64
	complexCount := 0
	for r := 0; r < rows; r++ {
		d.ReconL2 += dist(rec[r*S:(r+1)*S], so[r*S:(r+1)*S]) / float64(rows)
		d.ForwardL2 += dist(pred[r*S:(r+1)*S], sn[r*S:(r+1)*S]) / float64(rows)
		d.BaselineL2 += dist(so[r*S:(r+1)*S], sn[r*S:(r+1)*S]) / float64(rows)
		for j := range a64 {
			a64[j] = float64(sa[r*M+j])
		}
		OperatorAt(k, k0, ks, a64)
		if !dec.Decompose(rb, k) {
			d.Fallbacks++
			d.FallbackReasons[reasonClass(rb.Reason)]++
		}
		for _, v := range rb.Values {
			eigAbs = append(eigAbs, cmplx.Abs(v))
			if imag(v) != 0 {
				complexCount++
			}
		}
		if !math.IsInf(rb.Cond, 0) && !math.IsNaN(rb.Cond) {
			conds = append(conds, rb.Cond)
		}
		for j := range eps {
			eps[j] = cfg.EpsStd * rng.NormFloat64()
		}
		if !rb.Fallback {
			dd := Diagnose(rb, k, eps)
			commPP = append(commPP, dd.CommKFCpp)
			commK = append(commK, dd.CommKFC)
		}
		for j := range g64 {
			g64[j] = float64(g[r*N+j])
		}
		rb.Shift(dg, g64, eps)
		for j := range dg {
			shifted[r*N+j] = float32(g64[j] + dg[j])
		}
	}
	sdec := m.Decode(&ws.Dec, shifted, rows)
	var shifts []float64
	for r := 0; r < rows; r++ {
		shifts = append(shifts, dist(sdec[r*S:(r+1)*S], rec[r*S:(r+1)*S]))
		d.ShiftL2Total += dist(sdec[r*S:(r+1)*S], so[r*S:(r+1)*S]) / float64(rows)
	}
	d.EigAbs, d.Cond = summarize(eigAbs), summarize(conds)
	d.CommKFCpp, d.CommKFC, d.ShiftL2 = summarize(commPP), summarize(commK), summarize(shifts)
	if len(eigAbs) > 0 {
		d.ComplexFraction = float64(complexCount) / float64(len(eigAbs))
	}
	return d, nil
}

// reasonClass strips numbers from a fallback reason so reasons group.
func reasonClass(r string) string {
	for i, c := range r {
		if c == '(' || (c >= '0' && c <= '9') {
			if i > 0 {
				return r[:i]
			}
		}
	}
	return r
}
