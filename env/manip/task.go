package manip

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Registry names of the tasks.
const (
	// PushName is push-v2: push a puck to a goal on the table.
	PushName = "metaworld-push-v2"
	// DoorCloseName is door-close-v2: swing an open hinged door shut.
	DoorCloseName = "metaworld-door-close-v2"
	// DrawerCloseName is drawer-close-v2: push a pulled-out drawer shut.
	DrawerCloseName = "metaworld-drawer-close-v2"
	// DrawerOpenName is drawer-open-v2: pull a closed drawer fully open.
	DrawerOpenName = "metaworld-drawer-open-v2"
)

// taskKind selects a task's scene fragment, reset placement, object slot,
// reward and success test.
type taskKind int

const (
	kindPush taskKind = iota
	kindDoorClose
	kindDrawerClose
	kindDrawerOpen
)

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
	// accepts; draws closer than this are redrawn (push-v2 only).
	MinObjGoalXY float64
	// GoalFollowsObj marks tasks whose reset draws only the object (the
	// fixture's base: door or drawer body position) and places the goal at
	// obj + GoalOffset, as door-close-v2 and the drawer tasks do. GoalLow
	// and GoalHigh then only bound the observed goal.
	GoalFollowsObj bool
	// GoalOffset is the goal's offset from the drawn object position when
	// GoalFollowsObj is set (metres).
	GoalOffset [3]float64

	kind taskKind
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

// The fixture tasks share push-v2's hand bounds.
var (
	mwHandLow  = [3]float64{-0.5, 0.40, 0.05}
	mwHandHigh = [3]float64{0.5, 1, 0.5}
)

// DoorClose returns door-close-v2's constants (sawyer_door_close_v2.py):
// the door's base is drawn from [0, 0.1]×[0.85, 0.95]×{0.15}, the goal is
// base + (0.2, −0.2, 0), and the hand starts at (−0.5, 0.6, 0.2).
func DoorClose() Task {
	return Task{
		Name: DoorCloseName, HandLow: mwHandLow, HandHigh: mwHandHigh,
		HandInit: [3]float64{-0.5, 0.6, 0.2},
		ObjLow:   [3]float64{0, 0.85, 0.15}, ObjHigh: [3]float64{0.1, 0.95, 0.15},
		GoalLow: [3]float64{0.2, 0.65, 0.1499}, GoalHigh: [3]float64{0.3, 0.75, 0.1501},
		GoalFollowsObj: true, GoalOffset: [3]float64{0.2, -0.2, 0},
		kind: kindDoorClose,
	}
}

// DrawerClose returns drawer-close-v2's constants
// (sawyer_drawer_close_v2.py): the drawer's base is drawn from
// [−0.1, 0.1]×{0.9}×{0}, the goal is base + (0, −0.16, 0.09) (the handle
// point of the closed drawer), and the goal space is the hand bounds.
func DrawerClose() Task {
	return Task{
		Name: DrawerCloseName, HandLow: mwHandLow, HandHigh: mwHandHigh,
		HandInit: [3]float64{0, 0.6, 0.2},
		ObjLow:   [3]float64{-0.1, 0.9, 0}, ObjHigh: [3]float64{0.1, 0.9, 0},
		GoalLow: mwHandLow, GoalHigh: mwHandHigh,
		GoalFollowsObj: true, GoalOffset: [3]float64{0, -0.16, 0.09},
		kind: kindDrawerClose,
	}
}

// DrawerOpen returns drawer-open-v2's constants (sawyer_drawer_open_v2.py):
// as DrawerClose, with the goal at base + (0, −0.16 − DrawerOpenMaxDist,
// 0.09), 0.2 m in front of the closed handle point.
func DrawerOpen() Task {
	t := DrawerClose()
	t.Name, t.kind = DrawerOpenName, kindDrawerOpen
	t.GoalOffset = [3]float64{0, -0.16 - DrawerOpenMaxDist, 0.09}
	return t
}

var tasks = map[string]func() Task{
	PushName: Push, DoorCloseName: DoorClose, DrawerCloseName: DrawerClose, DrawerOpenName: DrawerOpen,
}

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
// The z values are returned as drawn; push-v2 ignores them. For a task
// with GoalFollowsObj it draws the object's three numbers only and returns
// goal = obj + GoalOffset.
func (t Task) Sample(rng *rand.Rand) (obj, goal [3]float64) {
	if t.GoalFollowsObj {
		for i := range 3 {
			obj[i] = t.ObjLow[i] + (t.ObjHigh[i]-t.ObjLow[i])*rng.Float64()
			goal[i] = obj[i] + t.GoalOffset[i]
		}
		return obj, goal
	}
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
	// quaternion (4); unused slots are zero. push-v2 fills the first slot
	// with the puck (quaternion scalar last: x, y, z, w, as scipy returns
	// it), door-close-v2 with the handle (scalar last), drawer-close-v2
	// with the handle point and a zero quaternion, drawer-open-v2 with the
	// handle point and the drawer's MuJoCo quaternion (scalar first).
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

// defaultPlacement is the object and goal position the model is compiled
// with (MetaWorld's XML defaults); Reset moves both.
func (t Task) defaultPlacement() (obj, goal [3]float64) {
	switch t.kind {
	case kindDoorClose:
		obj = [3]float64{0, 0.9, 0.15}
	case kindDrawerClose, kindDrawerOpen:
		obj = [3]float64{0, 0.9, 0}
	default:
		return [3]float64{0, TableCenterY, TableTopZ + PuckHalfHeight}, [3]float64{0.1, 0.8, 0.02}
	}
	for i := range 3 {
		goal[i] = obj[i] + t.GoalOffset[i]
	}
	return obj, goal
}
