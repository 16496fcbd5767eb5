package env

import (
	"fmt"
	"math"
)

// CheckState validates a state vector given to an Env's SetState before
// anything of the simulator is touched, so that a refused state leaves the
// environment as it was. The vector must have want entries (the layout's
// full length, elapsed steps included), every entry must be finite, and its
// last entry, the elapsed step count (see Env.State), must be an integer in
// [0, maxSteps]. It returns that count. who names the environment in the
// errors, e.g. "env/mujoco hopper".
func CheckState(who string, state []float64, want, maxSteps int) (steps int, err error) {
	if len(state) != want || want == 0 {
		return 0, fmt.Errorf("%s: state has length %d, want %d (physics values + elapsed steps)", who, len(state), want)
	}
	for i, v := range state {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s: state[%d] = %v is not finite", who, i, v)
		}
	}
	last := len(state) - 1
	s := state[last]
	if s < 0 || s != math.Trunc(s) || s > float64(maxSteps) {
		return 0, fmt.Errorf("%s: state[%d] = %v is not a valid elapsed step count (an integer in [0, %d])", who, last, s, maxSteps)
	}
	return int(s), nil
}
