package classic

import (
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/env"
)

// CartPole physics constants, as in Gymnasium's CartPoleEnv (SI units).
const (
	// Gravity is the gravitational acceleration g in m/s².
	Gravity = 9.8
	// MassCart is the cart mass in kg.
	MassCart = 1.0
	// MassPole is the pole mass in kg.
	MassPole = 0.1
	// TotalMass is MassCart + MassPole in kg (1.1; exact in float64 as Gym computes it).
	TotalMass = MassPole + MassCart
	// Length is HALF the pole length in m (Gym's "length"; the pole's centre of
	// mass is this far from the pivot).
	Length = 0.5
	// PoleMassLength is MassPole·Length in kg·m (0.05).
	PoleMassLength = MassPole * Length
	// ForceMag is the magnitude of the force applied to the cart in N (±10 for
	// the discrete actions; cartpole-continuous applies ForceMag·a).
	ForceMag = 10.0
	// Tau is the integration time step in s (explicit Euler).
	Tau = 0.02
	// ThetaThresholdRadians is the pole angle beyond which the episode
	// terminates: 12·2π/360 rad evaluated left to right in float64, exactly as
	// Gym computes it (0.20943951023931953; the exact-arithmetic constant would
	// round one ulp higher).
	ThetaThresholdRadians = 0.20943951023931953
	// XThreshold is the cart position in m beyond which the episode terminates.
	XThreshold = 2.4
	// CartPoleMaxEpisodeSteps is CartPole-v1's time limit.
	CartPoleMaxEpisodeSteps = 500
	// CartPoleResetBound is the half-width of the reset box: each of x, ẋ, θ, θ̇
	// is drawn i.i.d. from U(-0.05, 0.05).
	CartPoleResetBound = 0.05
)

// CartPoleDynamics advances the CartPole state [x, ẋ, θ, θ̇] (m, m/s, rad,
// rad/s) by one step of Tau seconds under a horizontal force on the cart in N,
// using Gym's default explicit-Euler integrator: positions are updated with
// the OLD velocities. Operation order matches Gym's so results agree to the
// last ulp of sin/cos. It does not check termination (see CartPoleTerminated).
func CartPoleDynamics(state [4]float64, force float64) [4]float64 {
	return cartPoleEuler(state, force, math.Cos(state[2]), math.Sin(state[2]))
}

// cartPoleEuler is CartPoleDynamics with cos θ and sin θ supplied, so tests
// can substitute NumPy's values and check the operation order bit for bit.
func cartPoleEuler(state [4]float64, force, cosT, sinT float64) [4]float64 {
	x, xDot, theta, thetaDot := state[0], state[1], state[2], state[3]
	// Explicit float64 conversions round each product as NumPy does and stop
	// the compiler from fusing multiply-adds.
	temp := (force + float64(float64(PoleMassLength*float64(thetaDot*thetaDot))*sinT)) / TotalMass
	thetaAcc := (float64(Gravity*sinT) - float64(cosT*temp)) /
		(Length * (4.0/3.0 - float64(MassPole*float64(cosT*cosT))/TotalMass))
	xAcc := temp - float64(float64(PoleMassLength*thetaAcc)*cosT)/TotalMass
	return [4]float64{
		x + float64(Tau*xDot),
		xDot + float64(Tau*xAcc),
		theta + float64(Tau*thetaDot),
		thetaDot + float64(Tau*thetaAcc),
	}
}

// CartPoleTerminated reports whether a CartPole state [x, ẋ, θ, θ̇] is
// terminal: |x| > XThreshold or |θ| > ThetaThresholdRadians (strict).
func CartPoleTerminated(state [4]float64) bool {
	x, theta := state[0], state[2]
	return x < -XThreshold || x > XThreshold || theta < -ThetaThresholdRadians || theta > ThetaThresholdRadians
}

// CartPole is CartPole-v1 ("cartpole", Discrete(2): 0 pushes left with
// -ForceMag, 1 pushes right with +ForceMag) or, when built with
// NewCartPoleContinuous, the same physics with a continuous action a ∈ [-1, 1]
// (clipped) and force ForceMag·a ("cartpole-continuous").
//
// Observation: [x, ẋ, θ, θ̇] rounded to float32 (as Gym returns them), bounds
// [±4.8, ±Inf, ±0.41887903, ±Inf]. Reward +1 every step including the
// terminating one. State: [x, ẋ, θ, θ̇, steps] in float64.
type CartPole struct {
	ep         episode
	continuous bool
	s          [4]float64
}

// NewCartPole returns a discrete-action CartPole-v1 environment. Call Reset
// (or SetState) before Step.
func NewCartPole() *CartPole {
	return &CartPole{ep: episode{name: NameCartPole, limit: CartPoleMaxEpisodeSteps}}
}

// NewCartPoleContinuous returns the continuous-force CartPole variant
// ("cartpole-continuous"). Call Reset (or SetState) before Step.
func NewCartPoleContinuous() *CartPole {
	return &CartPole{ep: episode{name: NameCartPoleContinuous, limit: CartPoleMaxEpisodeSteps}, continuous: true}
}

// Name implements env.Env.
func (c *CartPole) Name() string { return c.ep.name }

// ObservationSpace implements env.Env: float32 bounds
// [±2·XThreshold, ±Inf, ±2·ThetaThresholdRadians, ±Inf].
func (c *CartPole) ObservationSpace() env.Space {
	hi := []float64{f32(XThreshold * 2), math.Inf(1), f32(ThetaThresholdRadians * 2), math.Inf(1)}
	lo := make([]float64, 4)
	for i, h := range hi {
		lo[i] = -h
	}
	return env.Space{Low: lo, High: hi}
}

// ActionSpace implements env.Env: Discrete(2) for "cartpole", Box([-1], [1])
// for "cartpole-continuous".
func (c *CartPole) ActionSpace() env.Space {
	if c.continuous {
		return env.Space{Low: []float64{-1}, High: []float64{1}}
	}
	return env.Space{Discrete: 2}
}

// MaxEpisodeSteps implements env.Env (500).
func (c *CartPole) MaxEpisodeSteps() int { return c.ep.limit }

// Reset implements env.Env: x, ẋ, θ, θ̇ ~ U(-0.05, 0.05) i.i.d., drawn in
// that order from rng.
func (c *CartPole) Reset(rng *rand.Rand) []float64 {
	for i := range c.s {
		c.s[i] = uniform(rng.Float64(), -CartPoleResetBound, CartPoleResetBound)
	}
	c.ep.reset()
	return c.obs()
}

func (c *CartPole) obs() []float64 {
	return []float64{f32(c.s[0]), f32(c.s[1]), f32(c.s[2]), f32(c.s[3])}
}

// Step implements env.Env. The discrete variant requires action = [0] or [1];
// the continuous one clips action[0] to [-1, 1]. Reward is 1 on every step,
// including the terminating one.
func (c *CartPole) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	if err := c.ep.begin(); err != nil {
		return nil, 0, false, false, err
	}
	var force float64
	if c.continuous {
		a, err := continuousAction(c.ep.name, action)
		if err != nil {
			return nil, 0, false, false, err
		}
		force = ForceMag * clip(a, -1, 1)
	} else {
		a, err := discreteAction(c.ep.name, action, 2)
		if err != nil {
			return nil, 0, false, false, err
		}
		force = -ForceMag
		if a == 1 {
			force = ForceMag
		}
	}
	c.s = CartPoleDynamics(c.s, force)
	terminated = CartPoleTerminated(c.s)
	truncated = c.ep.finish(terminated)
	return c.obs(), 1, terminated, truncated, nil
}

// State implements env.Env: [x, ẋ, θ, θ̇, steps] (float64, unrounded).
func (c *CartPole) State() []float64 {
	return []float64{c.s[0], c.s[1], c.s[2], c.s[3], float64(c.ep.steps)}
}

// SetState implements env.Env. It accepts any finite [x, ẋ, θ, θ̇, steps]
// with steps a non-negative integer, and clears the episode-over flag.
func (c *CartPole) SetState(state []float64) error {
	steps, err := env.CheckState(c.ep.name, state, 4+1, maxSteps)
	if err != nil {
		return err
	}
	copy(c.s[:], state[:4])
	c.ep.reset()
	c.ep.steps = steps
	return nil
}

var _ env.Env = (*CartPole)(nil)

func init() {
	env.Register(NameCartPole, func() (env.Env, error) { return NewCartPole(), nil })
	env.Register(NameCartPoleContinuous, func() (env.Env, error) { return NewCartPoleContinuous(), nil })
}
