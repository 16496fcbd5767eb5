package panda

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DoorName is the registry name of the Door task (RoboSuite's Door with
// use_latch true: the handle must be turned before the door swings). It
// uses RoboSuite's default OSC_POSE controller: 7-D actions
// (docs/robosuite.md §6).
const DoorName = "robosuite-door"

// Door arena and placement (door.py at 16f74359; metres, radians, world
// frame). The robot stands where it does in Lift: both tables are 0.8 m
// long, and Panda's base offset depends only on that length.
const (
	// doorTableX, doorTableY are the table centre (door.py table_offset);
	// its top is at TableTopZ like Lift's.
	doorTableX, doorTableY = -0.2, -0.35
	// doorTableHalfX, doorTableHalfY are half of table_full_size
	// (0.8, 0.3, 0.05); the half thickness is TableHalfZ.
	doorTableHalfX, doorTableHalfY = 0.4, 0.15
	// doorRangeX0, doorRangeX1 bound the uniform draw of the door's x
	// offset from the table centre; doorRangeY its ±y offset.
	doorRangeX0, doorRangeX1, doorRangeY = 0.07, 0.09, 0.01
	// doorYaw0, doorYaw1 bound the uniform draw of the door's rotation
	// about z: [−π/2 − 0.25, −π/2].
	doorYaw0, doorYaw1 = -math.Pi/2 - 0.25, -math.Pi / 2
	// doorBottom is the depth of door_lock.xml's bottom_site below the
	// door's root: the sampler puts the root doorBottom above the table top.
	doorBottom = 0.3
	// doorRootZ is the height of the door's root body, TableTopZ + doorBottom.
	doorRootZ = TableTopZ + doorBottom
)

// Door model sizes and joints (door_lock.xml at 34e72b75, DoorObject with
// friction 0 and damping 0.1 as door.py builds it).
const (
	// framePostRadius, framePostHalf size the frame's two cylinders,
	// framePostGap apart (the hinge side at the far end).
	framePostRadius, framePostHalf, framePostGap = 0.05, 0.27, 0.6
	// doorHalfX, doorHalfY, doorHalfZ are the door box's half sizes (in
	// the door's frame: along the door, thickness, height).
	doorHalfX, doorHalfY, doorHalfZ = 0.2, 0.05, 0.25
	// hingeMax is the upper end of the hinge range [0, hingeMax];
	// hingeDamping its damping (N·m·s/rad; DoorObject damping) and its
	// frictionloss is 0 (DoorObject friction).
	hingeMax, hingeDamping = 0.35, 0.1
	// latchMin, latchMax bound the latch (handle) joint; latchStiffness is
	// its spring toward 0 (N·m/rad) and latchFriction its frictionloss.
	latchMin, latchMax, latchStiffness, latchFriction = -1.57, 0.1, 1, 0.1
	// handleHalfX, handleHalfYZ size the handle bar (box half sizes).
	handleHalfX, handleHalfYZ = 0.1, 0.02
	// handleLever is how far the handle site sits from the latch axis along
	// the bar, and handleOut how far it stands out from the door's centre
	// plane toward the robot (the site at (0.15, −0.15, 0) in the latch
	// frame).
	handleLever, handleOut = 0.15, 0.15
	// doorOpenAngle is the success threshold on the hinge angle (rad).
	doorOpenAngle = 0.3
)

// Door observation layout (23 numbers): the robot proprioception of Lift
// (offsets 0 … 8), then Door's object keys in door.py's order.
const (
	// doorObsDim is the Door observation length.
	doorObsDim = 23
	// obsDoorPos is the offset of the door body's position (3, metres).
	obsDoorPos = 9
	// obsHandlePos is the offset of the handle site's position (3).
	obsHandlePos = 12
	// obsDoorToEEF is the offset of door position − eef position (3).
	obsDoorToEEF = 15
	// obsHandleToEEF is the offset of handle position − eef position (3).
	obsHandleToEEF = 18
	// obsHingeQpos is the offset of the door hinge's angle (1, rad).
	obsHingeQpos = 21
	// obsHandleQpos is the offset of the latch (handle) joint's angle (1,
	// rad; turning the handle makes it negative).
	obsHandleQpos = 22
	// doorActDim is Door's action length under OSC_POSE, RoboSuite's
	// default controller: goal displacement dx, dy, dz (× OutputMax
	// metres), goal rotation rx, ry, rz (axis-angle, × OutputMaxRot
	// radians, world axes) and the gripper command (+1 closes, −1 opens).
	doorActDim = 7
)

// sampleDoor draws the door's root position and yaw as RoboSuite's
// UniformRandomSampler does for Door: x then y uniform in their ranges
// around the table centre, the root doorBottom above the table, then the
// rotation about z uniform in [doorYaw0, doorYaw1].
func sampleDoor(rng *rand.Rand) (pos [3]float64, yaw float64) {
	pos[0] = doorTableX + doorRangeX0 + (doorRangeX1-doorRangeX0)*rng.Float64()
	pos[1] = doorTableY - doorRangeY + 2*doorRangeY*rng.Float64()
	pos[2] = doorRootZ
	yaw = doorYaw0 + (doorYaw1-doorYaw0)*rng.Float64()
	return pos, yaw
}

// doorSuccess reports RoboSuite's Door success: the hinge angle (rad)
// above doorOpenAngle.
func doorSuccess(hinge float64) bool { return hinge > doorOpenAngle }

// doorReward is RoboSuite's Door reward with reward_shaping on, use_latch
// true and reward_scale 1: 1 when the door is open (doorSuccess),
// otherwise 0.25·(1 − tanh(10·‖handle − eef‖)) plus
// clip(0.25·|latch|/(π/2), −0.25, 0.25); it lies in [0, 0.5] before
// success.
func doorReward(eef, handle [3]float64, hinge, latch float64) float64 {
	if doorSuccess(hinge) {
		return 1
	}
	d := math.Sqrt((handle[0]-eef[0])*(handle[0]-eef[0]) + (handle[1]-eef[1])*(handle[1]-eef[1]) + (handle[2]-eef[2])*(handle[2]-eef[2]))
	r := 0.25 * (1 - math.Tanh(10*d))
	return r + math.Max(-0.25, math.Min(0.25, 0.25*math.Abs(latch/(0.5*math.Pi))))
}

// doorSceneMJCF returns the Door scene: Door's table, the arm, and the
// door of door_lock.xml under a mocap root body "door_root" (the sampled
// placement, set per reset through mocap_pos and mocap_quat) at root.
func doorSceneMJCF(name string, root [3]float64) string {
	return armSceneMJCF(name, [3]float64{doorTableX, doorTableY, TableTopZ - TableHalfZ},
		[3]float64{doorTableHalfX, doorTableHalfY, TableHalfZ}, true, func(w func(string, ...any)) {
			writeDoor(w, root)
		}, `  <contact>
    <exclude body1="frame" body2="door"/>
  </contact>
`)
}

// The frame is welded to the world (through the mocap root), so MuJoCo's
// parent–child filter does not separate it from the door: door_r_cyl
// touches the hinge post r_frame by construction (centres 0.1 m apart, radii
// 0.05) and orbits it as the door turns, and the convex collision test
// then finds slight overlaps whose friction stops the door near 0.13 rad.
// koopq excludes frame–door contacts (a chosen departure, docs/robosuite.md);
// the latch body still collides with the frame, which is what locks the
// door.

// writeDoor writes door_lock.xml's bodies, joints, geoms and inertias with
// koopq's own names. The frame is turned −90° about z in the root, so
// with the sampled yaw near −π/2 the door stands along x on the robot's
// right, the hinge post near the robot's base, the handle on the robot's
// side; the hinge opens it toward the robot.
func writeDoor(w func(string, ...any), root [3]float64) {
	w("    <body name=\"door_root\" pos=\"%s\" mocap=\"true\">\n", fs(root[:]...))
	w("      <body name=\"frame\" pos=\"0 0 0\" quat=\"0.707388 0 0 -0.706825\">\n")
	w("        <inertial pos=\"0.3 0 0\" quat=\"0.5 0.5 0.5 0.5\" mass=\"7.85398\" diaginertia=\"0.923301 0.764585 0.168533\"/>\n")
	w("        <geom name=\"r_frame\" type=\"cylinder\" size=\"%s\" pos=\"%s 0 0\"/>\n", fs(framePostRadius, framePostHalf), ff(framePostGap))
	w("        <geom name=\"l_frame\" type=\"cylinder\" size=\"%s\" pos=\"0 0 0\"/>\n", fs(framePostRadius, framePostHalf))
	w("        <body name=\"door\" pos=\"%s 0 0\">\n", ff(framePostGap/2))
	w("          <inertial pos=\"0.0296816 -0.00152345 0\" quat=\"0.701072 0 0 0.713091\" mass=\"2.43455\" diaginertia=\"0.0913751 0.0521615 0.043714\"/>\n")
	w("          <joint name=\"door_hinge\" type=\"hinge\" pos=\"%s 0 0\" axis=\"0 0 1\" limited=\"true\" range=\"0 %s\" damping=\"%s\" frictionloss=\"0\"/>\n",
		ff(framePostGap/2), ff(hingeMax), ff(hingeDamping))
	w("          <geom name=\"door_box\" type=\"box\" size=\"%s\" friction=\"1 1 1\"/>\n", fs(doorHalfX, doorHalfY, doorHalfZ))
	w("          <geom name=\"door_r_cyl\" type=\"cylinder\" size=\"0.05 0.25\" pos=\"0.2 0 0\"/>\n")
	w("          <geom name=\"door_l_cyl\" type=\"cylinder\" size=\"0.05 0.25\" pos=\"-0.2 0 0\"/>\n")
	w("          <body name=\"latch\" pos=\"-0.15 0 -0.025\">\n")
	w("            <inertial pos=\"-0.017762 0.0138544 0\" quat=\"0.365653 0.605347 -0.36522 0.605365\" mass=\"0.1\" diaginertia=\"0.0483771 0.0410001 0.0111013\"/>\n")
	w("            <joint name=\"latch_joint\" type=\"hinge\" pos=\"0 0 0\" axis=\"0 1 0\" limited=\"true\" range=\"%s\" frictionloss=\"%s\" damping=\"0\" springref=\"0\" stiffness=\"%s\"/>\n",
		fs(latchMin, latchMax), ff(latchFriction), ff(latchStiffness))
	w("            <geom name=\"handle_base\" type=\"cylinder\" size=\"0.05 0.15\" quat=\"0.707388 0.706825 0 0\"/>\n")
	w("            <geom name=\"handle\" type=\"box\" size=\"%s\" pos=\"0.1 %s 0\"/>\n", fs(handleHalfX, handleHalfYZ, handleHalfYZ), ff(-handleOut))
	w("            <geom name=\"latch\" type=\"capsule\" size=\"0.04 0.07\" pos=\"-0.1 0.1 0\" quat=\"0.707388 0 0.706825 0\"/>\n")
	w("            <site name=\"door_handle\" pos=\"%s %s 0\" size=\"0.005\"/>\n", ff(handleLever), ff(-handleOut))
	w("          </body>\n")
	w("        </body>\n")
	w("      </body>\n")
	w("    </body>\n")
}

// doorQuat returns the quaternion (w, x, y, z) of a rotation by yaw about z.
func doorQuat(yaw float64) [4]float64 {
	return [4]float64{math.Cos(yaw / 2), 0, 0, math.Sin(yaw / 2)}
}

// checkDoorYaw rejects a yaw outside RoboSuite's range (with a small
// tolerance), so resetDoor cannot build a scene the task never draws.
func checkDoorYaw(yaw float64) error {
	if math.IsNaN(yaw) || yaw < doorYaw0-1e-9 || yaw > doorYaw1+1e-9 {
		return fmt.Errorf("env/panda: door yaw %v outside [%v, %v]", yaw, doorYaw0, doorYaw1)
	}
	return nil
}
