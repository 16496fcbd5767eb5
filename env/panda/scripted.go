package panda

import (
	"fmt"
	"math"
)

// Scripted is a behaviour policy written by hand from a task's definition.
// It reads only the observation, keeps no memory and returns a fresh
// action in [-1, 1] of the task's length (Lift 4, Door 7). Scripted controllers show that a task's physics,
// contacts and success test work, and, with noise added, they can serve as
// behaviour policies for datasets.
type Scripted func(obs []float64) []float64

// ScriptedPolicy returns the scripted controller of a registered task.
func ScriptedPolicy(task string) (Scripted, error) {
	switch task {
	case LiftName:
		return ScriptedLift, nil
	case DoorName:
		return ScriptedDoor, nil
	}
	return nil, fmt.Errorf("panda: no scripted controller for %q (have: %v)", task, Names())
}

// Heights of ScriptedLift's phases relative to the cube's centre (metres).
const (
	liftHover = 0.08   // move across at this height above the cube
	liftGrasp = -0.008 // grip site this far from the cube centre centres the pads on it
	liftTop   = 0.20   // lift the cube to this height above the table
)

// toward returns the action whose goal (eef + a·OutputMax) approaches
// target, each component clipped to [-1, 1], with gripper command grip.
func toward(eef []float64, target [3]float64, grip float64) []float64 {
	a := make([]float64, ActDim)
	for i := range 3 {
		a[i] = math.Max(-1, math.Min(1, (target[i]-eef[i])/OutputMax))
	}
	a[3] = grip
	return a
}

// ScriptedLift is the Lift controller, written from the task definition:
// move above the cube with the gripper open, descend until the pads are
// level with the cube's centre, close, and lift. Every decision is a
// function of the current observation: the fingers' opening (q1 − q2)
// tells whether the gripper holds the cube (between about the cube's width
// and its diagonal), closed on nothing (well below the width), or is open.
func ScriptedLift(obs []float64) []float64 {
	eef := obs[ObsEEFPos : ObsEEFPos+3]
	cube := obs[ObsCubePos : ObsCubePos+3]
	opening := obs[ObsGripperQpos] - obs[ObsGripperQpos+1]
	dxy := math.Hypot(eef[0]-cube[0], eef[1]-cube[1])
	dz := eef[2] - cube[2]
	width := 2 * CubeHalf
	// The pads span 0.0036 … 0.0196 m above the grip site, so they can touch
	// the cube while dz lies in (−0.0406, 0.0174).
	// A cube held across its faces reads about width − 0.009 (the pads sink
	// into it), one held across its diagonal (when its yaw is near 45°) up
	// to √2·width; until the fingers settle, lift slowly.
	holding := opening > width-0.02 && opening < math.Sqrt2*width+0.003 && dxy < 0.03 && dz > -0.04 && dz < 0.017
	switch {
	case holding && opening > width:
		a := toward(eef, [3]float64{eef[0], eef[1], TableTopZ + liftTop}, 1)
		a[2] = math.Min(a[2], 0.2)
		return a
	case holding:
		return toward(eef, [3]float64{eef[0], eef[1], TableTopZ + liftTop}, 1)
	case opening < width-0.02:
		// Closed on nothing (or still opening from a miss): open and rise.
		return toward(eef, [3]float64{eef[0], eef[1], cube[2] + liftHover}, -1)
	case dxy > 0.01 && dz < liftHover/2:
		// Low but not over the cube: rise before moving across.
		return toward(eef, [3]float64{eef[0], eef[1], cube[2] + liftHover}, -1)
	case dxy > 0.01:
		return toward(eef, [3]float64{cube[0], cube[1], cube[2] + liftHover}, -1)
	case dz > liftGrasp+0.006 && opening > 0.07:
		return toward(eef, [3]float64{cube[0], cube[1], cube[2] + liftGrasp}, -1)
	case dz > liftGrasp+0.006:
		// Over the cube but not yet open: wait for the fingers.
		return toward(eef, [3]float64{cube[0], cube[1], eef[2]}, -1)
	default:
		return toward(eef, [3]float64{cube[0], cube[1], cube[2] + liftGrasp}, 1) // close
	}
}
