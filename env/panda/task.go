package panda

import (
	"math"
	"math/rand/v2"
	"sort"
)

// LiftName is the registry name of the Lift task.
const LiftName = "robosuite-lift"

// tasks lists the registered task names.
var tasks = map[string]bool{LiftName: true, DoorName: true}

// Names lists the registered task names in sorted order.
func Names() []string {
	out := make([]string, 0, len(tasks))
	for k := range tasks {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Observation layout (19 numbers): RoboSuite's robot proprioception keys
// robot0_eef_pos, robot0_eef_quat, robot0_gripper_qpos, then Lift's object
// keys cube_pos, cube_quat, gripper_to_cube_pos, in that order.
const (
	// ObsDim is the observation length.
	ObsDim = 19
	// ObsEEFPos is the offset of the grip site's position (3, metres).
	ObsEEFPos = 0
	// ObsEEFQuat is the offset of the hand's (right_hand body's)
	// orientation (4, x, y, z, w as RoboSuite's convert_quat returns it).
	ObsEEFQuat = 3
	// ObsGripperQpos is the offset of the two finger slide positions (2,
	// metres: finger 1 in [0, 0.04], finger 2 in [−0.04, 0]; 0 is closed).
	ObsGripperQpos = 7
	// ObsCubePos is the offset of the cube's centre (3, metres).
	ObsCubePos = 9
	// ObsCubeQuat is the offset of the cube's orientation (4, x, y, z, w).
	ObsCubeQuat = 12
	// ObsGripperToCube is the offset of eef position − cube position (3).
	ObsGripperToCube = 16
	// ActDim is the action length: goal displacement dx, dy, dz (× OutputMax
	// metres) and the gripper command (+1 closes, −1 opens).
	ActDim = 4
)

// SampleCube draws the cube's initial centre and yaw as RoboSuite's
// UniformRandomSampler does for Lift: x and y uniform within ±CubeRangeXY of
// the table centre (x first, then y), z CubeDropZ above the table top, and
// a rotation about z uniform in [0, 2π). It returns the centre (metres) and
// the quaternion (w, x, y, z).
func SampleCube(rng *rand.Rand) (pos [3]float64, quat [4]float64) {
	pos[0] = -CubeRangeXY + 2*CubeRangeXY*rng.Float64()
	pos[1] = -CubeRangeXY + 2*CubeRangeXY*rng.Float64()
	pos[2] = TableTopZ + CubeDropZ + CubeHalf
	yaw := 2 * math.Pi * rng.Float64()
	quat = [4]float64{math.Cos(yaw / 2), 0, 0, math.Sin(yaw / 2)}
	return pos, quat
}

// LiftSuccess reports RoboSuite's Lift success: the cube's centre height
// cubeZ (metres) above TableTopZ + LiftHeight.
func LiftSuccess(cubeZ float64) bool { return cubeZ > TableTopZ+LiftHeight }

// LiftReward is RoboSuite's Lift reward with reward_shaping on and
// reward_scale 1: 2.25 when the cube is lifted (LiftSuccess), otherwise the
// reaching term 1 − tanh(10·‖eef − cube‖) plus 0.25 while both finger pads
// touch the cube (grasped); the sum is divided by 2.25, so it lies in
// [0, 1] and equals 1 exactly on success.
func LiftReward(eef, cube [3]float64, grasped bool) float64 {
	if LiftSuccess(cube[2]) {
		return 1
	}
	d := math.Sqrt((eef[0]-cube[0])*(eef[0]-cube[0]) + (eef[1]-cube[1])*(eef[1]-cube[1]) + (eef[2]-cube[2])*(eef[2]-cube[2]))
	r := 1 - math.Tanh(10*d)
	if grasped {
		r += 0.25
	}
	return r / 2.25
}
