package classic

import (
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/env"
)

// Pendulum-v1 constants, as in Gymnasium's PendulumEnv (SI units).
const (
	// PendulumMaxSpeed bounds the angular velocity θ̇ in rad/s (clipped each step).
	PendulumMaxSpeed = 8.0
	// PendulumMaxTorque bounds the applied torque u in N·m (actions are clipped).
	PendulumMaxTorque = 2.0
	// PendulumDt is the integration time step in s.
	PendulumDt = 0.05
	// PendulumG is the gravitational acceleration in m/s² (Gym's default g=10).
	PendulumG = 10.0
	// PendulumM is the pendulum mass in kg.
	PendulumM = 1.0
	// PendulumL is the pendulum length in m.
	PendulumL = 1.0
	// PendulumMaxEpisodeSteps is Pendulum-v1's time limit.
	PendulumMaxEpisodeSteps = 200
)

// AngleNormalize wraps an angle in rad into [-π, π) as Gym's
// angle_normalize: ((x + π) mod 2π) − π with a floor-style modulo (result of
// the mod in [0, 2π)).
func AngleNormalize(x float64) float64 {
	const twoPi = 2 * math.Pi
	m := math.Mod(x+math.Pi, twoPi)
	if m < 0 {
		m += twoPi
	}
	return m - math.Pi
}

// PendulumStep advances the Pendulum state [θ (rad), θ̇ (rad/s)] by one step
// of PendulumDt under torque u (N·m, clipped to ±PendulumMaxTorque) and returns
// the next state and the reward −(angle_normalize(θ)² + 0.1·θ̇² + 0.001·u²),
// computed from the PRE-step state and the clipped torque, as in Gym. The
// integrator is semi-implicit: θ̇ is updated (and clipped to
// ±PendulumMaxSpeed) first, then θ ← θ + θ̇'·dt; θ is not wrapped.
func PendulumStep(state [2]float64, u float64) (next [2]float64, reward float64) {
	th, thDot := state[0], state[1]
	u = clip(u, -PendulumMaxTorque, PendulumMaxTorque)
	an := AngleNormalize(th)
	cost := float64(an*an) + float64(0.1*float64(thDot*thDot)) + float64(0.001*float64(u*u))
	// Gym: thdot + (3*g/(2*l)*sin(th) + 3.0/(m*l**2)*u) * dt
	acc := float64(3*PendulumG/(2*PendulumL)*math.Sin(th)) + float64(3.0/(PendulumM*PendulumL*PendulumL)*u)
	newThDot := thDot + float64(acc*PendulumDt)
	newThDot = clip(newThDot, -PendulumMaxSpeed, PendulumMaxSpeed)
	newTh := th + float64(newThDot*PendulumDt)
	return [2]float64{newTh, newThDot}, -cost
}

// Pendulum is Pendulum-v1 ("pendulum"): swing up and balance an inverted
// pendulum. Action: torque in [-2, 2] N·m (clipped). Observation: [cos θ,
// sin θ, θ̇] rounded to float32 (as Gym), bounds [1, 1, 8] symmetric. Never
// terminates; truncated after 200 steps. State: [θ, θ̇, steps] in float64.
type Pendulum struct {
	ep episode
	s  [2]float64
}

// NewPendulum returns a Pendulum-v1 environment. Call Reset (or SetState)
// before Step.
func NewPendulum() *Pendulum {
	return &Pendulum{ep: episode{name: NamePendulum, limit: PendulumMaxEpisodeSteps}}
}

// Name implements env.Env.
func (p *Pendulum) Name() string { return p.ep.name }

// ObservationSpace implements env.Env: [-1, -1, -8] .. [1, 1, 8].
func (p *Pendulum) ObservationSpace() env.Space {
	return env.Space{Low: []float64{-1, -1, -PendulumMaxSpeed}, High: []float64{1, 1, PendulumMaxSpeed}}
}

// ActionSpace implements env.Env: Box([-2], [2]).
func (p *Pendulum) ActionSpace() env.Space {
	return env.Space{Low: []float64{-PendulumMaxTorque}, High: []float64{PendulumMaxTorque}}
}

// MaxEpisodeSteps implements env.Env (200).
func (p *Pendulum) MaxEpisodeSteps() int { return p.ep.limit }

// Reset implements env.Env: θ ~ U(-π, π), then θ̇ ~ U(-1, 1).
func (p *Pendulum) Reset(rng *rand.Rand) []float64 {
	p.s[0] = uniform(rng.Float64(), -math.Pi, math.Pi)
	p.s[1] = uniform(rng.Float64(), -1, 1)
	p.ep.reset()
	return p.obs()
}

func (p *Pendulum) obs() []float64 {
	return []float64{f32(math.Cos(p.s[0])), f32(math.Sin(p.s[0])), f32(p.s[1])}
}

// Step implements env.Env; action[0] is the torque, clipped to [-2, 2].
func (p *Pendulum) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	if err := p.ep.begin(); err != nil {
		return nil, 0, false, false, err
	}
	u, err := continuousAction(p.ep.name, action)
	if err != nil {
		return nil, 0, false, false, err
	}
	p.s, reward = PendulumStep(p.s, u)
	truncated = p.ep.finish(false)
	return p.obs(), reward, false, truncated, nil
}

// State implements env.Env: [θ, θ̇, steps] (float64, θ not wrapped).
func (p *Pendulum) State() []float64 {
	return []float64{p.s[0], p.s[1], float64(p.ep.steps)}
}

// SetState implements env.Env. It accepts any finite [θ, θ̇, steps] with
// steps a non-negative integer, and clears the episode-over flag.
func (p *Pendulum) SetState(state []float64) error {
	steps, err := env.CheckState(p.ep.name, state, 2+1, maxSteps)
	if err != nil {
		return err
	}
	copy(p.s[:], state[:2])
	p.ep.reset()
	p.ep.steps = steps
	return nil
}

var _ env.Env = (*Pendulum)(nil)

func init() {
	env.Register(NamePendulum, func() (env.Env, error) { return NewPendulum(), nil })
}
