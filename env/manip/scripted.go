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
var scriptedPolicies = map[string]Scripted{
	PushName:        ScriptedPush,
	DoorCloseName:   ScriptedDoorClose,
	DrawerCloseName: ScriptedDrawerClose,
	DrawerOpenName:  ScriptedDrawerOpen,
}

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

func vec3(v []float64) [3]float64 { return [3]float64{v[0], v[1], v[2]} }

// rotZ rotates (x, y) by angle a (radians) about z.
func rotZ(a, x, y float64) (float64, float64) {
	c, s := math.Cos(a), math.Sin(a)
	return c*x - s*y, s*x + c*y
}

// ScriptedDoorClose is door-close-v2's controller, written from the task
// definition. It recovers the hinge from the goal (goal − (0.2, −0.2, 0)
// is the door's base, the hinge sits at base + (−0.185, −0.1, 0)) and the
// door angle from the handle, then works in the door's frame: from the
// side the door closes toward, move the closed gripper to 0.18 m along
// the panel and 6 cm off it, and push along the arc the panel sweeps
// (aiming 0.3 rad ahead, never past the closed angle, where the gripper's
// widest part, its 3.5 cm base, rests just off the panel: the hand follows
// a mocap that Step moves by the action, and a target the hand cannot
// reach would keep driving it, and the door, through the joint's soft
// limit). From the other side it first rises above the door.
func ScriptedDoorClose(obs []float64) []float64 {
	hand, handle, goal := vec3(obs[ObsHand:]), vec3(obs[ObsObj:]), vec3(obs[ObsGoal:])
	hx, hy := goal[0]-0.2+DoorHingeX, goal[1]+0.2+DoorHingeY
	theta := math.Atan2(handle[1]-hy, handle[0]-hx) - math.Atan2(DoorHandlePos[1], DoorHandlePos[0])
	u, v := rotZ(-theta, hand[0]-hx, hand[1]-hy) // hand in the door's frame
	at := func(angle, u, v, z float64) [3]float64 {
		x, y := rotZ(angle, u, v)
		return [3]float64{hx + x, hy + y, z}
	}
	const zPush, reach = 0.12, 0.2
	switch {
	case v < -0.02 && u > 0.08 && u < 0.34 && v > -0.08 && math.Abs(hand[2]-zPush) < 0.03:
		return moveTo(hand[:], at(math.Min(theta+0.3, DoorJointMax), reach, -0.05, zPush), 1)
	case v < -0.02:
		return moveTo(hand[:], at(theta, reach-0.02, -0.06, zPush), 1)
	case hand[2] < 0.32:
		return moveTo(hand[:], [3]float64{hand[0], hand[1], 0.35}, 1)
	default:
		return moveTo(hand[:], at(theta, reach, -0.15, 0.35), 1)
	}
}

// ScriptedDrawerClose is drawer-close-v2's controller, written from the
// task definition: the handle bar is at the observed handle point +
// (0, 0.01, −0.05). From above and in front of the bar, lower the open
// gripper to just above the bar's height and push along +y until the bar
// would be 5 mm past its closed position (the goal's y), which the leading
// finger reaches 6.2 cm behind the bar.
func ScriptedDrawerClose(obs []float64) []float64 {
	hand, p, goal := vec3(obs[ObsHand:]), vec3(obs[ObsObj:]), vec3(obs[ObsGoal:])
	bar := [3]float64{p[0], p[1] - DrawerObsOffsetY + DrawerHandleY, p[2] - DrawerCloseObsOffsetZ}
	zPush, behind := bar[2]+0.03, bar[1]-0.09
	switch {
	case hand[1] > bar[1]-0.04 && hand[2] < 0.18:
		return moveTo(hand[:], [3]float64{hand[0], hand[1], 0.22}, -1) // over the drawer: rise
	case hand[1] > bar[1]-0.04:
		return moveTo(hand[:], [3]float64{bar[0], behind, hand[2]}, -1)
	case math.Abs(hand[0]-bar[0]) > 0.02 || hand[2] > zPush+0.015:
		return moveTo(hand[:], [3]float64{bar[0], behind, zPush}, -1)
	default:
		return moveTo(hand[:], [3]float64{bar[0], goal[1] - 0.057, zPush}, -1)
	}
}

// ScriptedDrawerOpen is drawer-open-v2's controller, written from the
// task definition: the handle bar is at the observed handle point +
// (0, 0.01, 0). Lower the open gripper so that its fingers straddle the
// bar (hand 2 cm in front of it), then pull along −y; the finger behind
// the bar (3.8 cm ahead of the hand) drags the drawer to its stop, aiming
// 1 cm beyond it (the goal is 3 cm beyond the stop, success within 3 cm).
func ScriptedDrawerOpen(obs []float64) []float64 {
	hand, p, goal := vec3(obs[ObsHand:]), vec3(obs[ObsObj:]), vec3(obs[ObsGoal:])
	bar := [3]float64{p[0], p[1] - DrawerObsOffsetY + DrawerHandleY, p[2]}
	zHook, hookY := bar[2]+0.02, bar[1]-0.02
	dx, dy := hand[0]-bar[0], hand[1]-hookY
	switch {
	case hand[2] > zHook+0.015 && math.Hypot(dx, dy) > 0.01:
		return moveTo(hand[:], [3]float64{bar[0], hookY, 0.2}, -1)
	case hand[2] > zHook+0.015:
		return moveTo(hand[:], [3]float64{bar[0], hookY, zHook}, -1)
	case math.Abs(dx) > 0.02 || hand[1] > bar[1]:
		return moveTo(hand[:], [3]float64{hand[0], hand[1], 0.22}, -1) // lost the bar: rise
	default:
		return moveTo(hand[:], [3]float64{bar[0], goal[1] - 0.008, zHook}, -1)
	}
}
