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
	d := marginDistance(x, lo, hi, margin)
	s := math.Sqrt(1/valueAtMargin - 1)
	return 1 / ((d*s)*(d*s) + 1)
}

// marginDistance is the distance of x from [lo, hi] in units of margin: 0
// inside the bounds, +Inf outside them when margin <= 0 (where both
// sigmoids are 0), NaN for a NaN x.
func marginDistance(x, lo, hi, margin float64) float64 {
	if lo <= x && x <= hi {
		return 0
	}
	if margin <= 0 {
		return math.Inf(1)
	}
	d := x - hi
	if x < lo {
		d = lo - x
	}
	return d / margin
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

// ToleranceGaussian is Tolerance with dm_control's "gaussian" sigmoid:
// exp(−½ (d/margin · s)²) with s = sqrt(−2 ln 0.1), so the value is 0.1 at
// d = margin. door-close-v2 and drawer-close-v2 use it.
func ToleranceGaussian(x, lo, hi, margin float64) float64 {
	d := marginDistance(x, lo, hi, margin)
	s := math.Sqrt(-2 * math.Log(valueAtMargin))
	return math.Exp(-0.5 * (d * s) * (d * s))
}

// Success thresholds and reward radii of the fixture tasks (metres).
const (
	// DoorCloseTargetRadius is door-close-v2's _TARGET_RADIUS: the reward
	// is 10 once the handle is closer than this to the goal.
	DoorCloseTargetRadius = 0.05
	// DoorCloseSuccess is door-close-v2's success distance between the
	// handle and the goal.
	DoorCloseSuccess = 0.08
	// DrawerCloseTargetRadius is drawer-close-v2's TARGET_RADIUS; success
	// (and reward 10) is a handle–goal distance <= this + 0.015.
	DrawerCloseTargetRadius = 0.04
	// DrawerOpenSuccess is drawer-open-v2's success distance between the
	// handle point and the goal.
	DrawerOpenSuccess = 0.03
)

// DoorCloseReward is door-close-v2's compute_reward: 3·hand_in_place +
// 6·in_place, and exactly 10 once the handle is closer than
// DoorCloseTargetRadius to the goal. in_place is ToleranceGaussian of the
// handle–goal distance with bounds [0, 0.05] and margin ‖objInit − goal‖
// (objInit is the door's base position); hand_in_place is ToleranceGaussian
// of the tool-centre–goal distance with bounds [0, 0.0125] and margin
// ‖handInit − handle‖ + 0.1. handle is the observed object position. It
// returns the reward and whether the step is a success (handle within
// DoorCloseSuccess of the goal).
func DoorCloseReward(tcp, handle, goal, objInit, handInit [3]float64) (reward float64, success bool) {
	objToGoal := dist3(handle, goal)
	inPlace := ToleranceGaussian(objToGoal, 0, DoorCloseTargetRadius, dist3(objInit, goal))
	handInPlace := ToleranceGaussian(dist3(tcp, goal), 0, 0.25*DoorCloseTargetRadius, dist3(handInit, handle)+0.1)
	reward = 3*handInPlace + 6*inPlace
	if objToGoal < DoorCloseTargetRadius {
		reward = 10
	}
	return reward, objToGoal <= DoorCloseSuccess
}

// DrawerCloseReward is drawer-close-v2's compute_reward:
// 10·hamacher(hamacher(reach, closed), in_place), and exactly 10 once the
// handle point is within DrawerCloseTargetRadius + 0.015 of the goal (the
// success test). in_place is Tolerance (long tail) of the handle–goal
// distance with bounds [0, 0.04] and margin |‖objInit − goal‖ − 0.04|
// (objInit is the handle point after reset); reach is ToleranceGaussian
// of the tool-centre–handle distance with bounds [0, 0.005] and margin
// |‖objInit − tcpInit‖ − 0.005|; closed is gripEffort (action[3]) clipped
// to [0, 1].
func DrawerCloseReward(g GripperState, handle, goal [3]float64, gripEffort float64) (reward float64, success bool) {
	const reachRadius = 0.005
	toGoal := dist3(handle, goal)
	inPlace := Tolerance(toGoal, 0, DrawerCloseTargetRadius, math.Abs(dist3(g.ObjInit, goal)-DrawerCloseTargetRadius))
	reach := ToleranceGaussian(dist3(handle, g.TCP), 0, reachRadius, math.Abs(dist3(g.ObjInit, g.TCPInit)-reachRadius))
	reach = Hamacher(reach, math.Min(math.Max(0, gripEffort), 1))
	reward = Hamacher(reach, inPlace)
	success = toGoal <= DrawerCloseTargetRadius+0.015
	if success {
		reward = 1
	}
	return 10 * reward, success
}

// DrawerOpenReward is drawer-open-v2's compute_reward: 5·(caging +
// opening). opening is Tolerance (long tail) of the handle–goal distance
// with bounds [0, 0.02] and margin DrawerOpenMaxDist; caging is Tolerance
// (long tail) of ‖(handle − hand)·(3, 3, 1)‖ with bounds [0, 0.01] and
// margin ‖(goal + (0, 0.2, 0) − tcpInit)·(3, 3, 1)‖. hand is the observed
// hand position (not the tool centre). It returns the reward and whether
// the handle point is within DrawerOpenSuccess of the goal.
func DrawerOpenReward(hand, handle, goal, tcpInit [3]float64) (reward float64, success bool) {
	toGoal := dist3(handle, goal)
	opening := Tolerance(toGoal, 0, 0.02, DrawerOpenMaxDist)
	scale := [3]float64{3, 3, 1}
	var e, e0 [3]float64
	for i := range 3 {
		e[i] = (handle[i] - hand[i]) * scale[i]
		init := goal[i] - tcpInit[i]
		if i == 1 {
			init += DrawerOpenMaxDist
		}
		e0[i] = init * scale[i]
	}
	var zero [3]float64
	caging := Tolerance(dist3(e, zero), 0, 0.01, dist3(e0, zero))
	return 5 * (caging + opening), toGoal <= DrawerOpenSuccess
}

// quatMul returns the Hamilton product a·b of quaternions (w, x, y, z).
func quatMul(a, b [4]float64) [4]float64 {
	return [4]float64{
		a[0]*b[0] - a[1]*b[1] - a[2]*b[2] - a[3]*b[3],
		a[0]*b[1] + a[1]*b[0] + a[2]*b[3] - a[3]*b[2],
		a[0]*b[2] - a[1]*b[3] + a[2]*b[0] + a[3]*b[1],
		a[0]*b[3] + a[1]*b[2] - a[2]*b[1] + a[3]*b[0],
	}
}
