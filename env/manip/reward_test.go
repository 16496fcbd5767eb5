package manip

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTolerance(t *testing.T) {
	cases := []struct{ x, lo, hi, margin, want float64 }{
		{0.03, 0, 0.05, 0.2, 1},               // inside
		{0.25, 0, 0.05, 0.2, 0.1},             // one margin outside: 0.1
		{0.15, 0, 0.05, 0.2, 1 / 3.25},        // half a margin: 1/((0.5·3)²+1)
		{-0.1, 0, 0.05, 0.1, 0.1},             // below the lower bound
		{0.06, 0, 0.05, 0, 0},                 // zero margin: a step
		{0.05, 0, 0.05, 0, 1},                 // bounds are inclusive
		{0.01, 0.015, 0.05, 0.02, 1 / 1.5625}, // 0.005 below lo, margin 0.02: 1/((0.25·3)²+1)
	}
	for _, c := range cases {
		if got := Tolerance(c.x, c.lo, c.hi, c.margin); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Tolerance(%v, [%v, %v], %v) = %v, want %v", c.x, c.lo, c.hi, c.margin, got, c.want)
		}
	}
	// Both sigmoids: exactly 1 inside, exactly 0 outside with a margin <= 0
	// (a negative one included), NaN for a NaN x.
	for name, f := range map[string]func(x, lo, hi, margin float64) float64{"Tolerance": Tolerance, "ToleranceGaussian": ToleranceGaussian} {
		if got := f(0.03, 0, 0.05, 0.2); got != 1 {
			t.Errorf("%s inside = %v, want exactly 1", name, got)
		}
		if got := f(0.06, 0, 0.05, -0.1); got != 0 {
			t.Errorf("%s outside with a negative margin = %v, want exactly 0", name, got)
		}
		if got := f(-0.01, 0, 0.05, 0); got != 0 {
			t.Errorf("%s below with zero margin = %v, want exactly 0", name, got)
		}
		if got := f(math.NaN(), 0, 0.05, 0.2); !math.IsNaN(got) {
			t.Errorf("%s(NaN) = %v, want NaN", name, got)
		}
	}
}

func TestHamacher(t *testing.T) {
	for _, c := range [][3]float64{{0, 0, 0}, {1, 1, 1}, {1, 0.3, 0.3}, {0.5, 0.5, 1.0 / 3}, {0, 0.7, 0}} {
		if got := Hamacher(c[0], c[1]); math.Abs(got-c[2]) > 1e-12 {
			t.Errorf("Hamacher(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
	}
}

// TestPushReward checks push-v2's reward at its landmarks: 10 inside the
// target radius (success at <= 0.05 m), the grasp bonus 1 + 4·caging +
// 5·in_place with the tool centre within 0.02 m of the puck, and 2·caging
// otherwise, always within [0, 10].
func TestPushReward(t *testing.T) {
	obj := [3]float64{0, 0.65, 0.02}
	goal := [3]float64{0.05, 0.85, 0.02}
	far := GripperState{LeftPad: [3]float64{0, 0.65, 0.2}, RightPad: [3]float64{0, 0.55, 0.2},
		TCP: [3]float64{0, 0.6, 0.155}, ObjInit: obj, TCPInit: [3]float64{0, 0.6, 0.155}}
	r, ok := PushReward(far, obj, goal, 1, 0)
	if ok || r <= 0 || r >= 2 {
		t.Errorf("far hand: reward %v success %v; want in (0, 2), false", r, ok)
	}
	// Gripper around the puck: pads 0.025 m either side in y, tool centre at
	// the puck's centre; closing hard.
	at := GripperState{LeftPad: [3]float64{0, 0.675, 0.02}, RightPad: [3]float64{0, 0.625, 0.02},
		TCP: obj, ObjInit: obj, TCPInit: far.TCPInit}
	cage := CagingReward(at, obj, 1, 0.015, 0.05, 0.005)
	if cage != 1 {
		t.Errorf("caging reward with the puck between the pads, closing: %v, want 1", cage)
	}
	inPlace := Tolerance(dist3(obj, goal), 0, PushTargetRadius, dist3(obj, goal))
	r, ok = PushReward(at, obj, goal, 0.5, 1)
	if want := 1 + 4*cage + 5*inPlace; ok || math.Abs(r-want) > 1e-12 {
		t.Errorf("grasped at the start: reward %v success %v, want %v false", r, ok, want)
	}
	// Exactly 0.05 m (in z, where the difference is exact): a success
	// (<=) but not yet the reward of 10 (<), as in MetaWorld.
	g0 := [3]float64{goal[0], goal[1], 0}
	if r, ok := PushReward(far, [3]float64{goal[0], goal[1], 0.05}, g0, 1, 0); !ok || r == 10 {
		t.Errorf("puck exactly 0.05 m from the goal: reward %v success %v, want < 10 and true", r, ok)
	}
	if r, ok := PushReward(far, [3]float64{goal[0], goal[1] - 0.049, goal[2]}, goal, 1, -1); r != 10 || !ok {
		t.Errorf("puck 0.049 m from the goal: reward %v success %v, want 10 true", r, ok)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	for range 10000 {
		g := GripperState{
			LeftPad:  [3]float64{u(-0.2, 0.2), u(0.5, 0.9), u(0, 0.3)},
			RightPad: [3]float64{u(-0.2, 0.2), u(0.5, 0.9), u(0, 0.3)},
			TCP:      [3]float64{u(-0.2, 0.2), u(0.5, 0.9), u(0, 0.3)},
			ObjInit:  obj, TCPInit: far.TCPInit,
		}
		o := [3]float64{u(-0.2, 0.2), u(0.5, 0.9), u(0, 0.1)}
		if r, _ := PushReward(g, o, goal, u(0, 1), u(-1, 1)); r < 0 || r > 10 || math.IsNaN(r) {
			t.Fatalf("reward %v out of [0, 10]", r)
		}
	}
}

// TestSampleRanges: Sample draws within push-v2's ranges, rejects pairs
// closer than 0.15 m in x-y, and is a function of the generator's state.
func TestSampleRanges(t *testing.T) {
	tk := Push()
	rng := rand.New(rand.NewPCG(5, 5))
	for range 10000 {
		o, g := tk.Sample(rng)
		for i := range 3 {
			if o[i] < tk.ObjLow[i] || o[i] > tk.ObjHigh[i] || g[i] < tk.GoalLow[i] || g[i] > tk.GoalHigh[i] {
				t.Fatalf("sample %v %v out of range", o, g)
			}
		}
		if math.Hypot(o[0]-g[0], o[1]-g[1]) < 0.15 {
			t.Fatalf("sample %v %v closer than 0.15", o, g)
		}
	}
	a, b := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	for range 100 {
		o1, g1 := tk.Sample(a)
		o2, g2 := tk.Sample(b)
		if o1 != o2 || g1 != g2 {
			t.Fatal("same generator state, different samples")
		}
	}
}
