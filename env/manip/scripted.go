package manip

import (
	"fmt"
	"math"
	"sort"
)

// Scripted is a behaviour policy written by hand from a task's definition.
// It reads only the 39-D observation (as MetaWorld's own scripted policies
// do), keeps no memory and returns a fresh 4-D action in [-1, 1]. Scripted
// controllers show that a task's physics, contacts and success test work
// (each must succeed in at least 90% of randomized episodes), and, with
// noise added, they are the behaviour policies of koopq's manipulation
// datasets.
type Scripted func(obs []float64) []float64

// scriptedPolicies maps a task's registry name to its scripted controller.
var scriptedPolicies = map[string]Scripted{PushName: ScriptedPush}

// ScriptedPolicy returns the scripted controller of a registered task.
func ScriptedPolicy(task string) (Scripted, error) {
	p, ok := scriptedPolicies[task]
	if !ok {
		names := make([]string, 0, len(scriptedPolicies))
		for k := range scriptedPolicies {
			names = append(names, k)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("manip: no scripted controller for %q (have: %v)", task, names)
	}
	return p, nil
}

// moveTo returns the action that drags the hand toward target at up to
// 1 cm per step (gain 25 action units per metre, clipped to [-1, 1]) with
// gripper command grip (-1 open, +1 closed).
func moveTo(hand []float64, target [3]float64, grip float64) []float64 {
	const gain = 25.0
	a := make([]float64, ActDim)
	for i := range 3 {
		a[i] = math.Max(-1, math.Min(1, gain*(target[i]-hand[i])))
	}
	a[3] = grip
	return a
}

// ScriptedPush is push-v2's controller, written from the task definition:
// move above the puck, descend with the gripper open, close on the puck,
// then drag it to the goal at constant height.
func ScriptedPush(obs []float64) []float64 {
	hand, puck, goal := obs[ObsHand:ObsHand+3], obs[ObsObj:ObsObj+3], obs[ObsGoal:ObsGoal+3]
	const low = 0.055 // hand height with the finger tips just above the table
	dxy := math.Hypot(hand[0]-puck[0], hand[1]-puck[1])
	switch {
	case dxy > 0.02 && hand[2] < 0.1 && obs[ObsGripper] > 0.8:
		// Low but not over the puck: rise before moving across.
		return moveTo(hand, [3]float64{hand[0], hand[1], 0.15}, -1)
	case dxy > 0.012 && obs[ObsGripper] > 0.8:
		return moveTo(hand, [3]float64{puck[0], puck[1], 0.15}, -1)
	case hand[2] > low+0.01 && obs[ObsGripper] > 0.8:
		return moveTo(hand, [3]float64{puck[0], puck[1], low}, -1)
	case obs[ObsGripper] > 0.6:
		return moveTo(hand, [3]float64{puck[0], puck[1], low}, 1) // close
	default:
		return moveTo(hand, [3]float64{goal[0], goal[1], low}, 1)
	}
}
