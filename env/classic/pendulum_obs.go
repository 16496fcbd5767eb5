package classic

import (
	"fmt"
	"math"
)

// SetStateFromObservation sets the pendulum to the state an observation
// obs = (cos θ, sin θ, θ̇) describes, with θ = atan2(sin θ, cos θ) (a point off
// the unit circle is projected onto it). x is ignored; it exists so that the
// method has the same signature as (*mujoco.Env).SetStateFromObservation. The
// step counter restarts at 0 and the episode-over flag is cleared.
func (p *Pendulum) SetStateFromObservation(obs []float64, x float64) error {
	if len(obs) != 3 {
		return fmt.Errorf("%s: observation has %d entries, want 3 (cos θ, sin θ, θ̇)", p.ep.name, len(obs))
	}
	for i, v := range obs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: observation[%d] = %v is not finite", p.ep.name, i, v)
		}
	}
	if obs[0] == 0 && obs[1] == 0 {
		return fmt.Errorf("%s: observation has cos θ = sin θ = 0, no angle", p.ep.name)
	}
	return p.SetState([]float64{math.Atan2(obs[1], obs[0]), obs[2], 0})
}
