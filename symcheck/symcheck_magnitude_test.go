package symcheck

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/learntest"
	"github.com/koopq/koopq/run"
)

// --shift-l2 calibrates the kfc++ scale per magnitude on one sample: the
// kfc++ row's mean ‖s̃_t − s_t‖₂ is the target within 5% (in the study and
// in the calibration, which share their ε draws), the s4rl-n row's mean ΔS is kfc++'s,
// and symcheck.json holds every row per magnitude.
func TestSymcheckMagnitudesPendulum(t *testing.T) {
	d := learntest.PendulumT(t, 1500, 1)
	m := tinyKoopman(t, d)
	cfg := DefaultConfig("pendulum")
	cfg.N, cfg.Seed, cfg.Residual = 400, 7, true
	cfg.ShiftL2 = []float64{2.6e-4, 1e-2}
	r, err := Magnitudes(context.Background(), m, d, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Magnitudes) != 2 || r.Samples != 400 {
		t.Fatalf("%d magnitudes, %d samples", len(r.Magnitudes), r.Samples)
	}
	rows := []string{"data", "reconstruction", "kfc++", "random-shared", "random-independent", "s4rl-n"}
	for i, mg := range r.Magnitudes {
		x := cfg.ShiftL2[i]
		if mg.ShiftL2 != x || !(mg.ShiftSigma > 0) || mg.ShiftSigma != mg.Detail.Config.ShiftSigma {
			t.Errorf("magnitude %d: target %v, shift sigma %v (detail %v)", i, mg.ShiftL2, mg.ShiftSigma, mg.Detail.Config.ShiftSigma)
		}
		if rel := math.Abs(mg.MeasuredShiftL2-x) / x; !(rel <= 0.05) {
			t.Errorf("shift-l2 %g: kfc++ mean ‖s̃_t − s_t‖₂ %.4g in the study (relative %.3f)", x, mg.MeasuredShiftL2, rel)
		}
		if rel := math.Abs(mg.Calibration.Measured-x) / x; !(rel <= 0.05) {
			t.Errorf("shift-l2 %g: calibration measured %.4g", x, mg.Calibration.Measured)
		}
		// The study's kfc++ row is the calibration's shift (same ε), not a fresh draw.
		if rel := math.Abs(mg.MeasuredShiftL2-mg.Calibration.Measured) / x; !(rel <= 1e-4) {
			t.Errorf("shift-l2 %g: study's kfc++ shift %.6g, the augmenter's %.6g on the same draws", x, mg.MeasuredShiftL2, mg.Calibration.Measured)
		}
		sym, noise := mg.Detail.Variant("kfc++"), mg.Detail.Variant("s4rl-n")
		if noise == nil {
			t.Fatalf("shift-l2 %g: no s4rl-n row", x)
		}
		if rel := math.Abs(noise.DeltaS.Mean-sym.DeltaS.Mean) / sym.DeltaS.Mean; !(rel <= 0.05) {
			t.Errorf("shift-l2 %g: s4rl-n mean ΔS %.4g, kfc++ %.4g", x, noise.DeltaS.Mean, sym.DeltaS.Mean)
		}
		if !(noise.NoiseSigma > 0) || noise.Failures != 0 {
			t.Errorf("shift-l2 %g: s4rl-n σ %v, %d failures", x, noise.NoiseSigma, noise.Failures)
		}
		if len(mg.Detail.Comparisons) != 3 || mg.Detail.Comparisons[2].Against != "s4rl-n" {
			t.Errorf("shift-l2 %g: comparisons %+v", x, mg.Detail.Comparisons)
		}
		var names []string
		for _, row := range mg.Rows {
			names = append(names, row.Name)
		}
		if !slices.Equal(names, rows) {
			t.Errorf("shift-l2 %g: rows %v, want %v", x, names, rows)
		}
	}
	// Larger targets, larger shifts: the scale is really set per magnitude.
	if a, b := r.Magnitudes[0].Detail.Variant("kfc++").DeltaS.Mean, r.Magnitudes[1].Detail.Variant("kfc++").DeltaS.Mean; !(b > 10*a) {
		t.Errorf("kfc++ mean ΔS %g at 2.6e-4, %g at 1e-2", a, b)
	}

	dir, err := run.NewDir(t.TempDir(), "symcheck")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteMagnitudes(r, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{JSONFile, SummaryFile, "samples-l2-0.00026.csv", "symcheck-l2-0.01.png"} {
		if st, err := os.Stat(dir.File(f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	var back struct {
		Magnitudes []struct {
			ShiftL2    float64 `json:"shift_l2"`
			ShiftSigma float64 `json:"shift_sigma"`
			Rows       []map[string]json.RawMessage
		} `json:"magnitudes"`
	}
	raw, _ := os.ReadFile(dir.File(JSONFile))
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Magnitudes) != 2 {
		t.Fatalf("symcheck.json: %d magnitudes", len(back.Magnitudes))
	}
	for _, mg := range back.Magnitudes {
		if len(mg.Rows) != len(rows) || !(mg.ShiftSigma > 0) {
			t.Fatalf("shift-l2 %g: %d rows in JSON, shift sigma %v", mg.ShiftL2, len(mg.Rows), mg.ShiftSigma)
		}
		for i, row := range mg.Rows {
			var name string
			_ = json.Unmarshal(row["name"], &name)
			if name != rows[i] {
				t.Errorf("shift-l2 %g: JSON row %d is %q", mg.ShiftL2, i, name)
			}
			for _, k := range []string{"delta_s", "delta_e_pos", "delta_e_vel", "delta_e", "delta_e_over_data"} {
				var v map[string]float64
				if err := json.Unmarshal(row[k], &v); err != nil || len(v) != 2 {
					t.Errorf("shift-l2 %g %s: %s = %s", mg.ShiftL2, name, k, row[k])
				}
				if _, ok := v["median"]; !ok {
					t.Errorf("shift-l2 %g %s: %s has no median", mg.ShiftL2, name, k)
				}
			}
		}
	}
	sum, _ := os.ReadFile(dir.File(SummaryFile))
	for _, want := range []string{"== shift-l2 0.00026", "== shift-l2 0.01", "s4rl-n", "kfc++ vs s4rl-n", "ΔE/data mean"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, sum)
		}
	}
	t.Logf("\n%s", sum)
}

// A bad --shift-l2 list is refused, naming the value, before any work.
func TestSymcheckShiftL2Bad(t *testing.T) {
	for _, xs := range [][]float64{nil, {-1e-3}, {math.NaN()}, {1e-3, 0}, {math.Inf(1)}} {
		err := CheckShiftL2(xs)
		if err == nil || !strings.Contains(err.Error(), "--shift-l2") {
			t.Errorf("%v: error %v", xs, err)
		}
		cfg := DefaultConfig("pendulum")
		cfg.ShiftL2 = xs
		if _, err := Magnitudes(context.Background(), nil, nil, cfg, nil); err == nil || !strings.Contains(err.Error(), "--shift-l2") {
			t.Errorf("Magnitudes(%v): error %v", xs, err)
		}
	}
	if err := CheckShiftL2([]float64{2.6e-4, 1e-3, 1e-2}); err != nil {
		t.Error(err)
	}
	// Run itself refuses a list rather than ignoring it.
	cfg := DefaultConfig("pendulum")
	cfg.ShiftL2 = []float64{1e-3}
	if _, err := Run(context.Background(), nil, nil, cfg, nil); err == nil || !strings.Contains(err.Error(), "Magnitudes") {
		t.Errorf("Run with shift-l2: %v", err)
	}
}
