//go:build cgo && !nomujoco

package panda

import (
	"math"
	"math/rand/v2"
	"testing"

	mj "github.com/koopq/koopq/internal/mujoco"
)

func newDoor(t *testing.T) *Env {
	t.Helper()
	e, err := newEnv(DoorName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestDoorModel pins the compiled Door model and the observation layout:
// joint ranges and the latch spring from door_lock.xml, the door's mass,
// and, for the door at x = −0.12, y = −0.35, yaw −π/2, the handle site at
// root + Rz(−π)·(0.3, −0.15) + (0, 0, −0.025) = (−0.42, −0.2, 1.075) and
// the hinge post at (−0.72, −0.35).
func TestDoorModel(t *testing.T) {
	e := newDoor(t)
	m := e.model
	rg, jq := m.JntRange(), m.JntQposAdr()
	hinge, latch := m.ID(mj.ObjJoint, "door_hinge"), m.ID(mj.ObjJoint, "latch_joint")
	if jq[hinge] != hingeQ || jq[latch] != latchQ {
		t.Fatalf("hinge and latch at qpos %d and %d, want %d and %d", jq[hinge], jq[latch], hingeQ, latchQ)
	}
	if rg[2*hinge] != 0 || rg[2*hinge+1] != 0.35 || rg[2*latch] != -1.57 || rg[2*latch+1] != 0.1 {
		t.Errorf("hinge range %v, latch range %v; want [0, 0.35] and [-1.57, 0.1]", rg[2*hinge:2*hinge+2], rg[2*latch:2*latch+2])
	}
	if k := m.JntStiffness(); k[latch] != 1 || k[hinge] != 0 {
		t.Errorf("stiffness hinge %v latch %v, want 0 and 1", k[hinge], k[latch])
	}
	if d := m.DofDamping(); d[hingeQ] != 0.1 || d[latchQ] != 0 {
		t.Errorf("damping hinge %v latch %v, want 0.1 and 0", d[hingeQ], d[latchQ])
	}
	if mass := m.BodyMass()[m.ID(mj.ObjBody, "door")]; mass != 2.43455 {
		t.Errorf("door mass %v, want 2.43455", mass)
	}
	obs, err := e.resetDoor(InitQpos, [3]float64{-0.12, -0.35, 1.1}, -math.Pi/2)
	if err != nil {
		t.Fatal(err)
	}
	want := [3]float64{-0.42, -0.2, 1.075}
	for i := range 3 {
		if math.Abs(obs[obsHandlePos+i]-want[i]) > 2e-3 {
			t.Errorf("handle site %v, want %v", obs[obsHandlePos:obsHandlePos+3], want)
		}
		if obs[obsHandleToEEF+i] != obs[obsHandlePos+i]-obs[ObsEEFPos+i] || obs[obsDoorToEEF+i] != obs[obsDoorPos+i]-obs[ObsEEFPos+i] {
			t.Errorf("relative vectors are not object − eef at %d", i)
		}
	}
	gx := e.data.GeomXPos()
	if g := m.ID(mj.ObjGeom, "r_frame"); math.Abs(gx[3*g]+0.72) > 2e-3 || math.Abs(gx[3*g+1]+0.35) > 2e-3 {
		t.Errorf("hinge post at %v, want (-0.72, -0.35)", gx[3*g:3*g+3])
	}
	if len(obs) != doorObsDim || obs[obsHingeQpos] != 0 || obs[obsHandleQpos] != 0 {
		t.Errorf("obs length %d, hinge %v, handle %v", len(obs), obs[obsHingeQpos], obs[obsHandleQpos])
	}
	if _, err := e.ResetTo(InitQpos, [3]float64{}, [4]float64{1, 0, 0, 0}); err == nil {
		t.Error("ResetTo placed a cube in the Door scene")
	}
	if _, err := e.resetDoor(InitQpos, [3]float64{-0.12, -0.35, 1.1}, 0); err == nil {
		t.Error("a yaw outside the sampler's range was accepted")
	}
}

// swing starts the door with hinge velocity w (rad/s), the arm idle, and
// before every step puts the latch back at latch (rad) at rest, as a hand
// holding the handle would; it returns the largest hinge angle within 10
// steps (0.5 s).
func swing(t *testing.T, e *Env, w, latch float64) float64 {
	t.Helper()
	if _, err := e.resetDoor(InitQpos, [3]float64{-0.12, -0.35, 1.1}, -math.Pi/2-0.1); err != nil {
		t.Fatal(err)
	}
	s := e.State()
	s[e.lay.nq+hingeQ] = w
	if err := e.SetState(s); err != nil {
		t.Fatal(err)
	}
	top := 0.0
	for range 10 {
		s := e.State()
		s[latchQ], s[e.lay.nq+latchQ] = latch, 0
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		obs, _, _, _, err := e.Step(make([]float64, doorActDim))
		if err != nil {
			t.Fatal(err)
		}
		top = math.Max(top, obs[obsHingeQpos])
	}
	return top
}

// TestDoorLatch: with the handle at rest the latch catches on the frame
// and a 2 rad/s push moves the door by less than 0.05 rad; with the handle
// held turned (−1.5 rad) the same push opens it beyond the success angle.
func TestDoorLatch(t *testing.T) {
	e := newDoor(t)
	if top := swing(t, e, 2, 0); top > 0.05 {
		t.Errorf("latched door swung to %.3f rad", top)
	}
	if top := swing(t, e, 2, -1.5); top <= doorOpenAngle {
		t.Errorf("unlatched door reached only %.3f rad", top)
	}
}

// TestDoorDeterministicAndState: one seed gives bitwise one rollout, and
// SetState(State()) continues bitwise (the door's placement included).
func TestDoorDeterministicAndState(t *testing.T) {
	e1, e2 := newDoor(t), newDoor(t)
	a, b := randomRollout(t, e1, 4, 30), randomRollout(t, e2, 4, 30)
	for i := range a {
		if !sameBits(a[i], b[i]) {
			t.Fatalf("step %d differs between two environments with one seed", i)
		}
	}
	s := e1.State()
	e2.Reset(rand.New(rand.NewPCG(99, 1))) // another placement
	if err := e2.SetState(s); err != nil {
		t.Fatal(err)
	}
	for k := range 15 {
		act := []float64{0.3, -0.5, 0.2, 0.1, -0.2, 0.3, 1}
		o1, r1, _, _, err1 := e1.Step(act)
		o2, r2, _, _, err2 := e2.Step(act)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !sameBits(append(o1, r1), append(o2, r2)) {
			t.Fatalf("step %d after SetState differs", k)
		}
	}
	o1 := e1.Reset(rand.New(rand.NewPCG(8, 8)))
	s1 := e1.State()
	if o2 := e1.Reset(rand.New(rand.NewPCG(8, 8))); !sameBits(o1, o2) || !sameBits(s1, e1.State()) {
		t.Error("two resets with one seed differ")
	}
}

// TestDoorRandomActionsRarelySucceed: uniform random actions open the door
// in at most 1 of 10 full episodes (measured over 50 with 7-D
// OSC_POSE actions: 0/50, the largest handle turn 0.82 rad).
func TestDoorRandomActionsRarelySucceed(t *testing.T) {
	e := newDoor(t)
	wins := 0
	for s := range 10 {
		rng := rand.New(rand.NewPCG(uint64(s), 7))
		e.Reset(rng)
		for range MaxEpisodeSteps {
			a := make([]float64, doorActDim)
			for i := range a {
				a[i] = 2*rng.Float64() - 1
			}
			if _, _, _, _, err := e.Step(a); err != nil {
				t.Fatal(err)
			}
			if e.Success() {
				wins++
				break
			}
		}
	}
	t.Logf("random actions: %d/10 episodes opened the door", wins)
	if wins > 1 {
		t.Errorf("random actions opened the door in %d/10 episodes", wins)
	}
}

// TestScriptedDoorSucceeds: the scripted controller opens the door (and it
// stays open 20 steps later) in at least 45 of 50 randomized episodes
// (measured: 50/50, slowest first success at step 75).
func TestScriptedDoorSucceeds(t *testing.T) {
	scriptedSucceeds(t, newDoor(t), ScriptedDoor, "Door")
}
