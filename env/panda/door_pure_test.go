package panda

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSampleDoorRange: placements stay inside door.py's ranges and cover
// them.
func TestSampleDoorRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for range 2000 {
		p, yaw := sampleDoor(rng)
		v := [3]float64{p[0] - (-0.2), p[1] - (-0.35), yaw}
		if p[2] != 1.1 {
			t.Fatalf("door root z %v, want table top 0.8 + bottom_site depth 0.3", p[2])
		}
		for i := range 3 {
			lo[i], hi[i] = math.Min(lo[i], v[i]), math.Max(hi[i], v[i])
		}
	}
	want := [3][2]float64{{0.07, 0.09}, {-0.01, 0.01}, {-math.Pi/2 - 0.25, -math.Pi / 2}}
	for i := range 3 {
		if lo[i] < want[i][0] || hi[i] > want[i][1] || lo[i] > want[i][0]+0.002 || hi[i] < want[i][1]-0.002 {
			t.Errorf("coordinate %d drawn in [%v, %v], want to fill %v", i, lo[i], hi[i], want[i])
		}
	}
	if err := checkDoorYaw(-1.0); err == nil {
		t.Error("a yaw outside the range was accepted")
	}
}

// TestDoorReward checks door.py's shaped reward at hand-computed points.
func TestDoorReward(t *testing.T) {
	h := [3]float64{0.1, -0.2, 1.0}
	if r := doorReward(h, h, 0, 0); r != 0.25 {
		t.Errorf("eef on the handle, nothing turned: %v, want 0.25", r)
	}
	far := [3]float64{0.1, -0.2, 1.1} // 0.1 m away: 0.25·(1 − tanh 1)
	if r, want := doorReward(far, h, 0, -math.Pi/4), 0.25*(1-math.Tanh(1))+0.125; math.Abs(r-want) > 1e-15 {
		t.Errorf("0.1 m away, handle turned π/4: %v, want %v", r, want)
	}
	if r := doorReward(h, h, 0.2, -3); r != 0.5 {
		t.Errorf("rotation term is clipped at 0.25: total %v, want 0.5", r)
	}
	if r := doorReward(far, h, 0.31, 0); r != 1 || !doorSuccess(0.31) || doorSuccess(0.3) {
		t.Errorf("open door: reward %v, want 1 (success above 0.3 rad only)", r)
	}
}

// TestDoorSceneFacts pins the generated MJCF to door_lock.xml's numbers
// and checks that robosuite-door is registered with its scripted controller.
func TestDoorSceneFacts(t *testing.T) {
	x := doorSceneMJCF(DoorName, [3]float64{-0.12, -0.35, 1.1})
	for _, want := range []string{
		`name="table" pos="-0.2 -0.35 0.775"`, `size="0.4 0.15 0.025"`,
		`name="r_frame" type="cylinder" size="0.05 0.27" pos="0.6 0 0"`,
		`name="door_box" type="box" size="0.2 0.05 0.25"`,
		`name="door_hinge" type="hinge" pos="0.3 0 0" axis="0 0 1" limited="true" range="0 0.35" damping="0.1" frictionloss="0"`,
		`name="latch_joint" type="hinge" pos="0 0 0" axis="0 1 0" limited="true" range="-1.57 0.1" frictionloss="0.1" damping="0" springref="0" stiffness="1"`,
		`name="handle" type="box" size="0.1 0.02 0.02" pos="0.1 -0.15 0"`,
		`name="door_handle" pos="0.15 -0.15 0"`,
		`name="latch" type="capsule" size="0.04 0.07"`,
		`mocap="true"`, `quat="0.707107 0 0 0.707107"`,
	} {
		if !strings.Contains(x, want) {
			t.Errorf("door scene lacks %s", want)
		}
	}
	if !strings.Contains(sceneMJCF(LiftName, [3]float64{}), `name="right_gripper" pos="0 0 -0.018" quat="0.707107 0 0 0.707107"`) {
		t.Error("the Lift gripper lacks RoboSuite's quarter turn about its axis")
	}
	if !slices.Contains(Names(), DoorName) {
		t.Error("robosuite-door is not registered")
	}
	if p, err := ScriptedPolicy(DoorName); err != nil || p == nil {
		t.Errorf("no scripted Door controller: %v", err)
	}
}

// TestRotateBy: OSC_POSE's goal rotation turns a matrix by an axis-angle
// vector (a quarter turn about z maps x to y), and rotVec inverts it.
func TestRotateBy(t *testing.T) {
	id := [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	r := rotateBy([3]float64{0, 0, math.Pi / 2}, id)
	if math.Abs(r[0]) > 1e-12 || math.Abs(r[3]-1) > 1e-12 || math.Abs(r[8]-1) > 1e-12 {
		t.Errorf("quarter turn about z: %v", r)
	}
	w := [3]float64{0.3, -0.2, 0.4}
	got := rotVec(rotateBy(w, id))
	for i := range w {
		if math.Abs(got[i]-w[i]) > 1e-9 {
			t.Fatalf("rotVec(rotateBy(%v)) = %v", w, got)
		}
	}
	if rotateBy([3]float64{}, r) != r {
		t.Error("a zero rotation changed the matrix")
	}
}
