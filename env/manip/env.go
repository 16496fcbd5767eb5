//go:build cgo && !nomujoco

package manip

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

// Env is one MetaWorld-style manipulation environment. It implements
// env.Env.
//
// State layout (see State): qpos [nq] | qvel [nv] | qacc_warmstart [nv] |
// mocap positions (3 per mocap body) | mocap quaternions (4 per mocap
// body) | goal (3) | initial object position (3) | initial tool centre
// point (3) | previous frame (18) | time | elapsed steps. push-v2 has one
// mocap body (the hand's); the door and drawer tasks have a second one,
// the fixture's base, which Reset moves to the drawn object position.
type Env struct {
	task  Task
	model *mj.Model
	data  *mj.Data

	qpos, qvel, warm, ctrl, xpos, xquat, mocapPos, mocapQuat, siteXPos []float64 // views into C memory

	home []float64 // qpos of arm and fingers with the hand settled at HandInit

	hand, rightClaw, leftClaw, rightPad, leftPad, obj int // body ids (obj: the puck or the fixture's moving link)
	rightTip, leftTip                                 int // site ids
	goalSite                                          int
	om                                                objectModel

	goal, objInit, tcpInit [3]float64
	prev                   [ObsFrame]float64
	steps                  int
	success                bool
	stale                  error
	obsSpace, actSpace     env.Space
}

var _ env.Env = (*Env)(nil)

// New builds the environment registered as name (see Names). It settles
// the arm once at the task's initial hand position to find the joint
// configuration every Reset starts from. Call Reset before Step.
func New(name string) (*Env, error) {
	mk, ok := tasks[name]
	if !ok {
		return nil, fmt.Errorf("env/manip: unknown environment %q (known: %v)", name, Names())
	}
	t := mk()
	obj, goal := t.defaultPlacement()
	m, err := mj.LoadXML(taskMJCF(t, obj, goal))
	if err != nil {
		return nil, fmt.Errorf("env/manip %s: %w", name, err)
	}
	d, err := mj.NewData(m)
	if err != nil {
		return nil, fmt.Errorf("env/manip %s: %w", name, err)
	}
	e := &Env{task: t, model: m, data: d,
		qpos: d.QPos(), qvel: d.QVel(), warm: d.QaccWarmstart(), ctrl: d.Ctrl(),
		xpos: d.XPos(), xquat: d.XQuat(), mocapPos: d.MocapPos(), mocapQuat: d.MocapQuat(),
		siteXPos: d.SiteXPos(), stale: errors.New("env/manip: Step before Reset"),
	}
	ids := []struct {
		dst  *int
		typ  mj.ObjType
		name string
	}{
		{&e.hand, mj.ObjBody, "hand"}, {&e.rightClaw, mj.ObjBody, "rightclaw"}, {&e.leftClaw, mj.ObjBody, "leftclaw"},
		{&e.rightPad, mj.ObjBody, "rightpad"}, {&e.leftPad, mj.ObjBody, "leftpad"},
		{&e.rightTip, mj.ObjSite, "rightEndEffector"}, {&e.leftTip, mj.ObjSite, "leftEndEffector"},
		{&e.goalSite, mj.ObjSite, "goal"},
	}
	for _, id := range ids {
		if *id.dst = m.ID(id.typ, id.name); *id.dst < 0 {
			return nil, fmt.Errorf("env/manip %s: no object %q", name, id.name)
		}
	}
	if m.NMocap() < 1 || m.BodyMocapID(m.ID(mj.ObjBody, "mocap")) != 0 || m.NU() != 2 || m.JntQposAdr()[armQ-1] != armQ-1 {
		return nil, fmt.Errorf("env/manip %s: unexpected model layout", name)
	}
	e.om = newObjectModel(t.kind)
	if err := e.om.bind(e); err != nil {
		return nil, fmt.Errorf("env/manip %s: %w", name, err)
	}
	low, high := t.observationSpace()
	e.obsSpace = env.Space{Low: low, High: high}
	e.actSpace = env.Space{Low: []float64{-1, -1, -1, -1}, High: []float64{1, 1, 1, 1}}
	if err := e.settleHome(); err != nil {
		return nil, fmt.Errorf("env/manip %s: %w", name, err)
	}
	return e, nil
}

// settleHome moves the mocap from wherever the arm's reference pose puts
// the hand to HandInit over 400 steps, holds it for 200 more, and keeps the
// arm and finger joint positions as the configuration Reset starts from.
func (e *Env) settleHome() error {
	e.data.Reset()
	// Start the shoulder inside its range (right_j1 ∈ [-3.8, -0.5]).
	e.qpos[1] = -1.2
	if err := e.data.Forward(); err != nil {
		return err
	}
	var start [3]float64
	copy(start[:], e.xpos[3*e.hand:3*e.hand+3])
	copy(e.mocapQuat, MocapQuat[:])
	const ramp, hold = 400, 200
	for k := range ramp + hold {
		f := math.Min(1, float64(k+1)/ramp)
		for i := range 3 {
			e.mocapPos[i] = start[i] + f*(e.task.HandInit[i]-start[i])
		}
		e.ctrl[0], e.ctrl[1] = -1, 1
		if err := e.data.Step(FrameSkip); err != nil {
			return fmt.Errorf("settling the arm: %w", err)
		}
	}
	if err := e.data.Forward(); err != nil {
		return err
	}
	if d := dist3(e.bodyPos(e.hand), e.task.HandInit); d > 0.01 {
		return fmt.Errorf("settling the arm: hand ended %.4f m from %v", d, e.task.HandInit)
	}
	e.home = append([]float64(nil), e.qpos[:armQ]...)
	return nil
}

// Close frees the simulator's C memory now instead of at garbage
// collection. The Env must not be used afterwards.
func (e *Env) Close() {
	e.data.Close()
	e.model.Close()
	e.qpos, e.qvel, e.warm, e.ctrl, e.xpos, e.xquat, e.mocapPos, e.mocapQuat, e.siteXPos = nil, nil, nil, nil, nil, nil, nil, nil, nil
	e.stale = errors.New("env/manip: environment closed")
}

// Name returns the registry name.
func (e *Env) Name() string { return e.task.Name }

// Task returns the task's constants.
func (e *Env) Task() Task { return e.task }

// ObservationSpace is MetaWorld v2's goal-observable 39-D space: hand
// positions within [-0.525, 0.525]×[0.348, 1.025]×[-0.0525, 0.7], gripper
// entries within [-1, 1], object entries unbounded, the goal within the
// task's goal range. Observations are clipped to it.
func (e *Env) ObservationSpace() env.Space { return e.obsSpace }

// ActionSpace is [-1, 1]⁴: hand dx, dy, dz (× ActionScale metres) and the
// gripper effort (+1 closes, −1 opens).
func (e *Env) ActionSpace() env.Space { return e.actSpace }

// MaxEpisodeSteps is 500.
func (e *Env) MaxEpisodeSteps() int { return MaxEpisodeSteps }

// Goal returns the episode's goal position (metres).
func (e *Env) Goal() [3]float64 { return e.goal }

// ObjInit returns the initial object position the task's reward reads:
// push-v2's puck at the start of the episode, the door's or drawer-open's
// drawn base position, drawer-close's handle point after reset pulled the
// drawer out.
func (e *Env) ObjInit() [3]float64 { return e.objInit }

// Success reports whether the last Step met the task's success test
// (push-v2: puck within PushTargetRadius of the goal; see the task's
// reward function for the others); false after Reset.
func (e *Env) Success() bool { return e.success }

// ElapsedSteps is the number of steps since Reset.
func (e *Env) ElapsedSteps() int { return e.steps }

// Dt is the duration of one env step (Timestep × FrameSkip) in seconds.
func (e *Env) Dt() float64 { return Timestep * FrameSkip }

// MocapPos returns the mocap body's position, the hand's commanded
// position (metres).
func (e *Env) MocapPos() [3]float64 { return [3]float64{e.mocapPos[0], e.mocapPos[1], e.mocapPos[2]} }

// HandPos returns the hand body's position (metres).
func (e *Env) HandPos() [3]float64 { return e.bodyPos(e.hand) }

// PuckPos returns the puck's centre (metres); for the door and drawer
// tasks, the origin of the moving link (door_link, drawer_link).
func (e *Env) PuckPos() [3]float64 { return e.bodyPos(e.obj) }

// ObjPos returns the position in the first object slot of the
// observation: push-v2's puck, the door's handle, the drawers' handle
// point (metres, unclipped).
func (e *Env) ObjPos() [3]float64 {
	f := e.frame()
	return [3]float64{f[ObsObj], f[ObsObj+1], f[ObsObj+2]}
}

// TCP returns the tool centre point: the midpoint of the two finger-tip
// sites (metres).
func (e *Env) TCP() [3]float64 {
	var c [3]float64
	for i := range 3 {
		c[i] = (e.siteXPos[3*e.rightTip+i] + e.siteXPos[3*e.leftTip+i]) / 2
	}
	return c
}

// QPos returns a copy of the generalized positions, [nq]: seven arm
// hinges, the two finger slides, the puck's free joint (position, then
// quaternion w, x, y, z).
func (e *Env) QPos() []float64 { return append([]float64(nil), e.qpos...) }

func (e *Env) bodyPos(b int) [3]float64 {
	return [3]float64{e.xpos[3*b], e.xpos[3*b+1], e.xpos[3*b+2]}
}

// frame returns the current 18 numbers: hand, gripper opening, the task's
// first object slot (position, quaternion) and a zero second slot.
func (e *Env) frame() [ObsFrame]float64 {
	var f [ObsFrame]float64
	h := e.bodyPos(e.hand)
	copy(f[ObsHand:], h[:])
	f[ObsGripper] = math.Min(1, math.Max(0, dist3(e.bodyPos(e.rightClaw), e.bodyPos(e.leftClaw))/FingerDistNorm))
	e.om.slot(e, f[ObsObj:ObsObj+7])
	return f
}

// scalarLast writes the MuJoCo quaternion q (w, x, y, z) into dst as
// (x, y, z, w) with w >= 0.
func scalarLast(dst []float64, q [4]float64) {
	s := 1.0
	if q[0] < 0 {
		s = -1
	}
	dst[0], dst[1], dst[2], dst[3] = s*q[1], s*q[2], s*q[3], s*q[0]
}

// observe builds [current frame | previous frame | goal], clipped to the
// observation space, and makes the current frame the next previous one.
func (e *Env) observe() []float64 {
	cur := e.frame()
	obs := make([]float64, ObsDim)
	copy(obs, cur[:])
	copy(obs[ObsPrev:], e.prev[:])
	copy(obs[ObsGoal:], e.goal[:])
	for i, v := range obs {
		obs[i] = math.Max(e.obsSpace.Low[i], math.Min(e.obsSpace.High[i], v))
	}
	e.prev = cur
	return obs
}

func (e *Env) gripperState() GripperState {
	return GripperState{LeftPad: e.bodyPos(e.leftPad), RightPad: e.bodyPos(e.rightPad), TCP: e.TCP(),
		ObjInit: e.objInit, TCPInit: e.tcpInit}
}

// Reset starts an episode as MetaWorld v2's reset does: the simulator is
// reset with the arm at its settled configuration, the mocap is held at
// HandInit for ResetHandSteps steps with the gripper open, then the task
// places its object. push-v2 puts the puck at a position drawn from the
// task's range (keeping its resting height) and the goal at a drawn x, y
// at the puck's height; the door and drawer tasks move the fixture's base
// to the drawn position (before the hand settles), set the door open or
// the drawer pulled out as their tasks do, and put the goal at
// base + GoalOffset. Both previous-frame and current-frame entries of the
// first observation describe the state after placement.
func (e *Env) Reset(rng *rand.Rand) []float64 {
	obj, goal := e.task.Sample(rng)
	e.stale = e.reset(obj, goal)
	e.steps = 0
	e.success = false
	e.prev = e.frame()
	return e.observe()
}

// ResetTo starts an episode like Reset with the object and goal given
// instead of drawn. For push-v2 only the x, y of both are used (the z are
// ignored); for the door and drawer tasks obj is the fixture's base
// position and goal is ignored (it is obj + GoalOffset). It is for tests
// and scripted data collection.
func (e *Env) ResetTo(obj, goal [3]float64) ([]float64, error) {
	e.stale = e.reset(obj, goal)
	e.steps = 0
	e.success = false
	e.prev = e.frame()
	return e.observe(), e.stale
}

func (e *Env) reset(obj, goal [3]float64) error {
	e.data.Reset()
	copy(e.qpos, e.home)
	e.om.prePlace(e, obj)
	copy(e.mocapPos, e.task.HandInit[:])
	copy(e.mocapQuat, MocapQuat[:])
	if err := e.data.Forward(); err != nil {
		return fmt.Errorf("env/manip %s: %w", e.task.Name, err)
	}
	for range ResetHandSteps {
		copy(e.mocapPos, e.task.HandInit[:])
		e.ctrl[0], e.ctrl[1] = -1, 1
		if err := e.data.Step(FrameSkip); err != nil {
			return fmt.Errorf("env/manip %s: reset: %w", e.task.Name, err)
		}
	}
	if err := e.data.Forward(); err != nil {
		return fmt.Errorf("env/manip %s: %w", e.task.Name, err)
	}
	e.tcpInit = e.TCP()
	if err := e.om.place(e, obj, goal); err != nil {
		return fmt.Errorf("env/manip %s: %w", e.task.Name, err)
	}
	return nil
}

// Step clips action to [-1, 1], moves the mocap by action[:3]·ActionScale
// (clipped to the task's hand bounds, orientation held at MocapQuat), sets
// the finger targets to (action[3], −action[3]), runs FrameSkip MuJoCo
// steps and returns MetaWorld v2's observation and reward. terminated is
// always false (MetaWorld v2 never ends an episode on success); truncated
// is true at step MaxEpisodeSteps, after which Step fails until Reset.
// An error is returned for an action of the wrong length or with NaNs, and
// for a simulator failure; after a simulator failure the environment must
// be Reset or SetState before stepping again.
func (e *Env) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	if e.stale != nil {
		return nil, 0, false, false, e.stale
	}
	if len(action) != ActDim {
		return nil, 0, false, false, fmt.Errorf("env/manip %s: action has %d entries, want %d", e.task.Name, len(action), ActDim)
	}
	if e.steps >= MaxEpisodeSteps {
		return nil, 0, false, false, fmt.Errorf("env/manip %s: episode already has %d steps; Reset first", e.task.Name, e.steps)
	}
	var a [ActDim]float64
	for i, v := range action {
		if math.IsNaN(v) {
			return nil, 0, false, false, fmt.Errorf("env/manip %s: action[%d] is NaN", e.task.Name, i)
		}
		a[i] = math.Max(-1, math.Min(1, v))
	}
	for i := range 3 {
		p := e.mocapPos[i] + a[i]*ActionScale
		e.mocapPos[i] = math.Max(e.task.HandLow[i], math.Min(e.task.HandHigh[i], p))
	}
	copy(e.mocapQuat, MocapQuat[:])
	e.ctrl[0], e.ctrl[1] = a[3], -a[3]
	if err := e.data.Step(FrameSkip); err != nil {
		e.stale = fmt.Errorf("env/manip %s: previous step failed, Reset or SetState required: %w", e.task.Name, err)
		return nil, 0, false, false, fmt.Errorf("env/manip %s: step %d: %w", e.task.Name, e.steps+1, err)
	}
	if err := e.data.Forward(); err != nil {
		e.stale = err
		return nil, 0, false, false, fmt.Errorf("env/manip %s: %w", e.task.Name, err)
	}
	e.steps++
	obs = e.observe()
	reward, e.success = e.om.reward(e, obs, a)
	return obs, reward, false, e.steps >= MaxEpisodeSteps, nil
}

func (e *Env) stateLen() int {
	return len(e.qpos) + 2*len(e.qvel) + len(e.mocapPos) + len(e.mocapQuat) + 9 + ObsFrame + 2
}

// State returns qpos | qvel | qacc_warmstart | mocap positions (3 each) |
// mocap quaternions (4 each) | goal (3) | initial object position (3) |
// initial tool centre point (3) | previous frame (18) | time | elapsed
// steps: everything needed to continue the episode bitwise identically.
// push-v2's state has one mocap body, the other tasks' two.
func (e *Env) State() []float64 {
	s := make([]float64, 0, e.stateLen())
	s = append(s, e.qpos...)
	s = append(s, e.qvel...)
	s = append(s, e.warm...)
	s = append(s, e.mocapPos...)
	s = append(s, e.mocapQuat...)
	s = append(s, e.goal[:]...)
	s = append(s, e.objInit[:]...)
	s = append(s, e.tcpInit[:]...)
	s = append(s, e.prev[:]...)
	return append(s, e.data.Time(), float64(e.steps))
}

// SetState restores a state returned by State of an Env with the same
// name. Continuing from it reproduces the original run bitwise.
func (e *Env) SetState(state []float64) error {
	if e.qpos == nil {
		return e.stale
	}
	steps, err := env.CheckState("env/manip "+e.task.Name, state, e.stateLen(), MaxEpisodeSteps)
	if err != nil {
		return err
	}
	nq, nv := len(e.qpos), len(e.qvel)
	r := state
	take := func(n int) []float64 { v := r[:n]; r = r[n:]; return v }
	qpos, qvel, warm := take(nq), take(nv), take(nv)
	copy(e.qpos, qpos)
	copy(e.qvel, qvel)
	copy(e.mocapPos, take(len(e.mocapPos)))
	copy(e.mocapQuat, take(len(e.mocapQuat)))
	copy(e.goal[:], take(3))
	copy(e.objInit[:], take(3))
	copy(e.tcpInit[:], take(3))
	copy(e.prev[:], take(ObsFrame))
	e.data.SetTime(r[0])
	if err := e.data.Forward(); err != nil {
		e.stale = err
		return err
	}
	// mj_forward overwrites qacc_warmstart and may renormalise the puck's
	// quaternion: put back the exact values for a bitwise continuation.
	copy(e.qpos, qpos)
	copy(e.warm, warm)
	e.steps = steps
	e.success = e.om.success(e) && e.steps > 0
	e.stale = nil
	return nil
}
