package classic

import (
	"fmt"
	"math"
)

// Registry names of the environments in this package.
const (
	// NameCartPole is CartPole-v1 (discrete actions).
	NameCartPole = "cartpole"
	// NameCartPoleContinuous is CartPole with a continuous force action.
	NameCartPoleContinuous = "cartpole-continuous"
	// NamePendulum is Pendulum-v1.
	NamePendulum = "pendulum"
	// NameMountainCarContinuous is MountainCarContinuous-v0.
	NameMountainCarContinuous = "mountaincar-continuous"
)

// maxSteps bounds the step counter accepted by SetState: integers up to 2^53
// are exact in float64.
const maxSteps = 1 << 53

// episode is the bookkeeping shared by all environments: elapsed steps and
// whether the episode may be stepped.
type episode struct {
	name    string
	limit   int
	steps   int
	started bool // Reset or SetState has been called
	over    bool // last Step terminated or truncated
}

// begin checks that a Step is allowed.
func (e *episode) begin() error {
	if !e.started {
		return fmt.Errorf("%s: Step called before Reset or SetState", e.name)
	}
	if e.over {
		return fmt.Errorf("%s: Step called after the episode ended (terminated or truncated); call Reset", e.name)
	}
	return nil
}

// finish advances the step counter and returns truncated.
func (e *episode) finish(terminated bool) bool {
	e.steps++
	truncated := e.steps >= e.limit
	e.over = terminated || truncated
	return truncated
}

// reset marks the start of a fresh episode.
func (e *episode) reset() {
	e.steps = 0
	e.started = true
	e.over = false
}

// continuousAction validates a one-dimensional continuous action and returns
// its value (unclipped).
func continuousAction(name string, action []float64) (float64, error) {
	if len(action) != 1 {
		return 0, fmt.Errorf("%s: action has length %d, want 1", name, len(action))
	}
	a := action[0]
	if math.IsNaN(a) || math.IsInf(a, 0) {
		return 0, fmt.Errorf("%s: action %v is not finite", name, a)
	}
	return a, nil
}

// discreteAction validates a discrete action (length-1 slice holding an
// integer index in [0, n)) and returns the index.
func discreteAction(name string, action []float64, n int) (int, error) {
	if len(action) != 1 {
		return 0, fmt.Errorf("%s: action has length %d, want 1 (a discrete index)", name, len(action))
	}
	a := action[0]
	if math.IsNaN(a) || math.IsInf(a, 0) {
		return 0, fmt.Errorf("%s: action %v is not finite", name, a)
	}
	if a != math.Trunc(a) || a < 0 || a >= float64(n) {
		return 0, fmt.Errorf("%s: discrete action %v is not an index in 0..%d", name, a, n-1)
	}
	return int(a), nil
}

// f32 rounds x to float32 precision, as Gym does for its observations.
func f32(x float64) float64 { return float64(float32(x)) }

// clip limits x to [lo, hi].
func clip(x, lo, hi float64) float64 {
	return math.Min(math.Max(x, lo), hi)
}

// uniform draws from U(lo, hi) as NumPy does: lo + (hi-lo)·U, U ∈ [0, 1).
func uniform(u, lo, hi float64) float64 {
	return lo + float64((hi-lo)*u)
}
