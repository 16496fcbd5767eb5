package classic

import (
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/env"
)

// MountainCarContinuous-v0 constants, as in Gymnasium's
// Continuous_MountainCarEnv (position and velocity in Gym's arbitrary units
// per step).
const (
	// MountainCarMinAction is the lower bound of the force action.
	MountainCarMinAction = -1.0
	// MountainCarMaxAction is the upper bound of the force action.
	MountainCarMaxAction = 1.0
	// MountainCarMinPosition is the left bound of the position, an inelastic
	// wall (velocity is zeroed when the car hits it moving left).
	MountainCarMinPosition = -1.2
	// MountainCarMaxPosition is the right bound of the position (clipped).
	MountainCarMaxPosition = 0.6
	// MountainCarMaxSpeed bounds |velocity| (clipped each step).
	MountainCarMaxSpeed = 0.07
	// MountainCarGoalPosition is the position at or beyond which (with
	// velocity ≥ MountainCarGoalVelocity) the episode terminates with +100.
	MountainCarGoalPosition = 0.45
	// MountainCarGoalVelocity is the minimum velocity at the goal (Gym default 0).
	MountainCarGoalVelocity = 0.0
	// MountainCarPower scales the clipped action into a velocity change.
	MountainCarPower = 0.0015
	// MountainCarMaxEpisodeSteps is MountainCarContinuous-v0's time limit.
	MountainCarMaxEpisodeSteps = 999
)

// MountainCarStep advances the MountainCarContinuous state [position,
// velocity] by one step under action a, exactly as Gym:
//
//	force = clip(a, -1, 1)
//	v ← clip(v + (force·0.0015 − 0.0025·cos(3x)), ±0.07)
//	x ← clip(x + v, -1.2, 0.6);  if x == -1.2 and v < 0 { v = 0 }
//	terminated = x ≥ 0.45 and v ≥ 0
//	reward = 100·[terminated] − 0.1·a²   (penalty on the RAW, unclipped a)
//
// The returned state is rounded to float32, as Gym stores it.
func MountainCarStep(state [2]float64, a float64) (next [2]float64, reward float64, terminated bool) {
	x, v := state[0], state[1]
	force := math.Min(math.Max(a, MountainCarMinAction), MountainCarMaxAction)
	v += float64(force*MountainCarPower) - float64(0.0025*math.Cos(float64(3*x)))
	if v > MountainCarMaxSpeed {
		v = MountainCarMaxSpeed
	}
	if v < -MountainCarMaxSpeed {
		v = -MountainCarMaxSpeed
	}
	x += v
	if x > MountainCarMaxPosition {
		x = MountainCarMaxPosition
	}
	if x < MountainCarMinPosition {
		x = MountainCarMinPosition
	}
	if x == MountainCarMinPosition && v < 0 {
		v = 0
	}
	terminated = x >= MountainCarGoalPosition && v >= MountainCarGoalVelocity
	if terminated {
		reward = 100
	}
	reward -= float64(a*a) * 0.1
	return [2]float64{f32(x), f32(v)}, reward, terminated
}

// MountainCarContinuous is MountainCarContinuous-v0 ("mountaincar-continuous").
// Action: force in [-1, 1] (clipped for the physics; the −0.1·a² penalty uses
// the raw action, as in Gym). Observation: [position, velocity] as float32,
// bounds [-1.2, -0.07] .. [0.6, 0.07] (float32-rounded). Terminates at the
// goal with +100; truncated after 999 steps. State: [position, velocity,
// steps]; Step stores the physics state float32-rounded, as Gym.
type MountainCarContinuous struct {
	ep episode
	s  [2]float64
}

// NewMountainCarContinuous returns a MountainCarContinuous-v0 environment.
// Call Reset (or SetState) before Step.
func NewMountainCarContinuous() *MountainCarContinuous {
	return &MountainCarContinuous{ep: episode{name: NameMountainCarContinuous, limit: MountainCarMaxEpisodeSteps}}
}

// Name implements env.Env.
func (m *MountainCarContinuous) Name() string { return m.ep.name }

// ObservationSpace implements env.Env (float32-rounded bounds, as Gym).
func (m *MountainCarContinuous) ObservationSpace() env.Space {
	return env.Space{
		Low:  []float64{f32(MountainCarMinPosition), f32(-MountainCarMaxSpeed)},
		High: []float64{f32(MountainCarMaxPosition), f32(MountainCarMaxSpeed)},
	}
}

// ActionSpace implements env.Env: Box([-1], [1]).
func (m *MountainCarContinuous) ActionSpace() env.Space {
	return env.Space{Low: []float64{MountainCarMinAction}, High: []float64{MountainCarMaxAction}}
}

// MaxEpisodeSteps implements env.Env (999).
func (m *MountainCarContinuous) MaxEpisodeSteps() int { return m.ep.limit }

// Reset implements env.Env: position ~ U(-0.6, -0.4) (kept in float64 until
// the first Step, as Gym), velocity 0.
func (m *MountainCarContinuous) Reset(rng *rand.Rand) []float64 {
	m.s[0] = uniform(rng.Float64(), -0.6, -0.4)
	m.s[1] = 0
	m.ep.reset()
	return m.obs()
}

func (m *MountainCarContinuous) obs() []float64 {
	return []float64{f32(m.s[0]), f32(m.s[1])}
}

// Step implements env.Env; action[0] is the force.
func (m *MountainCarContinuous) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	if err := m.ep.begin(); err != nil {
		return nil, 0, false, false, err
	}
	a, err := continuousAction(m.ep.name, action)
	if err != nil {
		return nil, 0, false, false, err
	}
	m.s, reward, terminated = MountainCarStep(m.s, a)
	truncated = m.ep.finish(terminated)
	return m.obs(), reward, terminated, truncated, nil
}

// State implements env.Env: [position, velocity, steps].
func (m *MountainCarContinuous) State() []float64 {
	return []float64{m.s[0], m.s[1], float64(m.ep.steps)}
}

// SetState implements env.Env. It accepts any finite [position, velocity,
// steps] with steps a non-negative integer (stored as given, not rounded),
// and clears the episode-over flag.
func (m *MountainCarContinuous) SetState(state []float64) error {
	steps, err := env.CheckState(m.ep.name, state, 2+1, maxSteps)
	if err != nil {
		return err
	}
	copy(m.s[:], state[:2])
	m.ep.reset()
	m.ep.steps = steps
	return nil
}

var _ env.Env = (*MountainCarContinuous)(nil)

func init() {
	env.Register(NameMountainCarContinuous, func() (env.Env, error) { return NewMountainCarContinuous(), nil })
}
