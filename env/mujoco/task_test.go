package mujoco

import (
	"math"
	"testing"
)

// Rewards on hand-computed cases (pure Go: runs in the nomujoco build too).
func TestRewardHandComputed(t *testing.T) {
	cases := []struct {
		env             string
		xBefore, xAfter float64
		dt              float64
		action, cfrc    []float64
		want            float64
	}{
		// v = 0.008/0.008 = 1; 1 + 1 - 1e-3·(0.25+1+0.09)
		{"hopper", 0.1, 0.108, 0.008, []float64{0.5, -1, 0.3}, nil, 1.99866},
		// v = -0.016/0.008 = -2; -2 + 1 - 1e-3·6·0.04
		{"walker2d", 1, 0.984, 0.008, []float64{0.2, 0.2, 0.2, -0.2, -0.2, -0.2}, nil, -1.00024},
		// v = 0.05/0.05 = 1; no healthy reward; 1 - 0.1·6·0.25
		{"halfcheetah", 0, 0.05, 0.05, []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, nil, 0.85},
		// v = 2; 2 + 1 - 0.5·8·0.25 - 5e-4·(1 + 0.25 + 0) (contact forces clipped to ±1)
		{"ant", 1, 1.1, 0.05, []float64{0.5, 0.5, 0.5, 0.5, -0.5, -0.5, -0.5, -0.5}, []float64{2, -0.5, 0}, 1.999375},
	}
	for _, c := range cases {
		got := tasks[c.env].reward(c.xBefore, c.xAfter, c.dt, c.action, c.cfrc)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s reward %.15g, want %.15g", c.env, got, c.want)
		}
	}
}

// Termination rules on hand-built states at and around every boundary.
func TestHealthyHandComputed(t *testing.T) {
	h6 := func(z, ang float64, extra ...float64) ([]float64, []float64) {
		q := []float64{0, z, ang, 0, 0, 0}
		v := make([]float64, 6)
		if len(extra) == 2 {
			q[3], v[4] = extra[0], extra[1]
		}
		return q, v
	}
	type tc struct {
		name string
		f    func([]float64, []float64) bool
		qpos []float64
		qvel []float64
		want bool
	}
	var cases []tc
	add := func(name string, f func([]float64, []float64) bool, want bool, q, v []float64) {
		cases = append(cases, tc{name, f, q, v, want})
	}
	q, v := h6(1.25, 0)
	add("hopper upright", hopperHealthy, true, q, v)
	q, v = h6(0.7, 0)
	add("hopper z = 0.7 (strict)", hopperHealthy, false, q, v)
	q, v = h6(0.7000001, 0.1999999)
	add("hopper just inside", hopperHealthy, true, q, v)
	q, v = h6(1.25, 0.2)
	add("hopper angle = 0.2", hopperHealthy, false, q, v)
	q, v = h6(1.25, -0.2)
	add("hopper angle = -0.2", hopperHealthy, false, q, v)
	q, v = h6(1.25, 0, 100, 0)
	add("hopper joint = 100", hopperHealthy, false, q, v)
	q, v = h6(1.25, 0, 99.9, -99.9)
	add("hopper state 99.9", hopperHealthy, true, q, v)
	q, v = h6(1.25, 0, 0, -100)
	add("hopper qvel = -100", hopperHealthy, false, q, v)
	q, v = h6(math.NaN(), 0)
	add("hopper NaN z", hopperHealthy, false, q, v)
	q, v = h6(1000, 0)
	add("hopper z huge but < inf (rootz is not range-checked)", hopperHealthy, true, q, v)
	q, v = h6(1.25, 0)
	v[0] = 500 // qvel[0] (x velocity) is range-checked too: state_vector()[2:] covers all of qvel
	add("hopper x velocity 500", hopperHealthy, false, q, v)

	w := func(z, ang float64) []float64 { return []float64{0, z, ang, 0, 0, 0, 0, 0, 0} }
	add("walker upright", walkerHealthy, true, w(1.25, 0), nil)
	add("walker z = 0.8", walkerHealthy, false, w(0.8, 0), nil)
	add("walker z = 2.0", walkerHealthy, false, w(2.0, 0), nil)
	add("walker z 1.999", walkerHealthy, true, w(1.999, 0.999), nil)
	add("walker angle = 1", walkerHealthy, false, w(1.25, 1), nil)
	add("walker angle = -1", walkerHealthy, false, w(1.25, -1), nil)

	a := func(z float64) []float64 { q := make([]float64, 15); q[2], q[3] = z, 1; return q }
	add("ant z 0.75", antHealthy, true, a(0.75), make([]float64, 14))
	add("ant z = 0.2 (inclusive)", antHealthy, true, a(0.2), make([]float64, 14))
	add("ant z = 1.0 (inclusive)", antHealthy, true, a(1.0), make([]float64, 14))
	add("ant z 0.1999", antHealthy, false, a(0.1999), make([]float64, 14))
	add("ant z 1.0001", antHealthy, false, a(1.0001), make([]float64, 14))
	nanv := make([]float64, 14)
	nanv[7] = math.NaN()
	add("ant NaN qvel", antHealthy, false, a(0.75), nanv)
	infq := a(0.75)
	infq[0] = math.Inf(1)
	add("ant Inf x", antHealthy, false, infq, make([]float64, 14))

	for _, c := range cases {
		if got := c.f(c.qpos, c.qvel); got != c.want {
			t.Errorf("%s: healthy = %v, want %v", c.name, got, c.want)
		}
	}
	if tasks["halfcheetah"].isHealthy != nil {
		t.Error("halfcheetah must never terminate")
	}
}

func TestObsDims(t *testing.T) {
	want := map[string]int{"hopper": 11, "walker2d": 17, "halfcheetah": 17, "ant": 111}
	dims := map[string][3]int{"hopper": {6, 6, 5}, "walker2d": {9, 9, 8}, "halfcheetah": {9, 9, 8}, "ant": {15, 14, 14}}
	for _, n := range Names() {
		d := dims[n]
		if got := tasks[n].obsDim(d[0], d[1], d[2]); got != want[n] {
			t.Errorf("%s obs dim %d, want %d", n, got, want[n])
		}
	}
}

// The legacy inertia formula by hand for Hopper's torso: a capsule r = 0.05,
// L = 0.4, density 1000 → m = 1000 π 0.05² (0.4 + 0.05).
func TestLegacyInertialByHand(t *testing.T) {
	in := legacyInertial(Hopper().Torso, true)
	m := 1000 * math.Pi * 0.0025 * 0.45
	if math.Abs(in.mass-m) > 1e-12 {
		t.Errorf("mass %v, want %v", in.mass, m)
	}
	iax := m * 0.0025 / 2
	iperp := m * (3*0.0025 + 0.45*0.45) / 12
	want := [6]float64{iperp, iperp, iax, 0, 0, 0}
	for i := range want {
		if math.Abs(in.full[i]-want[i]) > 1e-12 {
			t.Errorf("inertia %v, want %v", in.full, want)
			break
		}
	}
}
