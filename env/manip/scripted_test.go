//go:build cgo && !nomujoco

package manip

import "math"

// scripted is a push controller written from push-v2's task definition:
// move above the puck, descend with the gripper open, close on the puck,
// then drag it to the goal at constant height. It reads only the
// observation and keeps no memory.
func scripted(obs []float64) []float64 {
	hand, puck, goal := obs[ObsHand:ObsHand+3], obs[ObsObj:ObsObj+3], obs[ObsGoal:ObsGoal+3]
	const gain = 25.0 // action units per metre: 1 = 1 cm per step
	move := func(target [3]float64, grip float64) []float64 {
		a := make([]float64, ActDim)
		for i := range 3 {
			a[i] = math.Max(-1, math.Min(1, gain*(target[i]-hand[i])))
		}
		a[3] = grip
		return a
	}
	const low = 0.055 // hand height with the finger tips just above the table
	dxy := math.Hypot(hand[0]-puck[0], hand[1]-puck[1])
	switch {
	case dxy > 0.02 && hand[2] < 0.1 && obs[ObsGripper] > 0.8:
		// Low but not over the puck: rise before moving across.
		return move([3]float64{hand[0], hand[1], 0.15}, -1)
	case dxy > 0.012 && obs[ObsGripper] > 0.8:
		return move([3]float64{puck[0], puck[1], 0.15}, -1)
	case hand[2] > low+0.01 && obs[ObsGripper] > 0.8:
		return move([3]float64{puck[0], puck[1], low}, -1)
	case obs[ObsGripper] > 0.6:
		return move([3]float64{puck[0], puck[1], low}, 1) // close
	default:
		return move([3]float64{goal[0], goal[1], low}, 1)
	}
}
