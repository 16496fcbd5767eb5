//go:build cgo && !nomujoco

package panda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/env"
	mj "github.com/koopq/koopq/internal/mujoco"
)

func init() {
	for _, name := range Names() {
		env.Register(name, func() (env.Env, error) { return New(name) })
	}
}

// Model layout: seven arm hinges, two finger slides, then the task's
// joints: Lift's cube free joint (qpos 9 … 15, qvel 9 … 14); Door's hinge
// (9) and latch (10).
const (
	nArm      = 7
	fingerQ   = 7 // qpos/qvel index of finger_joint1 (finger_joint2 follows)
	cubeQpos  = 9 // first qpos index of the cube's free joint (position, quaternion)
	cubeQvel  = 9 // first qvel index of the cube's free joint
	hingeQ    = 9 // qpos/qvel index of Door's hinge
	latchQ    = 10
	modelNU   = 9
	stateTail = 3 + 9 + nArm + 2 + 2 // goal pos, goal rotation, posture target, gripper command, time, steps
)

// layout holds a task's model sizes: generalized positions and velocities,
// observation length, and extra state entries (Door's mocap pose).
type layout struct{ nq, nv, obs, extra int }

var layouts = map[string]layout{
	LiftName: {nq: 16, nv: 15, obs: ObsDim},
	DoorName: {nq: 11, nv: 11, obs: doorObsDim, extra: 7},
}

// Env is one RoboSuite-style Panda environment (see the package doc). It
// implements env.Env.
//
// State layout (see State): qpos [nq] | qvel [nv] | qacc_warmstart [nv] |
// (Door only: door root position (3) and quaternion (4)) | OSC goal
// position (3) | OSC goal rotation (9, row-major) | nullspace posture
// target (7) | gripper command (2) | time | elapsed steps; Lift has nq = 16,
// nv = 15, Door nq = nv = 11.
type Env struct {
	name  string
	door  bool // the Door task (else Lift)
	lay   layout
	model *mj.Model
	data  *mj.Data

	qpos, qvel, warm, ctrl, xquat, xpos, siteXPos, siteXMat, bias []float64 // views into C memory
	mocapPos, mocapQuat                                           []float64 // Door's root pose (views)

	// target is the geom the pads must touch for Grasped: the cube or the
	// handle; cube is the cube body or the door body; handle the handle site.
	site, hand, cube, target, handle, pad1, pad2 int

	osc          *OSC
	in           OSCInput
	jacp, jacr   []float64
	fullM        []float64
	tau          []float64
	limits       [nArm]float64
	goalPos      [3]float64
	goalR        [9]float64
	q0           [nArm]float64
	grip         [2]float64
	steps        int
	success      bool
	stale        error
	obsSp, actSp env.Space
}

var _ env.Env = (*Env)(nil)

// New builds the environment registered as name (see Names). Call Reset
// before Step.
func New(name string) (*Env, error) {
	if !tasks[name] {
		return nil, fmt.Errorf("env/panda: unknown environment %q (known: %v)", name, Names())
	}
	return newEnv(name)
}

// newEnv builds the environment of any task with a layout.
func newEnv(name string) (*Env, error) {
	lay, ok := layouts[name]
	if !ok {
		return nil, fmt.Errorf("env/panda: unknown task %q", name)
	}
	door := name == DoorName
	xml := sceneMJCF(name, [3]float64{0, 0, TableTopZ + CubeHalf})
	if door {
		xml = doorSceneMJCF(name, [3]float64{(doorRangeX0+doorRangeX1)/2 + doorTableX, doorTableY, doorRootZ})
	}
	m, err := mj.LoadXML(xml)
	if err != nil {
		return nil, fmt.Errorf("env/panda %s: %w", name, err)
	}
	d, err := mj.NewData(m)
	if err != nil {
		return nil, fmt.Errorf("env/panda %s: %w", name, err)
	}
	if m.NQ() != lay.nq || m.NV() != lay.nv || m.NU() != modelNU || (door && m.NMocap() != 1) {
		return nil, fmt.Errorf("env/panda %s: unexpected model layout nq=%d nv=%d nu=%d", name, m.NQ(), m.NV(), m.NU())
	}
	e := &Env{name: name, door: door, lay: lay, model: m, data: d,
		qpos: d.QPos(), qvel: d.QVel(), warm: d.QaccWarmstart(), ctrl: d.Ctrl(), xquat: d.XQuat(), xpos: d.XPos(),
		siteXPos: d.SiteXPos(), siteXMat: d.SiteXMat(), bias: d.QfrcBias(), mocapPos: d.MocapPos(), mocapQuat: d.MocapQuat(),
		osc: NewOSC(nArm), jacp: make([]float64, 3*lay.nv), jacr: make([]float64, 3*lay.nv),
		fullM: make([]float64, lay.nv*lay.nv), tau: make([]float64, nArm),
		stale: errors.New("env/panda: Step before Reset"),
	}
	e.in = OSCInput{M: make([]float64, nArm*nArm), Jp: make([]float64, 3*nArm), Jr: make([]float64, 3*nArm),
		Bias: make([]float64, nArm), Q: make([]float64, nArm), QVel: make([]float64, nArm), Q0: make([]float64, nArm)}
	type ref struct {
		dst  *int
		typ  mj.ObjType
		name string
	}
	ids := []ref{
		{&e.site, mj.ObjSite, "grip_site"}, {&e.hand, mj.ObjBody, "right_hand"}, {&e.cube, mj.ObjBody, "cube"},
		{&e.target, mj.ObjGeom, "cube_g0"}, {&e.pad1, mj.ObjGeom, "finger1_pad_collision"},
		{&e.pad2, mj.ObjGeom, "finger2_pad_collision"},
	}
	if door {
		ids[2], ids[3] = ref{&e.cube, mj.ObjBody, "door"}, ref{&e.target, mj.ObjGeom, "handle"}
		ids = append(ids, ref{&e.handle, mj.ObjSite, "door_handle"})
	}
	for _, id := range ids {
		if *id.dst = m.ID(id.typ, id.name); *id.dst < 0 {
			return nil, fmt.Errorf("env/panda %s: no object %q", name, id.name)
		}
	}
	for i, l := range PandaArm() {
		e.limits[i] = l.TorqueLimit
	}
	e.obsSp = env.Space{Low: make([]float64, lay.obs), High: make([]float64, lay.obs)}
	for i := range lay.obs {
		e.obsSp.Low[i], e.obsSp.High[i] = math.Inf(-1), math.Inf(1)
	}
	na := ActDim
	if door {
		na = doorActDim
	}
	e.actSp = env.Space{Low: make([]float64, na), High: make([]float64, na)}
	for i := range na {
		e.actSp.Low[i], e.actSp.High[i] = -1, 1
	}
	return e, nil
}

// Close frees the simulator's C memory now instead of at garbage
// collection. The Env must not be used afterwards.
func (e *Env) Close() {
	e.data.Close()
	e.model.Close()
	e.qpos, e.qvel, e.warm, e.ctrl, e.xquat, e.xpos, e.siteXPos, e.siteXMat, e.bias = nil, nil, nil, nil, nil, nil, nil, nil, nil
	e.mocapPos, e.mocapQuat = nil, nil
	e.stale = errors.New("env/panda: environment closed")
}

// Name returns the registry name.
func (e *Env) Name() string { return e.name }

// ObservationSpace is the unbounded space of the task's layout: 19-D for
// Lift (task.go), 23-D for Door (door.go).
func (e *Env) ObservationSpace() env.Space { return e.obsSp }

// ActionSpace is [-1, 1]⁴ for Lift (OSC_POSITION: goal displacement ×
// OutputMax metres, gripper command, +1 closes, −1 opens) and [-1, 1]⁷ for
// Door (OSC_POSE: displacement, axis-angle rotation × OutputMaxRot radians,
// gripper).
func (e *Env) ActionSpace() env.Space { return e.actSp }

// MaxEpisodeSteps is 500.
func (e *Env) MaxEpisodeSteps() int { return MaxEpisodeSteps }

// Dt is the duration of one environment step, 1/ControlFreq = 0.05 s.
func (e *Env) Dt() float64 { return Timestep * Substeps }

// Success reports whether the task was solved after the last Step: the
// cube lifted (LiftSuccess) or the door open (doorSuccess); false after
// Reset.
func (e *Env) Success() bool { return e.success }

// ElapsedSteps is the number of steps since Reset.
func (e *Env) ElapsedSteps() int { return e.steps }

// EEFPos returns the grip site's position (metres).
func (e *Env) EEFPos() [3]float64 { return [3]float64(e.siteXPos[3*e.site : 3*e.site+3]) }

// EEFRot returns the grip site's rotation matrix (row-major).
func (e *Env) EEFRot() [9]float64 { return [9]float64(e.siteXMat[9*e.site : 9*e.site+9]) }

// CubePos returns the cube's centre (metres); in Door, the door body's
// position.
func (e *Env) CubePos() [3]float64 { return [3]float64(e.xpos[3*e.cube : 3*e.cube+3]) }

// handlePos returns the door handle site's position (metres); zeros in Lift.
func (e *Env) handlePos() [3]float64 {
	if !e.door {
		return [3]float64{}
	}
	return [3]float64(e.siteXPos[3*e.handle : 3*e.handle+3])
}

// GoalPos returns the OSC's current goal position (metres).
func (e *Env) GoalPos() [3]float64 { return e.goalPos }

// QPos returns a copy of the generalized positions: seven arm hinges, two
// finger slides, then Lift's cube free joint (position, quaternion w, x, y,
// z; 16 in all) or Door's hinge and latch angles (11 in all).
func (e *Env) QPos() []float64 { return append([]float64(nil), e.qpos...) }

// Grasped reports RoboSuite's grasp test: both finger pads touch the cube
// (Lift) or the handle bar (Door).
func (e *Env) Grasped() bool {
	var t1, t2 bool
	for i := range e.data.NCon() {
		g1, g2, _ := e.data.ContactGeoms(i)
		if g1 != e.target && g2 != e.target {
			continue
		}
		o := g1 + g2 - e.target
		t1 = t1 || o == e.pad1
		t2 = t2 || o == e.pad2
	}
	return t1 && t2
}

// Reset starts an episode as RoboSuite's reset does: the arm at InitQpos
// plus Gaussian noise of InitNoise per joint (drawn first), the fingers at
// their initial opening, then the task's object: Lift's cube at a
// SampleCube draw, Door's door at a sampleDoor draw with its hinge and
// latch at 0. The OSC's goal is the current end-effector pose, its posture
// target the noisy initial joints, and the gripper command 0.
func (e *Env) Reset(rng *rand.Rand) []float64 {
	var q [nArm]float64
	for i := range q {
		q[i] = InitQpos[i] + InitNoise*rng.NormFloat64()
	}
	var err error
	if e.door {
		pos, yaw := sampleDoor(rng)
		_, err = e.resetDoor(q, pos, yaw)
	} else {
		pos, quat := SampleCube(rng)
		_, err = e.ResetTo(q, pos, quat)
	}
	_ = err // a failure is kept in e.stale and returned by the next Step
	return e.observe()
}

// ResetTo starts a Lift episode like Reset with the arm joints, the cube's
// centre and quaternion (w, x, y, z) given instead of drawn. It is for
// tests and scripted data collection; it fails on a Door environment.
func (e *Env) ResetTo(q [nArm]float64, cube [3]float64, quat [4]float64) ([]float64, error) {
	if e.door {
		return nil, fmt.Errorf("env/panda %s: ResetTo places a cube, this is the Door task", e.name)
	}
	e.steps, e.success = 0, false
	e.stale = e.reset(q, func() {
		copy(e.qpos[cubeQpos:], cube[:])
		copy(e.qpos[cubeQpos+3:], quat[:])
	})
	if e.stale != nil {
		return nil, e.stale
	}
	return e.observe(), nil
}

// resetDoor starts a Door episode like Reset with the arm joints, the
// door root's position (metres) and yaw (radians, within [doorYaw0,
// doorYaw1]) given instead of drawn. It fails on a Lift environment.
func (e *Env) resetDoor(q [nArm]float64, pos [3]float64, yaw float64) ([]float64, error) {
	if !e.door {
		return nil, fmt.Errorf("env/panda %s: not a Door environment", e.name)
	}
	if err := checkDoorYaw(yaw); err != nil {
		return nil, err
	}
	e.steps, e.success = 0, false
	e.stale = e.reset(q, func() {
		quat := doorQuat(yaw)
		copy(e.mocapPos, pos[:])
		copy(e.mocapQuat, quat[:])
	})
	if e.stale != nil {
		return nil, e.stale
	}
	return e.observe(), nil
}

// reset puts the arm at q and the fingers at their initial opening, lets
// place set the task's object, and recomputes the kinematics.
func (e *Env) reset(q [nArm]float64, place func()) error {
	e.data.Reset()
	copy(e.qpos, q[:])
	e.qpos[fingerQ], e.qpos[fingerQ+1] = GripperInitQ, -GripperInitQ
	place()
	if err := e.data.Forward(); err != nil {
		return fmt.Errorf("env/panda %s: reset: %w", e.name, err)
	}
	e.q0 = q
	e.goalPos = e.EEFPos()
	e.goalR = e.EEFRot()
	e.grip = [2]float64{}
	return nil
}

// observe builds the observation of the task's layout (task.go, door.go).
func (e *Env) observe() []float64 {
	obs := make([]float64, e.lay.obs)
	eef, obj := e.EEFPos(), e.CubePos()
	copy(obs[ObsEEFPos:], eef[:])
	h := e.xquat[4*e.hand : 4*e.hand+4]
	obs[ObsEEFQuat], obs[ObsEEFQuat+1], obs[ObsEEFQuat+2], obs[ObsEEFQuat+3] = h[1], h[2], h[3], h[0]
	obs[ObsGripperQpos], obs[ObsGripperQpos+1] = e.qpos[fingerQ], e.qpos[fingerQ+1]
	if e.door {
		hp := e.handlePos()
		copy(obs[obsDoorPos:], obj[:])
		copy(obs[obsHandlePos:], hp[:])
		for i := range 3 {
			obs[obsDoorToEEF+i] = obj[i] - eef[i]
			obs[obsHandleToEEF+i] = hp[i] - eef[i]
		}
		obs[obsHingeQpos], obs[obsHandleQpos] = e.qpos[hingeQ], e.qpos[latchQ]
		return obs
	}
	copy(obs[ObsCubePos:], obj[:])
	c := e.xquat[4*e.cube : 4*e.cube+4]
	obs[ObsCubeQuat], obs[ObsCubeQuat+1], obs[ObsCubeQuat+2], obs[ObsCubeQuat+3] = c[1], c[2], c[3], c[0]
	for i := range 3 {
		obs[ObsGripperToCube+i] = eef[i] - obj[i]
	}
	return obs
}

// solved reports the task's success test on the current state.
func (e *Env) solved() bool {
	if e.door {
		return doorSuccess(e.qpos[hingeQ])
	}
	return LiftSuccess(e.CubePos()[2])
}

// reward is the task's dense reward on the current state.
func (e *Env) reward() float64 {
	if e.door {
		return doorReward(e.EEFPos(), e.handlePos(), e.qpos[hingeQ], e.qpos[latchQ])
	}
	return LiftReward(e.EEFPos(), e.CubePos(), e.Grasped())
}

// Step clips action to [-1, 1] and sets the OSC goal: for Lift
// (OSC_POSITION, ActDim entries) the current end-effector position plus
// action[:3]·OutputMax with the orientation held at the episode's initial
// one; for Door (OSC_POSE, doorActDim entries) also the orientation, the
// rotation by the axis-angle vector action[3:6]·OutputMaxRot applied to the
// current one (kept unchanged when all three are 0). It then runs Substeps MuJoCo steps; before each the
// controller recomputes the arm torques from the current state (clipped to
// the torque limits) and moves the gripper command GripperSpeed toward
// closed (last action entry > 0) or open (< 0). It returns the observation,
// the task's dense reward (LiftReward or doorReward), terminated = false
// (episodes end only at the horizon) and truncated at step MaxEpisodeSteps,
// after which Step fails until Reset. Errors: an action of the wrong length
// or with NaNs, a simulator failure (then Reset or SetState is required).
func (e *Env) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	if e.stale != nil {
		return nil, 0, false, false, e.stale
	}
	na := len(e.actSp.Low)
	if len(action) != na {
		return nil, 0, false, false, fmt.Errorf("env/panda %s: action has %d entries, want %d", e.name, len(action), na)
	}
	if e.steps >= MaxEpisodeSteps {
		return nil, 0, false, false, fmt.Errorf("env/panda %s: episode already has %d steps; Reset first", e.name, e.steps)
	}
	var a [doorActDim]float64
	for i, v := range action {
		if math.IsNaN(v) {
			return nil, 0, false, false, fmt.Errorf("env/panda %s: action[%d] is NaN", e.name, i)
		}
		a[i] = math.Max(-1, math.Min(1, v))
	}
	eef := e.EEFPos()
	for i := range 3 {
		e.goalPos[i] = eef[i] + a[i]*OutputMax
	}
	if e.door && (a[3] != 0 || a[4] != 0 || a[5] != 0) {
		// As osc.py: a zero rotation keeps the previous goal orientation.
		e.goalR = rotateBy([3]float64{a[3] * OutputMaxRot, a[4] * OutputMaxRot, a[5] * OutputMaxRot}, e.EEFRot())
	}
	sign := 0.0
	if g := a[na-1]; g > 0 {
		sign = 1
	} else if g < 0 {
		sign = -1
	}
	for k := range Substeps {
		if err := e.substep(sign); err != nil {
			e.stale = fmt.Errorf("env/panda %s: previous step failed, Reset or SetState required: %w", e.name, err)
			return nil, 0, false, false, fmt.Errorf("env/panda %s: step %d substep %d: %w", e.name, e.steps+1, k, err)
		}
	}
	if err := e.data.Forward(); err != nil {
		e.stale = err
		return nil, 0, false, false, fmt.Errorf("env/panda %s: %w", e.name, err)
	}
	e.steps++
	obs = e.observe()
	e.success = e.solved()
	reward = e.reward()
	return obs, reward, false, e.steps >= MaxEpisodeSteps, nil
}

// substep runs one controlled MuJoCo step: Step1 (kinematics, inertia,
// bias forces), the OSC and gripper commands, Step2.
func (e *Env) substep(gripSign float64) error {
	if err := e.data.Step1(); err != nil {
		return err
	}
	if err := e.data.JacSite(e.site, e.jacp, e.jacr); err != nil {
		return err
	}
	if err := e.data.FullM(e.fullM); err != nil {
		return err
	}
	in := &e.in
	for i := range nArm {
		for j := range nArm {
			in.M[i*nArm+j] = e.fullM[i*e.lay.nv+j]
		}
		for r := range 3 {
			in.Jp[r*nArm+i] = e.jacp[r*e.lay.nv+i]
			in.Jr[r*nArm+i] = e.jacr[r*e.lay.nv+i]
		}
		in.Bias[i], in.Q[i], in.QVel[i], in.Q0[i] = e.bias[i], e.qpos[i], e.qvel[i], e.q0[i]
	}
	in.Pos, in.R = e.EEFPos(), e.EEFRot()
	in.GoalPos, in.GoalR = e.goalPos, e.goalR
	if err := e.osc.Torques(in, e.tau); err != nil {
		return err
	}
	for i := range nArm {
		e.ctrl[i] = math.Max(-e.limits[i], math.Min(e.limits[i], e.tau[i]))
	}
	e.grip[0] = math.Max(-1, math.Min(1, e.grip[0]-GripperSpeed*gripSign))
	e.grip[1] = math.Max(-1, math.Min(1, e.grip[1]+GripperSpeed*gripSign))
	half := FingerRange / 2
	e.ctrl[nArm] = half + half*e.grip[0]
	e.ctrl[nArm+1] = -half + half*e.grip[1]
	return e.data.Step2()
}

func (e *Env) stateLen() int { return e.lay.nq + 2*e.lay.nv + e.lay.extra + stateTail }

// State returns qpos | qvel | qacc_warmstart | (Door: door root position
// (3) and quaternion (4)) | OSC goal position (3) | OSC goal rotation (9) |
// posture target (7) | gripper command (2) | time | elapsed steps:
// everything a bitwise continuation needs.
func (e *Env) State() []float64 {
	s := make([]float64, 0, e.stateLen())
	s = append(s, e.qpos...)
	s = append(s, e.qvel...)
	s = append(s, e.warm...)
	if e.door {
		s = append(s, e.mocapPos...)
		s = append(s, e.mocapQuat...)
	}
	s = append(s, e.goalPos[:]...)
	s = append(s, e.goalR[:]...)
	s = append(s, e.q0[:]...)
	s = append(s, e.grip[:]...)
	return append(s, e.data.Time(), float64(e.steps))
}

// SetState restores a state returned by State. It fails for a state of
// the wrong length, with non-finite entries or an invalid step count.
func (e *Env) SetState(state []float64) error {
	steps, err := env.CheckState("env/panda "+e.name, state, e.stateLen(), MaxEpisodeSteps)
	if err != nil {
		return err
	}
	r := state
	take := func(n int) []float64 { v := r[:n]; r = r[n:]; return v }
	qpos, qvel, warm := take(e.lay.nq), take(e.lay.nv), take(e.lay.nv)
	copy(e.qpos, qpos)
	copy(e.qvel, qvel)
	if e.door {
		copy(e.mocapPos, take(3))
		copy(e.mocapQuat, take(4))
	}
	copy(e.goalPos[:], take(3))
	copy(e.goalR[:], take(9))
	copy(e.q0[:], take(nArm))
	copy(e.grip[:], take(2))
	e.data.SetTime(r[0])
	if err := e.data.Forward(); err != nil {
		e.stale = err
		return err
	}
	// mj_forward overwrites qacc_warmstart and may renormalise the cube's
	// quaternion: put back the exact values for a bitwise continuation.
	copy(e.qpos, qpos)
	copy(e.warm, warm)
	e.steps = steps
	e.success = e.steps > 0 && e.solved()
	e.stale = nil
	return nil
}
