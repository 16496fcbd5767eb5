//go:build cgo && !nomujoco

package panda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/env"
	mj "github.com/koopq/koopq/internal/mujoco"
)

func newLift(t *testing.T) *Env {
	t.Helper()
	e, err := New(LiftName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// dhFrames computes the Panda's frames 1 … 7 and the flange from Franka's
// published modified (Craig) DH parameters, independently of the MJCF:
// T_i = RotX(α_{i−1}) TransX(a_{i−1}) RotZ(θ_i) TransZ(d_i). It returns
// each frame's origin and z axis in the base frame.
func dhFrames(q [7]float64) (org, z [8][3]float64) {
	a := [8]float64{0, 0, 0, 0.0825, -0.0825, 0, 0.088, 0}
	d := [8]float64{0.333, 0, 0.316, 0, 0.384, 0, 0, 0.107}
	al := [8]float64{0, -math.Pi / 2, math.Pi / 2, math.Pi / 2, -math.Pi / 2, math.Pi / 2, math.Pi / 2, 0}
	R := [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	var p [3]float64
	for i := range 8 {
		th := 0.0
		if i < 7 {
			th = q[i]
		}
		ca, sa, ct, st := math.Cos(al[i]), math.Sin(al[i]), math.Cos(th), math.Sin(th)
		// Local transform rotation and translation.
		L := [3][3]float64{{ct, -st, 0}, {st * ca, ct * ca, -sa}, {st * sa, ct * sa, ca}}
		t := [3]float64{a[i], -sa * d[i], ca * d[i]}
		for r := range 3 {
			p[r] += R[r][0]*t[0] + R[r][1]*t[1] + R[r][2]*t[2]
		}
		var nr [3][3]float64
		for r := range 3 {
			for c := range 3 {
				nr[r][c] = R[r][0]*L[0][c] + R[r][1]*L[1][c] + R[r][2]*L[2][c]
			}
		}
		R = nr
		org[i] = p
		z[i] = [3]float64{R[0][2], R[1][2], R[2][2]}
	}
	return org, z
}

// TestForwardKinematicsMatchesDH compares the compiled arm's link frames
// with Franka's DH parameters at the zero pose, RoboSuite's initial pose
// and random poses within the joint ranges.
func TestForwardKinematicsMatchesDH(t *testing.T) {
	m, err := mj.LoadXML(sceneMJCF("t", [3]float64{0.3, 0.3, 0.9}))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := mj.NewData(m)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	poses := [][7]float64{{}, InitQpos}
	rng := rand.New(rand.NewPCG(7, 8))
	arm := PandaArm()
	for range 5 {
		var q [7]float64
		for i, l := range arm {
			q[i] = l.Range[0] + (l.Range[1]-l.Range[0])*rng.Float64()
		}
		poses = append(poses, q)
	}
	names := []string{"link1", "link2", "link3", "link4", "link5", "link6", "link7", "right_hand"}
	for _, q := range poses {
		copy(d.QPos(), q[:])
		if err := d.Forward(); err != nil {
			t.Fatal(err)
		}
		org, z := dhFrames(q)
		xpos, xquat := d.XPos(), d.XQuat()
		for i, name := range names {
			b := m.ID(mj.ObjBody, name)
			got := [3]float64{xpos[3*b] - BaseX, xpos[3*b+1], xpos[3*b+2] - BaseZ}
			for k := range 3 {
				if math.Abs(got[k]-org[i][k]) > 2e-6 {
					t.Fatalf("q %.3f: %s at %.6f, DH gives %.6f", q, name, got, org[i])
				}
			}
			// z axis of the body frame from its quaternion.
			w, x, y, zz := xquat[4*b], xquat[4*b+1], xquat[4*b+2], xquat[4*b+3]
			gz := [3]float64{2 * (x*zz + w*y), 2 * (y*zz - w*x), 1 - 2*(x*x+y*y)}
			for k := range 3 {
				if math.Abs(gz[k]-z[i][k]) > 2e-6 {
					t.Fatalf("q %.3f: %s z axis %.6f, DH gives %.6f", q, name, gz, z[i])
				}
			}
		}
	}
}

// TestSceneFacts pins the compiled model to the published numbers.
func TestSceneFacts(t *testing.T) {
	e := newLift(t)
	m := e.model
	if m.Timestep() != 0.002 || Substeps*Timestep != 1.0/ControlFreq {
		t.Errorf("timestep %v × %d substeps, want 0.002 s × 25 = 0.05 s", m.Timestep(), Substeps)
	}
	franka := [7][2]float64{{-2.8973, 2.8973}, {-1.7628, 1.7628}, {-2.8973, 2.8973}, {-3.0718, -0.0698},
		{-2.8973, 2.8973}, {-0.0175, 3.7525}, {-2.8973, 2.8973}}
	rg, ctrl := m.JntRange(), m.ActuatorCtrlRange()
	tau := [7]float64{87, 87, 87, 87, 12, 12, 12}
	for i := range 7 {
		if rg[2*i] != franka[i][0] || rg[2*i+1] != franka[i][1] {
			t.Errorf("joint%d range [%v, %v], want %v", i+1, rg[2*i], rg[2*i+1], franka[i])
		}
		if ctrl[2*i] != -tau[i] || ctrl[2*i+1] != tau[i] {
			t.Errorf("joint%d torque range [%v, %v], want ±%v", i+1, ctrl[2*i], ctrl[2*i+1], tau[i])
		}
	}
	if rg[14] != 0 || rg[15] != 0.04 || rg[16] != -0.04 || rg[17] != 0 {
		t.Errorf("finger ranges %v, want [0, 0.04] and [-0.04, 0]", rg[14:18])
	}
	mass := m.BodyMass()
	for i, want := range []float64{3, 3, 2, 2, 2, 1.5, 0.5} {
		if b := m.ID(mj.ObjBody, PandaArm()[i].Name); mass[b] != want {
			t.Errorf("link%d mass %v, want %v", i+1, mass[b], want)
		}
	}
	if err := e.data.Forward(); err != nil {
		t.Fatal(err)
	}
	gx, size := e.data.GeomXPos(), m.GeomSize()
	tg := m.ID(mj.ObjGeom, "table_collision")
	if top := gx[3*tg+2] + size[3*tg+2]; math.Abs(top-0.8) > 1e-12 || size[3*tg] != 0.4 || size[3*tg+1] != 0.4 || gx[3*tg] != 0 {
		t.Errorf("table top z %v, half sizes %v; want 0.8 and (0.4, 0.4, 0.025) centred at x = 0", top, size[3*tg:3*tg+3])
	}
	cg := m.ID(mj.ObjGeom, "cube_g0")
	if s := size[3*cg : 3*cg+3]; s[0] != 0.021 || s[1] != 0.021 || s[2] != 0.021 {
		t.Errorf("cube half sizes %v, want 0.021 (inside Lift's [0.020, 0.022])", s)
	}
	if cm := mass[e.cube]; math.Abs(cm-8*0.021*0.021*0.021*1000) > 1e-9 {
		t.Errorf("cube mass %v, want %v", cm, 8*0.021*0.021*0.021*1000)
	}
	if b := m.ID(mj.ObjBody, "link0"); e.xpos[3*b] != -0.56 || e.xpos[3*b+2] != 0.913 {
		t.Errorf("arm base at %v, want (-0.56, 0, 0.913)", e.xpos[3*b:3*b+3])
	}
}

// TestResetPose checks the initial end-effector pose: gripper pointing
// down, about where RoboSuite's Panda starts (x ≈ −0.1, z ≈ 1.0), and the
// observation layout.
func TestResetPose(t *testing.T) {
	e := newLift(t)
	obs, err := e.ResetTo(InitQpos, [3]float64{0.01, -0.02, TableTopZ + CubeDropZ + CubeHalf}, [4]float64{1, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	eef := obs[ObsEEFPos : ObsEEFPos+3]
	if eef[0] < -0.16 || eef[0] > -0.08 || math.Abs(eef[1]) > 1e-6 || eef[2] < 0.97 || eef[2] > 1.05 {
		t.Errorf("initial eef %v, want about (-0.12, 0, 1.0)", eef)
	}
	if R := e.EEFRot(); R[8] > -0.99 {
		t.Errorf("grip site z axis %v does not point down", [3]float64{R[2], R[5], R[8]})
	}
	for i := range 3 {
		if obs[ObsGripperToCube+i] != obs[ObsEEFPos+i]-obs[ObsCubePos+i] {
			t.Errorf("gripper_to_cube[%d] = %v, want eef − cube", i, obs[ObsGripperToCube+i])
		}
	}
	if obs[ObsGripperQpos] != GripperInitQ || obs[ObsGripperQpos+1] != -GripperInitQ {
		t.Errorf("gripper qpos %v, want ±%v", obs[ObsGripperQpos:ObsGripperQpos+2], GripperInitQ)
	}
	if q := obs[ObsCubeQuat : ObsCubeQuat+4]; q[3] != 1 || q[0] != 0 {
		t.Errorf("cube quaternion (x, y, z, w) %v, want (0, 0, 0, 1)", q)
	}
	n := 0.0
	for _, v := range obs[ObsEEFQuat : ObsEEFQuat+4] {
		n += v * v
	}
	if math.Abs(n-1) > 1e-9 || len(obs) != ObsDim {
		t.Errorf("eef quaternion norm² %v, obs length %d", n, len(obs))
	}
}

// TestOSCReachesTarget commands fixed targets around the start pose (the
// goal set exactly on the target once within OutputMax) and checks that
// the end effector settles within 5 mm with its orientation back within
// 0.01 rad of the initial one, never more than 0.1 rad off on the way.
func TestOSCReachesTarget(t *testing.T) {
	e := newLift(t)
	offsets := [][3]float64{{0.1, 0, 0}, {0, 0.15, -0.1}, {-0.05, -0.1, -0.15}, {0.12, 0.08, 0.05}}
	for _, off := range offsets {
		obs, err := e.ResetTo(InitQpos, [3]float64{0.3, 0.3, TableTopZ + CubeHalf}, [4]float64{1, 0, 0, 0})
		if err != nil {
			t.Fatal(err)
		}
		R0 := e.EEFRot()
		var target [3]float64
		for i := range 3 {
			target[i] = obs[i] + off[i]
		}
		maxOri := 0.0
		for range 60 {
			a := toward(obs[:3], target, -1)
			if obs, _, _, _, err = e.Step(a); err != nil {
				t.Fatal(err)
			}
			er := orientationError(R0, e.EEFRot())
			maxOri = math.Max(maxOri, math.Sqrt(er[0]*er[0]+er[1]*er[1]+er[2]*er[2]))
		}
		dist := math.Sqrt((obs[0]-target[0])*(obs[0]-target[0]) + (obs[1]-target[1])*(obs[1]-target[1]) + (obs[2]-target[2])*(obs[2]-target[2]))
		if dist > 0.005 {
			t.Errorf("offset %v: eef ended %.4f m from the target", off, dist)
		}
		er := orientationError(R0, e.EEFRot())
		if fin := math.Sqrt(er[0]*er[0] + er[1]*er[1] + er[2]*er[2]); maxOri > 0.1 || fin > 0.01 {
			t.Errorf("offset %v: orientation off by up to %.3f rad on the way, %.4f at the end", off, maxOri, fin)
		}
	}
}

// TestOSCStepResponse checks one step's goal and the controller's
// sluggishness: a full action moves the goal 0.05 m, and the end effector
// follows part of the way within the step (kp 150, critically damped).
func TestOSCStepResponse(t *testing.T) {
	e := newLift(t)
	obs, err := e.ResetTo(InitQpos, [3]float64{0.3, 0.3, TableTopZ + CubeHalf}, [4]float64{1, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	z0 := obs[2]
	if obs, _, _, _, err = e.Step([]float64{0, 0, 1, 0}); err != nil {
		t.Fatal(err)
	}
	if g := e.GoalPos(); math.Abs(g[2]-(z0+OutputMax)) > 1e-12 {
		t.Errorf("goal z %v, want %v", g[2], z0+OutputMax)
	}
	if dz := obs[2] - z0; dz < 0.002 || dz > 0.03 {
		t.Errorf("eef rose %.4f m in one step, want a few millimetres to 3 cm", dz)
	}
}

// scriptedEpisode runs a scripted controller from seed's reset and reports
// whether the task's success test still holds 20 steps after it first did
// (the cube still held, the door still open), and the step of the first
// success (−1 when there is none).
func scriptedEpisode(t *testing.T, e *Env, policy Scripted, seed uint64) (bool, int) {
	obs := e.Reset(rand.New(rand.NewPCG(seed, 99)))
	first := -1
	for k := range MaxEpisodeSteps {
		var err error
		if obs, _, _, _, err = e.Step(policy(obs)); err != nil {
			t.Fatal(err)
		}
		if first < 0 && e.Success() {
			first = k
		}
		if first >= 0 && k == first+20 {
			return e.Success(), first
		}
	}
	return false, first
}

// scriptedSucceeds requires a scripted controller to succeed (and keep
// succeeding 20 steps later) in at least 45 of 50 randomized episodes.
func scriptedSucceeds(t *testing.T, e *Env, policy Scripted, task string) {
	t.Helper()
	wins, maxFirst := 0, 0
	for s := range 50 {
		ok, first := scriptedEpisode(t, e, policy, uint64(s))
		if ok {
			wins++
			maxFirst = max(maxFirst, first)
		}
	}
	t.Logf("scripted %s: %d/50 successes, slowest first success at step %d", task, wins, maxFirst)
	if wins < 45 {
		t.Errorf("scripted %s succeeded in %d/50 episodes, want >= 45", task, wins)
	}
}

// TestScriptedLiftSucceeds: the scripted controller lifts the cube in at
// least 45 of 50 randomized episodes.
func TestScriptedLiftSucceeds(t *testing.T) {
	scriptedSucceeds(t, newLift(t), ScriptedLift, "Lift")
}

// TestRandomActionsRarelySucceed: uniform random actions lift the cube in
// at most 1 of 10 full episodes.
func TestRandomActionsRarelySucceed(t *testing.T) {
	e := newLift(t)
	wins := 0
	for s := range 10 {
		rng := rand.New(rand.NewPCG(uint64(s), 7))
		e.Reset(rng)
		for range MaxEpisodeSteps {
			a := []float64{2*rng.Float64() - 1, 2*rng.Float64() - 1, 2*rng.Float64() - 1, 2*rng.Float64() - 1}
			if _, _, _, _, err := e.Step(a); err != nil {
				t.Fatal(err)
			}
			if e.Success() {
				wins++
				break
			}
		}
	}
	t.Logf("random actions: %d/10 episodes lifted the cube", wins)
	if wins > 1 {
		t.Errorf("random actions lifted the cube in %d/10 episodes", wins)
	}
}

func randomRollout(t *testing.T, e *Env, seed uint64, n int) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := [][]float64{e.Reset(rng)}
	for range n {
		a := make([]float64, e.ActionSpace().Dim())
		for i := range a {
			a[i] = 2*rng.Float64() - 1
		}
		obs, r, _, _, err := e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append(obs, r))
	}
	return out
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestDeterministic: two environments given one seed produce bitwise the
// same rollouts, and resets with one seed give bitwise the same state.
func TestDeterministic(t *testing.T) {
	e1, e2 := newLift(t), newLift(t)
	a, b := randomRollout(t, e1, 11, 40), randomRollout(t, e2, 11, 40)
	for i := range a {
		if !sameBits(a[i], b[i]) {
			t.Fatalf("step %d differs between two environments with one seed", i)
		}
	}
	o1 := e1.Reset(rand.New(rand.NewPCG(5, 5)))
	s1 := e1.State()
	o2 := e1.Reset(rand.New(rand.NewPCG(5, 5)))
	if !sameBits(o1, o2) || !sameBits(s1, e1.State()) {
		t.Error("two resets with one seed differ")
	}
	o3 := e1.Reset(rand.New(rand.NewPCG(6, 5)))
	if sameBits(o1, o3) {
		t.Error("resets with different seeds are identical")
	}
}

// TestStateRoundTrip: SetState(State()) continues bitwise identically.
func TestStateRoundTrip(t *testing.T) {
	e := newLift(t)
	obs := e.Reset(rand.New(rand.NewPCG(3, 3)))
	for range 25 {
		var err error
		if obs, _, _, _, err = e.Step(ScriptedLift(obs)); err != nil {
			t.Fatal(err)
		}
	}
	s := e.State()
	run := func() [][]float64 {
		var out [][]float64
		o := obs
		for range 15 {
			next, r, _, _, err := e.Step(ScriptedLift(o))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, append(next, r))
			o = next
		}
		return out
	}
	first := run()
	if err := e.SetState(s); err != nil {
		t.Fatal(err)
	}
	second := run()
	for i := range first {
		if !sameBits(first[i], second[i]) {
			t.Fatalf("step %d after SetState differs", i)
		}
	}
	if err := e.SetState(s[:10]); err == nil {
		t.Error("a short state was accepted")
	}
	bad := append([]float64(nil), s...)
	bad[len(bad)-1] = 2.5
	if err := e.SetState(bad); err == nil {
		t.Error("a fractional step count was accepted")
	}
}

// TestStepErrors: bad actions and stepping out of an episode fail cleanly.
func TestStepErrors(t *testing.T) {
	e := newLift(t)
	if _, _, _, _, err := e.Step(make([]float64, 4)); err == nil {
		t.Error("Step before Reset succeeded")
	}
	e.Reset(rand.New(rand.NewPCG(1, 1)))
	if _, _, _, _, err := e.Step(make([]float64, 3)); err == nil {
		t.Error("a 3-entry action was accepted")
	}
	if _, _, _, _, err := e.Step([]float64{0, math.NaN(), 0, 0}); err == nil {
		t.Error("a NaN action was accepted")
	}
	if err := e.SetState(append(e.State()[:len(e.State())-1], MaxEpisodeSteps-1)); err != nil {
		t.Fatal(err)
	}
	_, _, term, trunc, err := e.Step([]float64{0, 0, 0, 0})
	if err != nil || term || !trunc {
		t.Errorf("last step: terminated %v truncated %v err %v, want false true nil", term, trunc, err)
	}
	if _, _, _, _, err := e.Step([]float64{0, 0, 0, 0}); err == nil {
		t.Error("a step past the horizon succeeded")
	}
	if _, err := New("robosuite-nope"); err == nil {
		t.Error("an unknown name was accepted")
	}
}

func TestRegistered(t *testing.T) {
	e, err := env.Make(LiftName)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != LiftName || e.ObservationSpace().Dim() != ObsDim || e.ActionSpace().Dim() != ActDim || e.MaxEpisodeSteps() != 500 {
		t.Errorf("registered env: name %q obs %d act %d horizon %d", e.Name(), e.ObservationSpace().Dim(), e.ActionSpace().Dim(), e.MaxEpisodeSteps())
	}
	e.(*Env).Close()
	d, err := env.Make(DoorName)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name() != DoorName || d.ObservationSpace().Dim() != doorObsDim || d.ActionSpace().Dim() != doorActDim {
		t.Errorf("registered door: name %q obs %d act %d", d.Name(), d.ObservationSpace().Dim(), d.ActionSpace().Dim())
	}
	if _, _, _, _, err := d.Step(make([]float64, ActDim)); err == nil {
		t.Error("a 4-D action was accepted by the 7-D Door")
	}
	d.(*Env).Close()
}
