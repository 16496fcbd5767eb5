//go:build cgo && !nomujoco

package mujoco

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/env"
	mj "github.com/koopq/koopq/internal/mujoco"
)

func init() {
	for _, name := range append(append(Names(), AntMazeNames()...), AntGoalName) {
		env.Register(name, func() (env.Env, error) { return New(name, Options{}) })
	}
}

// Env is one MuJoCo locomotion environment. It implements env.Env.
//
// State layout (see State): qpos [nq] | qvel [nv] | qacc_warmstart [nv] |
// act [na] | goal x, y (AntMaze only) | time | x | elapsed steps, where x is
// the progress coordinate of the last step (qpos[0], or the Ant torso's xpos
// x as last computed by MuJoCo).
type Env struct {
	task  *task
	robot Robot
	opt   Options
	model *mj.Model
	data  *mj.Data

	qpos, qvel, warm, act, ctrl, xpos, cfrc []float64 // views into C memory

	qpos0    []float64
	dt       float64
	torso    int // body id for the progress x (-1: use qpos[0])
	obsDim   int
	steps    int
	x        float64    // progress coordinate after the last step/reset
	goal     [2]float64 // AntMaze: the episode's goal x, y (metres)
	stale    error      // non-nil: Reset or SetState required
	actBuf   []float64
	obsSpace env.Space
	actSpace env.Space
}

var _ env.Env = (*Env)(nil)

// New builds the environment registered as name ("hopper", "walker2d",
// "halfcheetah", "ant" or an AntMaze name, see Mazes) with the given
// options. Call Reset before Step.
func New(name string, opt Options) (*Env, error) {
	t, ok := tasks[name]
	if !ok {
		return nil, fmt.Errorf("env/mujoco: unknown environment %q (known: %v)", name, Names())
	}
	r := t.robot()
	m, err := mj.LoadXML(r.MJCF(opt.ModelOptions))
	if err != nil {
		return nil, fmt.Errorf("env/mujoco %s: %w", name, err)
	}
	d, err := mj.NewData(m)
	if err != nil {
		return nil, fmt.Errorf("env/mujoco %s: %w", name, err)
	}
	e := &Env{task: t, robot: r, opt: opt, model: m, data: d,
		qpos: d.QPos(), qvel: d.QVel(), warm: d.QaccWarmstart(), act: d.Act(),
		ctrl: d.Ctrl(), xpos: d.XPos(), cfrc: d.CfrcExt(),
		qpos0: m.Qpos0(), dt: m.Timestep() * float64(r.FrameSkip), torso: -1,
		stale: errors.New("env/mujoco: Step before Reset"),
	}
	if t.xBody != "" {
		if e.torso = m.ID(mj.ObjBody, t.xBody); e.torso < 0 {
			return nil, fmt.Errorf("env/mujoco %s: no body %q", name, t.xBody)
		}
	}
	e.obsDim = t.obsDim(m.NQ(), m.NV(), m.NBody())
	e.obsSpace = env.Space{Low: make([]float64, e.obsDim), High: make([]float64, e.obsDim)}
	for i := range e.obsSpace.Low {
		e.obsSpace.Low[i], e.obsSpace.High[i] = math.Inf(-1), math.Inf(1)
	}
	cr := m.ActuatorCtrlRange()
	e.actSpace = env.Space{Low: make([]float64, m.NU()), High: make([]float64, m.NU())}
	for i := range e.actSpace.Low {
		e.actSpace.Low[i], e.actSpace.High[i] = cr[2*i], cr[2*i+1]
	}
	e.actBuf = make([]float64, m.NU())
	return e, nil
}

// Close frees the simulator's C memory now instead of at garbage collection.
// The Env must not be used afterwards.
func (e *Env) Close() {
	e.data.Close()
	e.model.Close()
	e.qpos, e.qvel, e.warm, e.act, e.ctrl, e.xpos, e.cfrc = nil, nil, nil, nil, nil, nil, nil
	e.stale = errors.New("env/mujoco: environment closed")
}

// Name returns the registry name.
func (e *Env) Name() string { return e.task.name }

// ObservationSpace is unbounded: 11 (hopper), 17 (walker2d, halfcheetah),
// 111 (ant) or 29 (AntMaze: qpos[0:15] then qvel[0:14], x-y included and
// the goal left out, as in D4RL's antmaze datasets) dimensions.
func (e *Env) ObservationSpace() env.Space { return e.obsSpace }

// ActionSpace is [-1, 1]^nu (nu = 3, 6, 6, 8).
func (e *Env) ActionSpace() env.Space { return e.actSpace }

// MaxEpisodeSteps is 1000 (700 for the AntMaze U-maze).
func (e *Env) MaxEpisodeSteps() int { return e.task.maxSteps() }

// Maze returns the AntMaze layout, or nil for the locomotion envs.
func (e *Env) Maze() *Maze { return e.task.maze }

// Goal returns the episode's goal x, y in metres (AntMaze; zero otherwise).
func (e *Env) Goal() (x, y float64) { return e.goal[0], e.goal[1] }

// SetGoal replaces the episode's goal (AntMaze), as D4RL's set_target does
// for data collection with other goals than the evaluation one.
func (e *Env) SetGoal(x, y float64) error {
	if !e.task.hasGoal() {
		return fmt.Errorf("env/mujoco %s: SetGoal needs an AntMaze or %s env", e.task.name, AntGoalName)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("env/mujoco %s: goal (%v, %v) is not finite", e.task.name, x, y)
	}
	e.goal = [2]float64{x, y}
	return nil
}

// goalReached reports whether the torso's x-y (qpos[0:2]) is within
// GoalRadius of the goal.
func (e *Env) goalReached() bool {
	return math.Hypot(e.qpos[0]-e.goal[0], e.qpos[1]-e.goal[1]) <= GoalRadius
}

// Robot returns the parameter table the model was generated from.
func (e *Env) Robot() Robot { return e.robot }

// Dt is the duration of one env step (timestep × frame skip) in seconds.
func (e *Env) Dt() float64 { return e.dt }

// X is the progress coordinate whose change per Dt is the forward velocity
// in the reward: qpos[0], or for the Ant the torso's x position as MuJoCo
// last computed it.
func (e *Env) X() float64 { return e.x }

// ElapsedSteps is the number of steps since Reset.
func (e *Env) ElapsedSteps() int { return e.steps }

// QPos returns a copy of the generalized positions, [nq].
func (e *Env) QPos() []float64 { return append([]float64(nil), e.qpos...) }

// QVel returns a copy of the generalized velocities, [nv].
func (e *Env) QVel() []float64 { return append([]float64(nil), e.qvel...) }

func (e *Env) progressX() float64 {
	if e.torso >= 0 {
		return e.xpos[3*e.torso]
	}
	return e.qpos[0]
}

func (e *Env) observe() []float64 {
	obs := make([]float64, e.obsDim)
	n := copy(obs, e.qpos[e.task.skipPos:])
	for i, v := range e.qvel {
		if c := e.task.clipVel; c > 0 {
			v = math.Max(-c, math.Min(c, v))
		}
		obs[n+i] = v
	}
	n += len(e.qvel)
	if e.task.cfrcObs {
		for i, v := range e.cfrc {
			obs[n+i] = math.Max(-1, math.Min(1, v))
		}
	}
	if e.task.goalDisk > 0 {
		obs[n], obs[n+1] = e.goal[0]-e.qpos[0], e.goal[1]-e.qpos[1]
	}
	return obs
}

// Reset draws qpos = qpos0 + noise and qvel = noise from rng (Gym's
// reset_model), runs mj_forward and returns the first observation. An
// AntMaze env first draws the episode's goal (Maze.SampleGoal), as D4RL's
// v2 envs do at every reset.
func (e *Env) Reset(rng *rand.Rand) []float64 {
	t := e.task
	switch {
	case t.maze != nil:
		e.goal[0], e.goal[1] = t.maze.SampleGoal(rng)
	case t.goalDisk > 0: // D4RL's disk_goal_sampler
		th, r := 2*math.Pi*rng.Float64(), t.goalDisk*rng.Float64()
		e.goal[0], e.goal[1] = r*math.Cos(th), r*math.Sin(th)
	}
	e.data.Reset()
	for i := range e.qpos {
		e.qpos[i] = e.qpos0[i] + (-t.qposNoise + 2*t.qposNoise*rng.Float64())
	}
	for i := range e.qvel {
		if t.qvelNorm {
			e.qvel[i] = t.qvelNoise * rng.NormFloat64()
		} else {
			e.qvel[i] = -t.qvelNoise + 2*t.qvelNoise*rng.Float64()
		}
	}
	e.stale = e.forward()
	e.steps = 0
	e.x = e.progressX()
	return e.observe()
}

func (e *Env) forward() error {
	if err := e.data.Forward(); err != nil {
		return fmt.Errorf("env/mujoco %s: %w", e.task.name, err)
	}
	if e.opt.ContactForces {
		if err := e.data.RnePostConstraint(); err != nil {
			return fmt.Errorf("env/mujoco %s: %w", e.task.name, err)
		}
	}
	return nil
}

// Step clips action to [-1, 1], applies it for FrameSkip MuJoCo steps and
// returns Gym's observation, reward and termination. truncated is true once
// ElapsedSteps reaches MaxEpisodeSteps (it can be true together with
// terminated). AntMaze: reward 1 and terminated when the goal is reached,
// else reward 0 (D4RL's sparse eval envs).
// An error is returned for an action of the wrong length or with NaNs, and
// for a simulator failure (wrapping ErrBadState when MuJoCo met a NaN or
// huge state, which it would silently reset); after a simulator failure the
// environment must be Reset or SetState before stepping again.
func (e *Env) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	if e.stale != nil {
		return nil, 0, false, false, e.stale
	}
	if len(action) != len(e.actBuf) {
		return nil, 0, false, false, fmt.Errorf("env/mujoco %s: action has %d entries, want %d", e.task.name, len(action), len(e.actBuf))
	}
	for i, a := range action {
		if math.IsNaN(a) {
			return nil, 0, false, false, fmt.Errorf("env/mujoco %s: action[%d] is NaN", e.task.name, i)
		}
		e.actBuf[i] = math.Max(e.actSpace.Low[i], math.Min(e.actSpace.High[i], a))
	}
	copy(e.ctrl, e.actBuf)
	xBefore := e.x
	if err := e.data.Step(e.robot.FrameSkip); err != nil {
		e.stale = fmt.Errorf("env/mujoco %s: previous step failed, Reset or SetState required: %w", e.task.name, err)
		return nil, 0, false, false, fmt.Errorf("env/mujoco %s: step %d: %w", e.task.name, e.steps+1, err)
	}
	if e.opt.ContactForces {
		if err := e.data.RnePostConstraint(); err != nil {
			e.stale = err
			return nil, 0, false, false, fmt.Errorf("env/mujoco %s: %w", e.task.name, err)
		}
	}
	e.x = e.progressX()
	e.steps++
	if e.task.maze != nil {
		if terminated = e.goalReached(); terminated {
			reward = 1
		}
	} else if e.task.goalDisk > 0 {
		reward = -math.Hypot(e.goal[0]-e.qpos[0], e.goal[1]-e.qpos[1])
	} else {
		reward = e.task.reward(xBefore, e.x, e.dt, e.actBuf, e.cfrc)
	}
	if e.task.isHealthy != nil {
		terminated = !e.task.isHealthy(e.qpos, e.qvel)
	}
	truncated = e.steps >= e.task.maxSteps()
	return e.observe(), reward, terminated, truncated, nil
}

func (e *Env) goalLen() int {
	if e.task.hasGoal() {
		return 2
	}
	return 0
}

func (e *Env) stateLen() int { return len(e.qpos) + 2*len(e.qvel) + len(e.act) + e.goalLen() + 3 }

// State returns qpos | qvel | qacc_warmstart | act | goal (AntMaze) | time |
// x | elapsed steps: everything needed to continue the episode bitwise
// identically.
func (e *Env) State() []float64 {
	s := make([]float64, 0, e.stateLen())
	s = append(s, e.qpos...)
	s = append(s, e.qvel...)
	s = append(s, e.warm...)
	s = append(s, e.act...)
	s = append(s, e.goal[:e.goalLen()]...)
	return append(s, e.data.Time(), e.x, float64(e.steps))
}

// SetState restores a state returned by State (of an Env with the same name
// and options). Continuing from it reproduces the original run bitwise.
func (e *Env) SetState(state []float64) error {
	if e.qpos == nil {
		return e.stale
	}
	steps, err := env.CheckState("env/mujoco "+e.task.name, state, e.stateLen(), math.MaxInt32)
	if err != nil {
		return err
	}
	nq, nv, na := len(e.qpos), len(e.qvel), len(e.act)
	qpos, qvel := state[:nq], state[nq:nq+nv]
	warm, act := state[nq+nv:nq+2*nv], state[nq+2*nv:nq+2*nv+na]
	copy(e.qpos, qpos)
	copy(e.qvel, qvel)
	copy(e.act, act)
	ng := e.goalLen()
	copy(e.goal[:ng], state[nq+2*nv+na:])
	e.data.SetTime(state[nq+2*nv+na+ng])
	if err := e.forward(); err != nil {
		e.stale = err
		return err
	}
	// mj_forward overwrites qacc_warmstart (and may renormalise quaternions
	// in qpos): put back the exact values so the next step is bitwise the
	// same as in the original run.
	copy(e.qpos, qpos)
	copy(e.warm, warm)
	e.x = state[len(state)-2]
	e.steps = steps
	e.stale = nil
	return nil
}

// SetStateFromObservation sets the simulator to the state an observation
// describes, with x as the omitted x position (for the Ant, y is set to 0;
// the dynamics do not depend on either). Velocities are taken as observed,
// so for Hopper and Walker2d a |qvel| beyond the observation's clip at 10 is
// lost; the Ant's contact-force entries are ignored. The constraint-solver
// warm start is the acceleration mj_forward solves for at this state (as in
// Gym's set_state). The elapsed step count is left unchanged.
func (e *Env) SetStateFromObservation(obs []float64, x float64) error {
	if e.qpos == nil {
		return e.stale
	}
	if len(obs) != e.obsDim {
		return fmt.Errorf("env/mujoco %s: observation has %d entries, want %d", e.task.name, len(obs), e.obsDim)
	}
	for i, v := range obs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("env/mujoco %s: observation[%d] = %v is not finite", e.task.name, i, v)
		}
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("env/mujoco %s: x = %v is not finite", e.task.name, x)
	}
	k := e.task.skipPos
	e.qpos[0] = x
	for i := 1; i < k; i++ {
		e.qpos[i] = 0
	}
	n := copy(e.qpos[k:], obs)
	copy(e.qvel, obs[n:])
	for i := range e.act {
		e.act[i] = 0
	}
	if err := e.forward(); err != nil {
		e.stale = err
		return err
	}
	e.x = e.progressX()
	e.stale = nil
	return nil
}
