package panda

import (
	"fmt"
	"strings"

	"github.com/koopq/koopq/internal/mjcf"
)

// Simulation and control constants of RoboSuite's defaults (macros.py,
// controllers/osc.py, default_panda.json, lift.py).
const (
	// Timestep is MuJoCo's opt.timestep in seconds (RoboSuite's
	// SIMULATION_TIMESTEP).
	Timestep = 0.002
	// ControlFreq is the policy's control frequency in Hz: one Step lasts
	// 1/ControlFreq = 0.05 s.
	ControlFreq = 20
	// Substeps is the number of MuJoCo steps per environment step,
	// 1/(ControlFreq·Timestep) = 25. The controller recomputes the joint
	// torques before every one of them.
	Substeps = 25
	// OutputMax is the OSC's output_max: action[:3] = ±1 moves the goal
	// ±0.05 m from the current end-effector position.
	OutputMax = 0.05
	// Kp is the OSC's stiffness (N/m per unit of Λ; orientation uses the
	// same value), and the damping is critical: Kd = 2·sqrt(Kp).
	Kp = 150
	// KpNull is the stiffness of the nullspace posture control toward the
	// episode's initial joints (control_utils.nullspace_torques); its
	// damping is 2·sqrt(KpNull).
	KpNull = 10
	// GripperSpeed is how far the gripper's normalised command moves toward
	// ±1 per MuJoCo substep (PandaGripper.speed), so a full close from
	// open takes 200 substeps = 8 environment steps.
	GripperSpeed = 0.01
	// MaxEpisodeSteps is the horizon: Step reports truncated at step 500.
	MaxEpisodeSteps = 500
	// InitNoise is the standard deviation (radians) of the Gaussian noise
	// added to each initial arm joint (RoboSuite's default
	// initialization_noise magnitude 0.02, type gaussian).
	InitNoise = 0.02
)

// Arena geometry of RoboSuite's TableArena as Lift configures it. Metres,
// world frame, z up, floor at z = 0.
const (
	// TableTopZ is the height of the table's top surface (table_offset z).
	TableTopZ = 0.8
	// TableHalfX, TableHalfY and TableHalfZ are half of table_full_size
	// (0.8, 0.8, 0.05).
	TableHalfX, TableHalfY, TableHalfZ = 0.4, 0.4, 0.025
	// BaseX and BaseZ place the arm's base (link0): Panda's
	// base_xpos_offset["table"] is (−0.16 − table length/2, 0, 0) and its
	// bottom_offset (0, 0, −0.913) lifts it to z = 0.913.
	BaseX, BaseZ = -0.16 - TableHalfX, 0.913
)

// Cube constants of Lift (lift.py, BoxObject defaults).
const (
	// CubeHalf is the cube's half size. RoboSuite draws each half size
	// uniformly in [0.020, 0.022] at every hard reset; koopq uses the
	// midpoint for every episode (a simplification, docs/robosuite.md).
	CubeHalf = 0.021
	// CubeDensity is MuJoCo's default geom density (kg/m³), giving a mass
	// of (2·CubeHalf)³·1000 ≈ 0.074 kg.
	CubeDensity = 1000
	// CubeRangeXY is the half width of the uniform x and y ranges of the
	// cube's centre around the table centre (UniformRandomSampler
	// x_range = y_range = [−0.03, 0.03]).
	CubeRangeXY = 0.03
	// CubeDropZ is the gap between the table and the cube's bottom at
	// placement (the sampler's z_offset); the cube falls onto the table
	// during the first step.
	CubeDropZ = 0.01
	// LiftHeight is the success threshold: the cube's centre higher than
	// TableTopZ + LiftHeight.
	LiftHeight = 0.04
)

// Link is one link of the Panda arm: its body frame in the parent's frame,
// the hinge joint about the body's z axis, and mass properties. Angles in
// radians, lengths in metres, masses in kg, inertias in kg·m².
type Link struct {
	// Name is the body name; Joint the hinge's name.
	Name, Joint string
	// Pos and Quat (w, x, y, z) place the body frame in its parent's frame.
	Pos  [3]float64
	Quat [4]float64
	// Range is the joint's position range (radians).
	Range [2]float64
	// TorqueLimit is the largest joint torque the motor may apply (N·m).
	TorqueLimit float64
	// Damping is the joint's viscous damping (N·m·s/rad); Armature the
	// rotor inertia added to the joint (kg·m²).
	Damping, Armature float64
	// Mass, COM (body frame) and Inertia (diagonal, body frame).
	Mass    float64
	COM     [3]float64
	Inertia [3]float64
}

// PandaArm returns the seven links (link1 … link7) with the link frames,
// masses and inertias of RoboSuite's panda/robot.xml, Franka's published
// joint ranges and torque limits (87 N·m for joints 1–4, 12 N·m for 5–7),
// the damping of RoboSuite's Panda class and the armature RoboSuite's
// robot models default to (5/(i+1) for joint i = 0 … 6).
func PandaArm() []Link {
	const h = 0.707107
	mk := func(i int, name string, pos [3]float64, quat [4]float64, lo, hi, tau, damp, mass float64, com [3]float64, in float64) Link {
		return Link{Name: name, Joint: fmt.Sprintf("joint%d", i+1), Pos: pos, Quat: quat, Range: [2]float64{lo, hi},
			TorqueLimit: tau, Damping: damp, Armature: 5 / float64(i+1), Mass: mass, COM: com, Inertia: [3]float64{in, in, in}}
	}
	return []Link{
		mk(0, "link1", [3]float64{0, 0, 0.333}, [4]float64{1, 0, 0, 0}, -2.8973, 2.8973, 87, 0.1, 3, [3]float64{0, 0, -0.07}, 0.3),
		mk(1, "link2", [3]float64{0, 0, 0}, [4]float64{h, -h, 0, 0}, -1.7628, 1.7628, 87, 0.1, 3, [3]float64{0, -0.1, 0}, 0.3),
		mk(2, "link3", [3]float64{0, -0.316, 0}, [4]float64{h, h, 0, 0}, -2.8973, 2.8973, 87, 0.1, 2, [3]float64{0.04, 0, -0.05}, 0.2),
		mk(3, "link4", [3]float64{0.0825, 0, 0}, [4]float64{h, h, 0, 0}, -3.0718, -0.0698, 87, 0.1, 2, [3]float64{-0.04, 0.05, 0}, 0.2),
		mk(4, "link5", [3]float64{-0.0825, 0.384, 0}, [4]float64{h, -h, 0, 0}, -2.8973, 2.8973, 12, 0.1, 2, [3]float64{0, 0, -0.15}, 0.2),
		mk(5, "link6", [3]float64{0, 0, 0}, [4]float64{h, h, 0, 0}, -0.0175, 3.7525, 12, 0.01, 1.5, [3]float64{0.06, 0, 0}, 0.1),
		mk(6, "link7", [3]float64{0.088, 0, 0}, [4]float64{h, h, 0, 0}, -2.8973, 2.8973, 12, 0.01, 0.5, [3]float64{0, 0, 0.08}, 0.05),
	}
}

// InitQpos is RoboSuite's Panda init_qpos (radians): the arm bent over the
// table with the gripper pointing down.
var InitQpos = [7]float64{0, 0.19634954084936207, 0, -2.6179938779914944, 0, 2.9415926535897933, 0.7853981633974483}

// Flange and gripper frames (panda/robot.xml, grippers/panda_gripper.xml).
const (
	// FlangeZ is the offset of right_hand from link7 along its z axis
	// (Franka's flange distance d = 0.107).
	FlangeZ = 0.107
	// GripperZ is the offset of the gripper body from right_hand.
	GripperZ = -0.018
	// GripSiteZ is the grip site's offset from the gripper body: the
	// point RoboSuite calls the end effector (eef_pos, the OSC's frame).
	GripSiteZ = 0.105
	// FingerZ is where the finger bodies sit on the gripper body.
	FingerZ = 0.0524
	// FingerRange is the travel of each finger slide (m): finger 1 in
	// [0, 0.04], finger 2 in [−0.04, 0]; 0 is closed.
	FingerRange = 0.04
	// GripperInitQ is the fingers' initial opening (PandaGripper init_qpos
	// ±0.020833).
	GripperInitQ = 0.020833
	// GripperKp is the finger position actuators' gain (N/m) and
	// GripperForce their force limit (N).
	GripperKp, GripperForce = 1000, 20
)

// gripperQuarterTurn (w, x, y, z) turns the gripper 90° about its axis, the
// turn RoboSuite's panda_gripper.xml gives the hand and finger bodies
// (quat 0.707107 0 0 0.707). Lift and Door both use it (docs/robosuite.md §2).
var gripperQuarterTurn = [4]float64{0.707107, 0, 0, 0.707107}

// RightHandQuat rotates right_hand on link7 by 45° about z so that the
// gripper lines up with the tool (robot.xml).
var RightHandQuat = [4]float64{0.924, 0, 0, 0.383}

// ff and fs format one number and a space-separated list for MJCF.
var ff, fs = mjcf.Num, mjcf.Nums

// sceneMJCF returns the MJCF document of the Lift scene: the table, the
// Panda arm with its gripper (torque motors on the arm joints, position
// actuators on the fingers) and the cube with a free joint at cube (centre,
// metres).
func sceneMJCF(name string, cube [3]float64) string {
	return armSceneMJCF(name, [3]float64{0, 0, TableTopZ - TableHalfZ}, [3]float64{TableHalfX, TableHalfY, TableHalfZ}, true,
		func(w func(string, ...any)) {
			w("    <body name=\"cube\" pos=\"%s\">\n", fs(cube[:]...))
			w("      <joint name=\"cube_joint\" type=\"free\" damping=\"0.0005\"/>\n")
			w("      <geom name=\"cube_g0\" type=\"box\" size=\"%s\" density=\"%s\" friction=\"1 0.005 0.0001\" solref=\"0.02 1\" solimp=\"0.9 0.95 0.001\"/>\n",
				fs(CubeHalf, CubeHalf, CubeHalf), ff(CubeDensity))
			w("    </body>\n")
		})
}

// armSceneMJCF returns an MJCF document with the floor, a table (box centred
// at tablePos with half sizes tableHalf, metres), the Panda arm and gripper
// with their actuators, and whatever objects writes into the worldbody.
// With quarterTurn the gripper is turned 90° about its axis (see
// writeGripper); extra MJCF elements (such as a contact section) follow
// the worldbody.
func armSceneMJCF(name string, tablePos, tableHalf [3]float64, quarterTurn bool, objects func(w func(string, ...any)), extra ...string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("<mujoco model=%q>\n", name)
	w("  <compiler angle=\"radian\" coordinate=\"local\" inertiafromgeom=\"auto\"/>\n")
	w("  <option timestep=\"%s\" gravity=\"0 0 -9.81\" impratio=\"20\" cone=\"elliptic\"/>\n", ff(Timestep))
	w("  <size nconmax=\"200\" njmax=\"600\"/>\n")
	w("  <worldbody>\n")
	w("    <geom name=\"floor\" type=\"plane\" size=\"3 3 0.125\" pos=\"0 0 0\" condim=\"3\"/>\n")
	w("    <body name=\"table\" pos=\"%s\">\n", fs(tablePos[:]...))
	w("      <geom name=\"table_collision\" type=\"box\" size=\"%s\" friction=\"1 0.005 0.0001\"/>\n", fs(tableHalf[:]...))
	w("      <site name=\"table_top\" pos=\"0 0 %s\" size=\"0.001\"/>\n", ff(tableHalf[2]))
	w("    </body>\n")
	ind := "    "
	w("%s<body name=\"link0\" pos=\"%s\">\n", ind, fs(BaseX, 0, BaseZ))
	w("%s  <inertial pos=\"0 0 0.05\" mass=\"4\" diaginertia=\"0.4 0.4 0.4\"/>\n", ind)
	arm := PandaArm()
	for _, l := range arm {
		ind += "  "
		w("%s<body name=%q pos=\"%s\" quat=\"%s\">\n", ind, l.Name, fs(l.Pos[:]...), fs(l.Quat[:]...))
		w("%s  <inertial pos=\"%s\" mass=\"%s\" diaginertia=\"%s\"/>\n", ind, fs(l.COM[:]...), ff(l.Mass), fs(l.Inertia[:]...))
		w("%s  <joint name=%q type=\"hinge\" pos=\"0 0 0\" axis=\"0 0 1\" limited=\"true\" range=\"%s\" damping=\"%s\" armature=\"%s\" frictionloss=\"0.1\"/>\n",
			ind, l.Joint, fs(l.Range[:]...), ff(l.Damping), ff(l.Armature))
	}
	ind += "  "
	w("%s<body name=\"right_hand\" pos=\"0 0 %s\" quat=\"%s\">\n", ind, ff(FlangeZ), fs(RightHandQuat[:]...))
	w("%s  <inertial pos=\"0 0 0\" mass=\"0.5\" diaginertia=\"0.05 0.05 0.05\"/>\n", ind)
	writeGripper(w, ind+"  ", quarterTurn)
	w("%s</body>\n", ind)
	for range len(arm) + 1 {
		ind = ind[:len(ind)-2]
		w("%s</body>\n", ind)
	}
	objects(w)
	w("  </worldbody>\n")
	for _, x := range extra {
		b.WriteString(x)
	}
	w("  <actuator>\n")
	for _, l := range arm {
		w("    <motor name=\"torq_%s\" joint=%q ctrllimited=\"true\" ctrlrange=\"%s\"/>\n", l.Joint, l.Joint, fs(-l.TorqueLimit, l.TorqueLimit))
	}
	w("    <position name=\"gripper_finger_joint1\" joint=\"finger_joint1\" kp=\"%s\" ctrllimited=\"true\" ctrlrange=\"0 %s\" forcelimited=\"true\" forcerange=\"%s\"/>\n",
		ff(GripperKp), ff(FingerRange), fs(-GripperForce, GripperForce))
	w("    <position name=\"gripper_finger_joint2\" joint=\"finger_joint2\" kp=\"%s\" ctrllimited=\"true\" ctrlrange=\"%s 0\" forcelimited=\"true\" forcerange=\"%s\"/>\n",
		ff(GripperKp), ff(-FingerRange), fs(-GripperForce, GripperForce))
	w("  </actuator>\n</mujoco>\n")
	return b.String()
}

// writeGripper writes the simplified Panda hand: a box palm, two slide
// fingers (boxes) each carrying a friction pad at its tip, and the grip
// site. The fingers close along the gripper's y axis; closed, the two pads
// touch at y = 0 and fully open they are 0.08 m apart. With quarterTurn the
// gripper body is turned +90° about z (quaternion gripperQuarterTurn), so
// that the fingers close along right_hand's −x axis as in RoboSuite's
// panda_gripper.xml, whose finger bodies and hand carry that turn; at the
// initial pose they then close along the world's y axis.
func writeGripper(w func(string, ...any), ind string, quarterTurn bool) {
	if quarterTurn {
		w("%s<body name=\"right_gripper\" pos=\"0 0 %s\" quat=\"%s\">\n", ind, ff(GripperZ), fs(gripperQuarterTurn[:]...))
	} else {
		w("%s<body name=\"right_gripper\" pos=\"0 0 %s\">\n", ind, ff(GripperZ))
	}
	w("%s  <inertial pos=\"0 0 0.05\" mass=\"0.3\" diaginertia=\"0.002 0.0005 0.002\"/>\n", ind)
	w("%s  <geom name=\"hand_collision\" type=\"box\" pos=\"0 0 0.03\" size=\"0.025 0.1 0.022\" contype=\"1\" conaffinity=\"1\" mass=\"0\"/>\n", ind)
	w("%s  <site name=\"grip_site\" pos=\"0 0 %s\" size=\"0.01\"/>\n", ind, ff(GripSiteZ))
	finger := func(k int, sign float64, lo, hi float64) {
		w("%s  <body name=\"finger%d\" pos=\"0 0 %s\">\n", ind, k, ff(FingerZ))
		w("%s    <inertial pos=\"0 %s 0.03\" mass=\"0.1\" diaginertia=\"0.0001 0.0001 0.00005\"/>\n", ind, ff(sign*0.012))
		w("%s    <joint name=\"finger_joint%d\" type=\"slide\" pos=\"0 0 0\" axis=\"0 1 0\" limited=\"true\" range=\"%s\" damping=\"100\"/>\n",
			ind, k, fs(lo, hi))
		w("%s    <geom name=\"finger%d_collision\" type=\"box\" pos=\"0 %s 0.022\" size=\"0.01 0.004 0.022\" contype=\"0\" conaffinity=\"1\" friction=\"1 0.005 0.0001\" condim=\"4\" mass=\"0\"/>\n",
			ind, k, ff(sign*0.0115))
		w("%s    <geom name=\"finger%d_pad_collision\" type=\"box\" pos=\"0 %s 0.0410\" size=\"0.008 0.004 0.008\" friction=\"2 0.05 0.0001\" solref=\"0.01 0.5\" condim=\"4\" mass=\"0\"/>\n",
			ind, k, ff(sign*0.0035))
		w("%s  </body>\n", ind)
	}
	finger(1, 1, 0, FingerRange)
	finger(2, -1, -FingerRange, 0)
	w("%s</body>\n", ind)
}
