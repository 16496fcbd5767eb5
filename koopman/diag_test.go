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
