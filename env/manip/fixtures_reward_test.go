package manip

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestToleranceGaussian(t *testing.T) {
	s := math.Sqrt(-2 * math.Log(0.1))
	cases := []struct{ x, lo, hi, margin, want float64 }{
		{0.03, 0, 0.05, 0.2, 1},                          // inside
		{0.25, 0, 0.05, 0.2, 0.1},                        // one margin outside: 0.1
		{0.15, 0, 0.05, 0.2, math.Exp(-0.5 * s * s / 4)}, // half a margin: 0.1^(1/4)
		{-0.1, 0, 0.05, 0.1, 0.1},                        // below the lower bound
		{0.06, 0, 0.05, 0, 0},                            // zero margin: a step
	}
	for _, c := range cases {
		if got := ToleranceGaussian(c.x, c.lo, c.hi, c.margin); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ToleranceGaussian(%v, [%v, %v], %v) = %v, want %v", c.x, c.lo, c.hi, c.margin, got, c.want)
		}
	}
	if got := ToleranceGaussian(0.15, 0, 0.05, 0.2); math.Abs(got-math.Pow(0.1, 0.25)) > 1e-12 {
		t.Errorf("half-margin value %v, want 0.1^0.25", got)
	}
}

// TestDoorCloseReward: 10 with the handle closer than 0.05 to the goal,
// success up to 0.08 (reward 3·hand + 6·in_place there, below 9), and
// 3·hand_in_place + 6·in_place far away.
func TestDoorCloseReward(t *testing.T) {
	goal := [3]float64{0.25, 0.7, 0.15}
	base := [3]float64{0.05, 0.9, 0.15}
	handInit := DoorClose().HandInit
	if r, ok := DoorCloseReward(handInit, [3]float64{0.25, 0.66, 0.15}, goal, base, handInit); r != 10 || !ok {
		t.Errorf("handle 0.04 from the goal: %v %v, want 10, success", r, ok)
	}
	r, ok := DoorCloseReward(handInit, [3]float64{0.25, 0.63, 0.15}, goal, base, handInit)
	inPlace := ToleranceGaussian(0.07, 0, 0.05, dist3(base, goal))
	hand := ToleranceGaussian(dist3(handInit, goal), 0, 0.0125, dist3(handInit, [3]float64{0.25, 0.63, 0.15})+0.1)
	if !ok || math.Abs(r-(3*hand+6*inPlace)) > 1e-12 || r >= 9 {
		t.Errorf("handle 0.07 from the goal: %v %v, want %v, success", r, ok, 3*hand+6*inPlace)
	}
	if _, ok := DoorCloseReward(handInit, [3]float64{0.25, 0.615, 0.15}, goal, base, handInit); ok {
		t.Error("handle 0.085 from the goal counted as a success")
	}
	// Tool centre on the goal, handle far: hand_in_place = 1.
	far := [3]float64{-0.2, 0.45, 0.15}
	r, _ = DoorCloseReward(goal, far, goal, base, handInit)
	if want := 3 + 6*ToleranceGaussian(dist3(far, goal), 0, 0.05, dist3(base, goal)); math.Abs(r-want) > 1e-12 {
		t.Errorf("tool centre on the goal: %v, want %v", r, want)
	}
}

// TestDrawerCloseReward: 10 within 0.055 of the goal (the success test),
// zero with the gripper effort at or below 0 elsewhere, and
// 10·hamacher(hamacher(reach, closed), in_place) otherwise.
func TestDrawerCloseReward(t *testing.T) {
	goal := [3]float64{0, 0.74, 0.09}
	objInit := [3]float64{0, 0.58, 0.14}
	g := GripperState{TCP: [3]float64{0, 0.6, 0.155}, TCPInit: [3]float64{0, 0.6, 0.155}, ObjInit: objInit}
	if r, ok := DrawerCloseReward(g, [3]float64{0, 0.73, 0.14}, goal, 0); r != 10 || !ok {
		t.Errorf("closed drawer (0.051 from the goal): %v %v, want 10, success", r, ok)
	}
	if r, ok := DrawerCloseReward(g, [3]float64{0, 0.7, 0.14}, goal, 0); r != 0 || ok {
		t.Errorf("0.064 from the goal, no grip effort: %v %v, want 0, no success", r, ok)
	}
	h := [3]float64{0, 0.65, 0.14}
	g.TCP = [3]float64{0, 0.652, 0.14}
	r, _ := DrawerCloseReward(g, h, goal, 0.5)
	reach := Hamacher(ToleranceGaussian(0.002, 0, 0.005, math.Abs(dist3(objInit, g.TCPInit)-0.005)), 0.5)
	in := Tolerance(dist3(h, goal), 0, 0.04, math.Abs(dist3(objInit, goal)-0.04))
	if want := 10 * Hamacher(reach, in); math.Abs(r-want) > 1e-12 || r <= 0 {
		t.Errorf("tool centre on the handle: %v, want %v > 0", r, want)
	}
}

// TestDrawerOpenReward: 5·(caging + opening), 10 with the hand on the
// handle at the goal; success within 0.03.
func TestDrawerOpenReward(t *testing.T) {
	goal := [3]float64{0, 0.54, 0.09}
	tcpInit := [3]float64{0, 0.6, 0.155}
	if r, ok := DrawerOpenReward(goal, goal, goal, tcpInit); r != 10 || !ok {
		t.Errorf("hand and handle at the goal: %v %v, want 10, success", r, ok)
	}
	h := [3]float64{0, 0.57, 0.09}
	r, ok := DrawerOpenReward(h, h, goal, tcpInit)
	if want := 5 * (1 + Tolerance(0.03, 0, 0.02, 0.2)); !ok || math.Abs(r-want) > 1e-12 {
		t.Errorf("fully open (0.03 from the goal): %v %v, want %v, success", r, ok, want)
	}
	closed := [3]float64{0, 0.73, 0.09}
	r, ok = DrawerOpenReward(tcpInit, closed, goal, tcpInit)
	// (handle − hand)·(3, 3, 1) = (0, 0.39, −0.065); the margin's
	// (goal + (0, 0.2, 0) − tcpInit)·(3, 3, 1) = (0, 0.42, −0.065).
	e, e0 := math.Hypot(0.39, 0.065), math.Hypot(0.42, 0.065)
	if want := 5 * (Tolerance(e, 0, 0.01, e0) + Tolerance(0.19, 0, 0.02, 0.2)); ok || math.Abs(r-want) > 1e-9 {
		t.Errorf("closed drawer, hand at its start: %v %v, want %v, no success", r, ok, want)
	}
}

// TestFixtureSample: the door and drawer tasks draw the base uniformly in
// their object range and put the goal at base + GoalOffset.
func TestFixtureSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, tk := range []Task{DoorClose(), DrawerClose(), DrawerOpen()} {
		lo, hi := [3]float64{1, 1, 1}, [3]float64{-1, -1, -1}
		for range 500 {
			obj, goal := tk.Sample(rng)
			for i := range 3 {
				if obj[i] < tk.ObjLow[i] || obj[i] > tk.ObjHigh[i] || goal[i] != obj[i]+tk.GoalOffset[i] ||
					goal[i] < tk.GoalLow[i] || goal[i] > tk.GoalHigh[i] {
					t.Fatalf("%s: obj %v goal %v", tk.Name, obj, goal)
				}
				lo[i], hi[i] = math.Min(lo[i], obj[i]), math.Max(hi[i], obj[i])
			}
		}
		for i := range 3 {
			if w := tk.ObjHigh[i] - tk.ObjLow[i]; hi[i]-lo[i] < 0.9*w {
				t.Errorf("%s: axis %d drawn over [%v, %v], want most of [%v, %v]", tk.Name, i, lo[i], hi[i], tk.ObjLow[i], tk.ObjHigh[i])
			}
		}
	}
	// Published constants (sawyer_door_close_v2.py, sawyer_drawer_*_v2.py).
	d, c, o := DoorClose(), DrawerClose(), DrawerOpen()
	if d.HandInit != [3]float64{-0.5, 0.6, 0.2} || d.ObjLow != [3]float64{0, 0.85, 0.15} || d.ObjHigh != [3]float64{0.1, 0.95, 0.15} ||
		d.GoalOffset != [3]float64{0.2, -0.2, 0} || d.GoalLow != [3]float64{0.2, 0.65, 0.1499} || d.GoalHigh != [3]float64{0.3, 0.75, 0.1501} {
		t.Errorf("door-close constants %+v", d)
	}
	for _, tk := range []Task{c, o} {
		if tk.HandInit != [3]float64{0, 0.6, 0.2} || tk.ObjLow != [3]float64{-0.1, 0.9, 0} || tk.ObjHigh != [3]float64{0.1, 0.9, 0} ||
			tk.GoalLow != tk.HandLow || tk.GoalHigh != tk.HandHigh || tk.HandLow != [3]float64{-0.5, 0.4, 0.05} {
			t.Errorf("%s constants %+v", tk.Name, tk)
		}
	}
	if c.GoalOffset != [3]float64{0, -0.16, 0.09} || o.GoalOffset != [3]float64{0, -0.36, 0.09} {
		t.Errorf("drawer goal offsets %v, %v", c.GoalOffset, o.GoalOffset)
	}
}
