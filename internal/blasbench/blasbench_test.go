package blasbench

import "testing"

// TestMedian: odd and even counts, ratios, empty input.
func TestMedian(t *testing.T) {
	for _, c := range []struct {
		num, den []float64
		want     float64
	}{
		{[]float64{3, 1, 2}, nil, 2},
		{[]float64{4, 1, 3, 2}, nil, 2.5},
		{[]float64{2, 9, 4}, []float64{1, 3, 1}, 3},
		{nil, nil, 0},
	} {
		if got := Median(c.num, c.den); got != c.want {
			t.Errorf("Median(%v, %v) = %v, want %v", c.num, c.den, got, c.want)
		}
	}
}

// TestConfigsUse: every listed arm can be switched to, and the previous
// configuration is back after the test's cleanup.
func TestConfigsUse(t *testing.T) {
	cs := Configs()
	if len(cs) == 0 {
		t.Skip("no cgo GEMM backend in this build")
	}
	for _, c := range cs {
		t.Run(c, func(t *testing.T) { Use(t, c) })
	}
}
