package stats

import (
	"math"
	"testing"
)

func TestSpearman(t *testing.T) {
	// 1 − 6Σd²/(n(n²−1)) with d = (0, 1, −1, 0): 1 − 12/60 = 0.8.
	r, err := Spearman([]float64{1, 2, 3, 4}, []float64{10, 30, 20, 40})
	if err != nil || math.Abs(r-0.8) > 1e-12 {
		t.Errorf("rho %v (%v), want 0.8", r, err)
	}
	r, _ = Spearman([]float64{1, 2, 3}, []float64{3, 2, 1})
	if math.Abs(r+1) > 1e-12 {
		t.Errorf("reversed: rho %v, want −1", r)
	}
	// Ties get average ranks: x ranks (1, 2.5, 2.5, 4), y ranks (1, 2, 3, 4):
	// Pearson of those = 0.9486832980505138 (√0.9).
	r, _ = Spearman([]float64{1, 5, 5, 9}, []float64{1, 2, 3, 4})
	if math.Abs(r-math.Sqrt(0.9)) > 1e-12 {
		t.Errorf("ties: rho %v, want √0.9", r)
	}
	if _, err := Spearman([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := Spearman([]float64{1, 1}, []float64{1, 2}); err == nil {
		t.Error("constant series: no error")
	}
}

// TInterval is mean ± t·s/√n: for (1, 2, 6), mean 3, s = √7, t_{0.975, 2} =
// 4.302652729911275 (scipy.stats.t.ppf(0.975, 2)).
func TestTInterval(t *testing.T) {
	lo, hi := TInterval([]float64{1, 2, 6}, 0.95)
	h := 4.302652729911275 * math.Sqrt(7) / math.Sqrt(3)
	if math.Abs(lo-(3-h)) > 1e-9 || math.Abs(hi-(3+h)) > 1e-9 {
		t.Errorf("[%v, %v], want 3 ± %v", lo, hi, h)
	}
	if lo, _ := TInterval([]float64{1}, 0.95); !math.IsNaN(lo) {
		t.Errorf("one value: %v, want NaN", lo)
	}
}
