package manip

import "math"

// Reward shaping functions of MetaWorld v2 (reward_utils.py, after
// dm_control's rewards.tolerance), written for scalars.

// valueAtMargin is tolerance's default output at a distance of margin
// outside the bounds.
const valueAtMargin = 0.1

// Tolerance returns 1 when lo <= x <= hi and otherwise decays with the
// distance d from the nearer bound as the "long_tail" sigmoid
// 1 / ((d/margin · s)² + 1) with s = sqrt(1/0.1 − 1) = 3, so the value is
// 0.1 at d = margin. With margin <= 0 it is 1 inside the bounds and 0
// outside (MetaWorld raises an error for a negative margin; here it is
// treated as 0).
func Tolerance(x, lo, hi, margin float64) float64 {
	if lo <= x && x <= hi {
		return 1
	}
	if margin <= 0 {
		return 0
	}
	d := x - hi
	if x < lo {
		d = lo - x
	}
	d /= margin
	s := math.Sqrt(1/valueAtMargin - 1)
	return 1 / ((d*s)*(d*s) + 1)
}

// Hamacher returns the Hamacher t-norm a·b / (a + b − a·b) of a, b ∈ [0, 1]
// (0 when both are 0).
func Hamacher(a, b float64) float64 {
	den := a + b - a*b
	if den <= 0 {
		return 0
	}
	return a * b / den
}

func dist3(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

// GripperState is what MetaWorld's reward reads from the simulator besides
// the observation: the two finger pads' positions, the tool centre point
// (midpoint of the finger-tip sites), and the episode's initial object
// position and initial tool centre point. Metres, world frame.
type GripperState struct {
	LeftPad, RightPad [3]float64
	TCP               [3]float64
	ObjInit, TCPInit  [3]float64
}

// CagingReward is MetaWorld v2's _gripper_caging_reward in its high-density
// form: how well the two pads surround the object along y (each pad between
// objRadius and padThresh from it, with a margin that grows as the object
// leaves its initial position), how close the tool centre is to the object
// in x-z (within xzThresh), and, once caged, how hard the gripper is
// closing (gripEffort = action[3], clipped to [0, 1]). The result is in
// [0, 1]. push-v2 uses objRadius 0.015, padThresh 0.05, xzThresh 0.005.
func CagingReward(g GripperState, obj [3]float64, gripEffort, objRadius, padThresh, xzThresh float64) float64 {
	pads := [2]float64{g.LeftPad[1], g.RightPad[1]}
	var cage [2]float64
	for i, py := range pads {
		toObj := math.Abs(py - obj[1])
		toInit := math.Abs(py - g.ObjInit[1])
		cage[i] = Tolerance(toObj, objRadius, padThresh, math.Abs(toInit-padThresh))
	}
	cagingY := Hamacher(cage[0], cage[1])

	xzMargin := math.Hypot(g.ObjInit[0]-g.TCPInit[0], g.ObjInit[2]-g.TCPInit[2]) - xzThresh
	cagingXZ := Tolerance(math.Hypot(g.TCP[0]-obj[0], g.TCP[2]-obj[2]), 0, xzThresh, xzMargin)

	closed := math.Min(math.Max(0, gripEffort), 1)
	caging := Hamacher(cagingY, cagingXZ)
	gripping := 0.0
	if caging > 0.97 {
		gripping = closed
	}
	return (Hamacher(caging, gripping) + caging) / 2
}

// PushTargetRadius is push-v2's TARGET_RADIUS: an episode step is a
// success when the puck's centre is within this distance (metres, 3-D) of
// the goal.
const PushTargetRadius = 0.05

// PushReward is push-v2's compute_reward: 2·caging, plus
// 1 + 2·caging + 5·in_place while the tool centre is within 0.02 m of the
// puck with the fingers apart (opening > 0), and exactly 10 once the puck is
// within PushTargetRadius of the goal. in_place is Tolerance of the
// puck–goal distance with bounds [0, PushTargetRadius] and the initial
// puck–goal distance as margin. opening is observation[3]; obj is the
// puck's position as observed. It returns the reward and whether the step
// is a success.
func PushReward(g GripperState, obj, goal [3]float64, opening, gripEffort float64) (reward float64, success bool) {
	tcpToObj := dist3(obj, g.TCP)
	objToGoal := dist3(obj, goal)
	inPlace := Tolerance(objToGoal, 0, PushTargetRadius, dist3(g.ObjInit, goal))
	grasp := CagingReward(g, obj, gripEffort, 0.015, 0.05, 0.005)
	reward = 2 * grasp
	if tcpToObj < 0.02 && opening > 0 {
		reward += 1 + reward + 5*inPlace
	}
	if objToGoal < PushTargetRadius {
		reward = 10
	}
	return reward, objToGoal <= PushTargetRadius
}
