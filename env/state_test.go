package env

import (
	"math"
	"strings"
	"testing"
)

func TestCheckState(t *testing.T) {
	ok := []float64{0.5, -1e300, 7}
	steps, err := CheckState("t", ok, 3, 10)
	if err != nil || steps != 7 {
		t.Fatalf("valid state: steps %d, err %v; want 7, nil", steps, err)
	}
	if steps, err := CheckState("t", []float64{1, 10}, 2, 10); err != nil || steps != 10 {
		t.Errorf("steps at the bound: %d, %v; want 10, nil", steps, err)
	}
	if steps, err := CheckState("t", []float64{1, 0}, 2, 10); err != nil || steps != 0 {
		t.Errorf("zero steps: %d, %v; want 0, nil", steps, err)
	}
	cases := []struct {
		name  string
		state []float64
		want  int
		msg   string
	}{
		{"short", ok[:2], 3, "state has length 2, want 3"},
		{"long", append(ok[:3:3], 1), 3, "state has length 4, want 3"},
		{"empty", nil, 0, "state has length 0, want 0"},
		{"NaN", []float64{math.NaN(), 1}, 2, "state[0] = NaN is not finite"},
		{"+Inf steps", []float64{1, math.Inf(1)}, 2, "state[1] = +Inf is not finite"},
		{"-Inf", []float64{math.Inf(-1), 1}, 2, "state[0] = -Inf is not finite"},
		{"negative steps", []float64{1, -1}, 2, "state[1] = -1 is not a valid elapsed step count (an integer in [0, 10])"},
		{"fractional steps", []float64{1, 2.5}, 2, "state[1] = 2.5 is not a valid elapsed step count"},
		{"steps above the bound", []float64{1, 11}, 2, "state[1] = 11 is not a valid elapsed step count"},
		{"huge steps", []float64{1, 1e300}, 2, "is not a valid elapsed step count"},
	}
	for _, c := range cases {
		_, err := CheckState("env/x walker", c.state, c.want, 10)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "env/x walker: ") {
			t.Errorf("%s: error %v, want one starting with the env's name and containing %q", c.name, err, c.msg)
		}
	}
}
