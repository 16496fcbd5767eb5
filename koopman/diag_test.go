package koopman

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/nn"
)

// Diagnostics of the shared Pendulum model are finite and plausible: small
// commutator residuals, shifts of order ε, forward error below the s' = s
// baseline.
func TestModelDiagnostics(t *testing.T) {
	m, _, data := sharedPendulumModel(t)
	cfg := DefaultDiagConfig()
	cfg.Samples = 300
	d, err := m.Diagnose(data[0], data[1], data[2], cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recon %.3g fwd %.3g baseline %.3g | |λ| %v | complex %.2f | cond %v", d.ReconL2, d.ForwardL2, d.BaselineL2, d.EigAbs, d.ComplexFraction, d.Cond)
	t.Logf("comm KFC++ %v | comm KFC %v | shift %v (total %.3g) | fallbacks %d %v", d.CommKFCpp, d.CommKFC, d.ShiftL2, d.ShiftL2Total, d.Fallbacks, d.FallbackReasons)
	if d.Samples != 300 || !(d.ForwardL2 < d.BaselineL2) {
		t.Errorf("forward error %.3g not below baseline %.3g", d.ForwardL2, d.BaselineL2)
	}
	if d.Fallbacks < d.Samples && !(d.CommKFCpp.Max < 1e-8) {
		t.Errorf("KFC++ commutator residual too large: %v", d.CommKFCpp)
	}
	if !(d.ShiftL2.Mean > 0 && d.ShiftL2.Mean < 0.1) {
		t.Errorf("shift size %v implausible for ε std 3e-3", d.ShiftL2)
	}
	if _, err := m.Diagnose(data[0][:30], data[1][:5], data[2][:30], cfg); err == nil {
		t.Error("mismatched action rows accepted")
	}
}

// TestSummarizeNearestRank: the summary's quantiles are nearest-rank
// (index round(p·(n−1)) of the sorted sample), on an unsorted sample whose
// ranks are known.
func TestSummarizeNearestRank(t *testing.T) {
	x := make([]float64, 21)
	for i := range x {
		x[i] = float64((i*8)%21) + 0.5 // a permutation of 0.5 … 20.5
	}
	got := summarize(x)
	want := Summary{Mean: 10.5, Min: 0.5, Median: 10.5, P95: 19.5, Max: 20.5}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
	if x[1] != 8.5 {
		t.Error("summarize sorted its input in place")
	}
	if (summarize(nil) != Summary{}) {
		t.Error("summary of no values is not zero")
	}
	if got := summarize([]float64{4, 1, 3, 2}); got.Median != 3 || got.P95 != 4 {
		t.Errorf("n = 4: median %v p95 %v, want the upper middle 3 and 4", got.Median, got.P95)
	}
}

// TestDiagnoseMeansRecomputed: with every transition sampled (Samples 0),
// the mean distances are permutation-invariant, so they are recomputed here
// from the raw rows, Encode/Decode and Predict; with ε ≡ 0 (EpsStd 0,
// allowed) the symmetry part of every shift is exactly 0 and the total
// shift is the reconstruction error.
func TestDiagnoseMeansRecomputed(t *testing.T) {
	m, _, data := sharedPendulumModel(t)
	diagnoseRecomputed(t, m, data[0][:500*3], data[1][:500], data[2][:500*3], 500)
	// An untrained model with a 2-D action (m = 1 cannot tell a row offset
	// r·m from r/m) on random rows.
	cfg := DefaultModelConfig(3, 2)
	cfg.Hidden, cfg.Latent, cfg.Seed = []int{8}, 4, 3
	m2, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	obs, act, next := make([]float32, 60*3), make([]float32, 60*2), make([]float32, 60*3)
	for _, xs := range [][]float32{obs, act, next} {
		for i := range xs {
			xs[i] = float32(rng.NormFloat64())
		}
	}
	diagnoseRecomputed(t, m2, obs, act, next, 60)
}

func diagnoseRecomputed(t *testing.T, m *Model, obs, act, next []float32, rows int) {
	t.Helper()
	S := m.S()
	cfg := DefaultDiagConfig()
	cfg.Samples, cfg.EpsStd = 0, 0
	d, err := m.Diagnose(obs, act, next, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Samples != rows {
		t.Fatalf("Samples 0 used %d rows, want all %d", d.Samples, rows)
	}
	var c1, c2 nn.Cache
	rec := m.Decode(&c2, m.Encode(&c1, obs, rows), rows)
	pred := m.Predict(obs, act, rows)
	dist := func(a, b []float32, r int) float64 {
		s := 0.0
		for i := r * S; i < (r+1)*S; i++ {
			s += float64(a[i]-b[i]) * float64(a[i]-b[i])
		}
		return math.Sqrt(s)
	}
	var recon, fwd, base float64
	for r := range rows {
		recon += dist(rec, obs, r) / float64(rows)
		fwd += dist(pred, next, r) / float64(rows)
		base += dist(obs, next, r) / float64(rows)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"ReconL2", d.ReconL2, recon}, {"ForwardL2", d.ForwardL2, fwd}, {"BaselineL2", d.BaselineL2, base},
		{"ShiftL2Total (ε = 0)", d.ShiftL2Total, recon}} {
		if !(math.Abs(c.got-c.want) <= 1e-5*c.want) {
			t.Errorf("%s = %v, recomputed %v", c.name, c.got, c.want)
		}
	}
	// |λ| of every row's K(a), decomposed here one by one.
	k0, ks := m.Operators()
	N, M := m.N(), m.M()
	k, a64 := make([]float64, N*N), make([]float64, M)
	dec, rb := NewDecomposer(N, cfg.Symmetry), NewRealBasis(N)
	var eig []float64
	complexN := 0
	for r := range rows {
		for j := range a64 {
			a64[j] = float64(act[r*M+j])
		}
		OperatorAt(k, k0, ks, a64)
		dec.Decompose(rb, k)
		for _, v := range rb.Values {
			eig = append(eig, cmplx.Abs(v))
			if imag(v) != 0 {
				complexN++
			}
		}
	}
	if want := summarize(eig); d.EigAbs != want {
		t.Errorf("|λ| summary %+v, recomputed %+v", d.EigAbs, want)
	}
	if want := float64(complexN) / float64(len(eig)); d.ComplexFraction != want {
		t.Errorf("complex fraction %v, recomputed %v", d.ComplexFraction, want)
	}
	// With ε ~ N(0, 3e-3²): the symmetry shifts recomputed row by row, in
	// Diagnose's documented order (the rows of a seeded permutation, then N
	// draws of ε per row from the same stream).
	cfg.EpsStd = 3e-3
	d2, err := m.Diagnose(obs, act, next, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srng := rand.New(rand.NewPCG(cfg.Seed, 0xd1a6))
	perm := srng.Perm(rows)
	var enc, dc nn.Cache
	shifted := make([]float32, rows*N)
	g := m.Encode(&enc, obs, rows)
	g64, dg, eps := make([]float64, N), make([]float64, N), make([]float64, N)
	for r, i := range perm {
		for j := range a64 {
			a64[j] = float64(act[i*M+j])
		}
		OperatorAt(k, k0, ks, a64)
		dec.Decompose(rb, k)
		for j := range eps {
			eps[j] = cfg.EpsStd * srng.NormFloat64()
		}
		for j := range g64 {
			g64[j] = float64(g[i*N+j])
		}
		rb.Shift(dg, g64, eps)
		for j := range dg {
			shifted[r*N+j] = float32(g64[j] + dg[j])
		}
	}
	sdec := m.Decode(&dc, shifted, rows)
	var shifts []float64
	total := 0.0
	for r, i := range perm {
		a, c := 0.0, 0.0
		for j := range S {
			x := float64(sdec[r*S+j])
			a += (x - float64(rec[i*S+j])) * (x - float64(rec[i*S+j]))
			c += (x - float64(obs[i*S+j])) * (x - float64(obs[i*S+j]))
		}
		shifts, total = append(shifts, math.Sqrt(a)), total+math.Sqrt(c)/float64(rows)
	}
	want := summarize(shifts)
	if !(math.Abs(d2.ShiftL2.Mean-want.Mean) <= 1e-4*want.Mean) || !(math.Abs(d2.ShiftL2Total-total) <= 1e-4*total) {
		t.Errorf("ε std 3e-3: shift %+v total %v, recomputed %+v total %v", d2.ShiftL2, d2.ShiftL2Total, want, total)
	}
	if d.ShiftL2.Max != 0 {
		t.Errorf("ε = 0: symmetry shifts up to %v, want 0", d.ShiftL2.Max)
	}
	cfg.EpsStd = -1e-3
	if _, err := m.Diagnose(obs, act, next, cfg); err == nil {
		t.Error("negative eps_std accepted")
	}
}
