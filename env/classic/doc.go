// Package classic implements Gymnasium's classic-control environments in pure
// Go with float64 physics, and registers them with package env:
//
//	"cartpole"               CartPole-v1: Discrete(2), 500-step limit
//	"cartpole-continuous"    CartPole physics with force = ForceMag·clip(a, -1, 1), 500 steps
//	"pendulum"               Pendulum-v1: torque in [-2, 2], 200-step limit
//	"mountaincar-continuous" MountainCarContinuous-v0: force in [-1, 1], 999-step limit
//
// Dynamics, constants, observation bounds, reward and termination follow
// Gymnasium 1.4.0 (identical to gym 0.26) operation by operation, so a
// trajectory started from the same state with the same actions agrees with
// Gym's to within the last-ulp differences of sin/cos between NumPy and Go's
// math package (the tests check ~1e-12 against reference trajectories produced
// by Gymnasium itself, testdata/classic-control-golden.txt). Products that Gym
// rounds before adding are wrapped in explicit float64 conversions so that Go
// never fuses them into FMA instructions on architectures that have them.
//
// # Precision (float32)
//
// Gym keeps CartPole and Pendulum state in float64 but returns float32
// observations; MountainCarContinuous stores its state as float32 after every
// step. This package does the same: observations are float64 slices holding
// float32-rounded values (so they equal Gym's observations exactly), while
// State/SetState expose the unrounded float64 physics state (for
// MountainCarContinuous, that state is float32-rounded by Step, as in Gym).
//
// # Differences from Gym
//
//   - Step returns an error (Gym would warn or assert) for an action of the
//     wrong length, a NaN or ±Inf action, a discrete action that is not 0 or 1,
//     stepping before the first Reset/SetState, and stepping after the episode
//     ended (terminated or truncated) without Reset or SetState. Gym only warns
//     when stepping past a terminal and returns reward 0.
//   - Time limits are enforced by the environment itself (Gym uses the
//     TimeLimit wrapper): truncated is true on the step at which the elapsed
//     step count reaches MaxEpisodeSteps; terminated and truncated can both
//     be true on that step, as in Gym.
//   - Reset draws from the given *rand.Rand with Gym's uniform ranges; the
//     numbers differ from NumPy's PCG64 stream for the same seed.
//   - "cartpole-continuous" is not a Gym environment; it exists to give the
//     CartPole physics a one-dimensional continuous action for SAC/CQL.
//
// State layouts (last element is always the elapsed step count, a
// non-negative integer stored as float64):
//
//	cartpole, cartpole-continuous: [x (m), ẋ (m/s), θ (rad), θ̇ (rad/s), steps]
//	pendulum:                      [θ (rad, not wrapped), θ̇ (rad/s), steps]
//	mountaincar-continuous:        [position, velocity, steps]
//
// SetState accepts any finite physics state (it does not check the
// termination bounds, so perturbed or shifted states can be simulated, e.g.
// for measuring symmetry accuracy) and clears the episode-over flag.
package classic
