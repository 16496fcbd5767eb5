package koopman

import "testing"

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
