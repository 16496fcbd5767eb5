package manip

import (
	"math"
	"math/rand/v2"
	"sort"
)

// PushName is the registry name of the push task.
const PushName = "metaworld-push-v2"

// Task holds the constants of one MetaWorld v2 task: workspace bounds,
// initial hand position, and the ranges that Reset draws the object and
// goal from. Metres, world frame.
type Task struct {
	// Name is the registry name.
	Name string
	// HandLow and HandHigh bound the mocap target (MetaWorld clips the
	// mocap position to them after every action).
	HandLow, HandHigh [3]float64
	// HandInit is where the mocap is held during Reset's settling steps.
	HandInit [3]float64
	// ObjLow, ObjHigh and GoalLow, GoalHigh are the uniform ranges of the
	// object's and goal's initial positions (push-v2 uses x and y only:
	// the object keeps its resting height and the goal takes the object's
	// height).
	ObjLow, ObjHigh   [3]float64
	GoalLow, GoalHigh [3]float64
	// MinObjGoalXY is the smallest horizontal object–goal distance a reset
	// accepts; draws closer than this are redrawn.
	MinObjGoalXY float64
}

// Push returns push-v2's constants (sawyer_push_v2.py).
func Push() Task {
	return Task{
		Name:         PushName,
		HandLow:      [3]float64{-0.5, 0.40, 0.05},
		HandHigh:     [3]float64{0.5, 1, 0.5},
		HandInit:     [3]float64{0, 0.6, 0.2},
		ObjLow:       [3]float64{-0.1, 0.6, 0.02},
		ObjHigh:      [3]float64{0.1, 0.7, 0.02},
		GoalLow:      [3]float64{-0.1, 0.8, 0.01},
		GoalHigh:     [3]float64{0.1, 0.9, 0.02},
		MinObjGoalXY: 0.15,
	}
}

var tasks = map[string]func() Task{PushName: Push}

// Names lists the registered task names in sorted order.
func Names() []string {
	out := make([]string, 0, len(tasks))
	for k := range tasks {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Sample draws the object and goal positions as MetaWorld's reset does:
// six uniform numbers (object x, y, z then goal x, y, z) from rng, drawn
// again while the horizontal object–goal distance is below MinObjGoalXY.
// The z values are returned as drawn; push-v2 ignores them.
func (t Task) Sample(rng *rand.Rand) (obj, goal [3]float64) {
	for {
		for i := range 3 {
			obj[i] = t.ObjLow[i] + (t.ObjHigh[i]-t.ObjLow[i])*rng.Float64()
		}
		for i := range 3 {
			goal[i] = t.GoalLow[i] + (t.GoalHigh[i]-t.GoalLow[i])*rng.Float64()
		}
		if math.Hypot(obj[0]-goal[0], obj[1]-goal[1]) >= t.MinObjGoalXY {
			return obj, goal
		}
	}
}

// Observation layout (39 numbers), as in MetaWorld v2's SawyerXYZEnv.
const (
	// ObsDim is the observation length.
	ObsDim = 39
	// ObsHand is the offset of the hand position (3).
	ObsHand = 0
	// ObsGripper is the offset of the normalised finger distance (1):
	// ‖right claw − left claw‖ / FingerDistNorm clipped to [0, 1].
	ObsGripper = 3
	// ObsObj is the offset of the two object slots, each position (3) then
	// quaternion (4, scalar last: x, y, z, w, as scipy returns it); unused
	// slots are zero. push-v2 fills the first slot with the puck.
	ObsObj = 4
	// ObsFrame is the length of one frame (hand, gripper, objects).
	ObsFrame = 18
	// ObsPrev is the offset of the previous step's frame (18).
	ObsPrev = 18
	// ObsGoal is the offset of the goal position (3).
	ObsGoal = 36
	// ActDim is the action length: hand dx, dy, dz and gripper effort.
	ActDim = 4
)

// handSpaceLow and handSpaceHigh bound the observed hand position
// (MetaWorld's _HAND_SPACE); observations are clipped to the space.
var (
	handSpaceLow  = [3]float64{-0.525, 0.348, -0.0525}
	handSpaceHigh = [3]float64{0.525, 1.025, 0.7}
)

// observationSpace returns MetaWorld's goal-observable observation space:
// hand positions within the hand space, the gripper entry within [-1, 1],
// object entries unbounded and the goal within the task's goal range.
func (t Task) observationSpace() (low, high []float64) {
	low, high = make([]float64, ObsDim), make([]float64, ObsDim)
	for f := range 2 {
		o := f * ObsFrame
		for i := range 3 {
			low[o+i], high[o+i] = handSpaceLow[i], handSpaceHigh[i]
		}
		low[o+3], high[o+3] = -1, 1
		for i := 4; i < ObsFrame; i++ {
			low[o+i], high[o+i] = math.Inf(-1), math.Inf(1)
		}
	}
	for i := range 3 {
		low[ObsGoal+i], high[ObsGoal+i] = t.GoalLow[i], t.GoalHigh[i]
	}
	return low, high
}
