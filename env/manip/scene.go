package manip

import (
	"fmt"
	"strings"

	"github.com/koopq/koopq/internal/mjcf"
)

// Simulation constants of MetaWorld v2 (basic_scene.xml, SawyerXYZEnv).
const (
	// Timestep is MuJoCo's opt.timestep in seconds.
	Timestep = 0.0025
	// FrameSkip is the number of mj_step calls per environment step, so one
	// step lasts Timestep·FrameSkip = 0.0125 s.
	FrameSkip = 5
	// MaxEpisodeSteps is MetaWorld v2's max_path_length: the step after
	// which Step reports truncated. Episodes never terminate earlier.
	MaxEpisodeSteps = 500
	// ActionScale converts action[:3] ∈ [-1, 1]³ into a mocap displacement
	// in metres per step (MetaWorld's action_scale = 1/100).
	ActionScale = 0.01
	// ResetHandSteps is the number of frame-skipped steps Reset runs with
	// the mocap held at the task's initial hand position and the gripper
	// open (MetaWorld's _reset_hand(steps=50)).
	ResetHandSteps = 50
)

// Scene geometry of MetaWorld v2 (basic_scene.xml, xyz_base.xml). Lengths
// in metres, in the world frame (z up; the arm's base is at the origin and
// faces +y).
const (
	// TableTopZ is the height of the table's top surface.
	TableTopZ = 0.0
	// TableCenterY is the y of the table's centre (x is 0).
	TableCenterY = 0.6
	// TableHalfX and TableHalfY are the table top's half extents.
	TableHalfX, TableHalfY = 0.7, 0.4
	// TableHalfZ is the half height of the table's collision box, whose top
	// is at TableTopZ.
	TableHalfZ = 0.46
	// FloorZ is the height of the floor plane, so the table top stands
	// TableTopZ − FloorZ = 0.913 m above the floor.
	FloorZ = -0.913
	// WallHalfHeight is the half height of the retaining walls around the
	// table top (boxes centred at z = WallHalfHeight).
	WallHalfHeight = 0.06
)

// Puck geometry of push-v2 (sawyer_push_v2.xml): an upright cylinder.
const (
	// PuckRadius is the cylinder radius.
	PuckRadius = 0.02
	// PuckHalfHeight is half the cylinder's height; the puck's centre rests
	// at z = TableTopZ + PuckHalfHeight.
	PuckHalfHeight = 0.02
	// PuckMass is the puck's mass in kg.
	PuckMass = 0.75
)

// Gripper constants (xyz_base.xml, sawyer_push_v2.xml of MetaWorld v2).
const (
	// ClawOffset is the distance of each claw body from the hand's centre
	// along the closing axis (world y) when the gripper is open.
	ClawOffset = 0.05
	// TCPOffset is how far below the hand body the finger-tip sites (and so
	// the tool centre point) are.
	TCPOffset = 0.045
	// GripperKp is the gain of the two finger position actuators (N/m).
	GripperKp = 400
	// FingerDistNorm normalises the claw distance into observation[3].
	FingerDistNorm = 0.1
)

// Link is one link of the Sawyer arm: its body frame in the parent link's
// frame, the hinge joint about the body's z axis, and its mass properties.
// Angles are radians, lengths metres, masses kg, inertias kg·m².
type Link struct {
	// Name is the body name; the joint is named by Joint.
	Name, Joint string
	// Pos and Quat (w, x, y, z) place the body frame in its parent's frame.
	Pos  [3]float64
	Quat [4]float64
	// Range is the joint's position range (radians).
	Range [2]float64
	// Mass, COM (body frame) and Inertia (principal moments, used as a
	// diagonal inertia in the body frame: a simplification, the published
	// model rotates them by a principal-axes quaternion).
	Mass    float64
	COM     [3]float64
	Inertia [3]float64
}

// ArmJointDamping is the viscous damping of every arm joint (N·m·s/rad).
const ArmJointDamping = 10

// ArmBaseZ is the height of the first joint's body (right_l0) above the
// arm base at the origin.
const ArmBaseZ = 0.08

// SawyerArm returns the seven arm links from the base (right_l0, joint
// right_j0) to the wrist (right_l6, joint right_j6), with the link offsets,
// joint ranges and masses of MetaWorld v2's Sawyer model (xyz_base.xml).
func SawyerArm() []Link {
	const h = 0.707107
	return []Link{
		{Name: "right_l0", Joint: "right_j0", Pos: [3]float64{0, 0, ArmBaseZ}, Quat: [4]float64{1, 0, 0, 0},
			Range: [2]float64{-3.0503, 3.0503}, Mass: 5.3213,
			COM: [3]float64{0.024366, 0.010969, 0.14363}, Inertia: [3]float64{0.0651588, 0.0510944, 0.0186218}},
		{Name: "right_l1", Joint: "right_j1", Pos: [3]float64{0.081, 0.05, 0.237}, Quat: [4]float64{0.5, -0.5, 0.5, 0.5},
			Range: [2]float64{-3.8, -0.5}, Mass: 4.505,
			COM: [3]float64{-0.0030849, -0.026811, 0.092521}, Inertia: [3]float64{0.0224339, 0.0221624, 0.0097097}},
		{Name: "right_l2", Joint: "right_j2", Pos: [3]float64{0, -0.14, 0.1425}, Quat: [4]float64{h, h, 0, 0},
			Range: [2]float64{-3.0426, 3.0426}, Mass: 1.745,
			COM: [3]float64{-0.00016044, -0.014967, 0.13582}, Inertia: [3]float64{0.0257928, 0.025506, 0.00292515}},
		{Name: "right_l3", Joint: "right_j3", Pos: [3]float64{0, -0.042, 0.26}, Quat: [4]float64{h, -h, 0, 0},
			Range: [2]float64{-3.0439, 3.0439}, Mass: 2.5097,
			COM: [3]float64{-0.0048135, -0.0281, -0.084154}, Inertia: [3]float64{0.0102404, 0.0096997, 0.00369622}},
		{Name: "right_l4", Joint: "right_j4", Pos: [3]float64{0, -0.125, -0.1265}, Quat: [4]float64{h, h, 0, 0},
			Range: [2]float64{-2.9761, 2.9761}, Mass: 1.1136,
			COM: [3]float64{-0.0018844, 0.0069001, 0.1341}, Inertia: [3]float64{0.0136549, 0.0135493, 0.00127353}},
		{Name: "right_l5", Joint: "right_j5", Pos: [3]float64{0, 0.031, 0.275}, Quat: [4]float64{h, -h, 0, 0},
			Range: [2]float64{-2.9761, 2.9761}, Mass: 1.5625,
			COM: [3]float64{0.0061133, -0.023697, 0.076416}, Inertia: [3]float64{0.00474131, 0.00422857, 0.00190672}},
		{Name: "right_l6", Joint: "right_j6", Pos: [3]float64{0, -0.11, 0.1053}, Quat: [4]float64{0.0616248, 0.06163, -0.704416, 0.704416},
			Range: [2]float64{-4.7124, 4.7124}, Mass: 0.3292,
			COM: [3]float64{-8.0726e-06, 0.0085838, -0.0049566}, Inertia: [3]float64{0.000360258, 0.000311068, 0.000214974}},
	}
}

// Wrist-to-hand frames: right_hand sits on right_l6 and carries the hand
// body, whose x axis points along the fingers and y along their closing
// direction (xyz_base.xml).
var (
	rightHandPos  = [3]float64{0, 0, 0.0245}
	rightHandQuat = [4]float64{0.707107, 0, 0, 0.707107}
	handPos       = [3]float64{0, 0, 0.12}
	handQuat      = [4]float64{-1, 0, 1, 0}
)

// MocapQuat is the orientation (w, x, y, z) MetaWorld holds the mocap body
// at, (1, 0, 1, 0) normalised: a quarter turn about y, which points the
// hand's x axis (the fingers) straight down and keeps its y axis (the
// closing direction) along world y.
var MocapQuat = [4]float64{0.7071067811865476, 0, 0.7071067811865476, 0}

// ff and fs format one number and a space-separated list for MJCF.
var ff, fs = mjcf.Num, mjcf.Nums

// sceneMJCF returns the MJCF document of the arm, gripper, table and a
// puck-and-goal task, with the mocap body and the puck at the given
// initial positions.
func sceneMJCF(name string, handInit, puckInit, goal [3]float64) string {
	return buildScene(name, handInit, puckMJCF(puckInit), "", goal)
}

// taskMJCF returns the MJCF document of task t with its object (or
// fixture base) at obj and the goal site at goal.
func taskMJCF(t Task, obj, goal [3]float64) string {
	switch t.kind {
	case kindDoorClose:
		return buildScene(t.Name, t.HandInit, doorMJCF(obj), doorExclude, goal)
	case kindDrawerClose, kindDrawerOpen:
		return buildScene(t.Name, t.HandInit, drawerMJCF(obj), drawerExclude, goal)
	}
	return sceneMJCF(t.Name, t.HandInit, obj, goal)
}

// puckMJCF is push-v2's scene fragment: a free cylinder named obj.
func puckMJCF(puckInit [3]float64) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("    <body name=\"obj\" pos=\"%s\">\n", fs(puckInit[:]...))
	w("      <joint name=\"objjoint\" type=\"free\" limited=\"false\" damping=\"0\" armature=\"0\"/>\n")
	w("      <inertial pos=\"0 0 0\" mass=\"%s\" diaginertia=\"8.80012e-04 8.80012e-04 8.80012e-04\"/>\n", ff(PuckMass))
	w("      <geom name=\"objGeom\" type=\"cylinder\" pos=\"0 0 0\" size=\"%s\" solimp=\"0.99 0.99 0.01\" solref=\"0.01 1\" contype=\"1\" conaffinity=\"1\" friction=\"1 0.1 0.002\" condim=\"4\"/>\n",
		fs(PuckRadius, PuckHalfHeight))
	w("    </body>\n")
	return b.String()
}

// buildScene returns the MJCF document of the arm, gripper and table with
// the hand's mocap body at handInit, the task's scene fragment (bodies
// placed in the world after the mocap), the goal site, and the task's
// contact exclusions (a <contact> section's body, "" for none).
func buildScene(name string, handInit [3]float64, fragment, exclude string, goal [3]float64) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("<mujoco model=%q>\n", name)
	w("  <compiler angle=\"radian\" coordinate=\"local\" inertiafromgeom=\"auto\"/>\n")
	w("  <option timestep=\"%s\" iterations=\"50\" tolerance=\"1e-10\" solver=\"Newton\" jacobian=\"dense\" cone=\"elliptic\" gravity=\"0 0 -9.81\"/>\n", ff(Timestep))
	w("  <worldbody>\n")
	w("    <geom name=\"floor\" type=\"plane\" size=\"4 4 0.1\" pos=\"0 0 %s\" contype=\"1\" conaffinity=\"1\" condim=\"3\"/>\n", ff(FloorZ))
	w("    <body name=\"tablelink\" pos=\"0 %s %s\">\n", ff(TableCenterY), ff(TableTopZ))
	w("      <geom name=\"tabletop\" type=\"box\" size=\"%s\" pos=\"0 0 %s\" contype=\"0\" conaffinity=\"1\"/>\n",
		fs(TableHalfX, TableHalfY, TableHalfZ), ff(-TableHalfZ))
	w("    </body>\n")
	// Retaining walls around the table top (contype 0: they only collide
	// with geoms whose contype matches their conaffinity).
	walls := [][6]float64{
		{0, -0.39, 0, 0.7, 0.01, WallHalfHeight}, {0, 0.39, 0, 0.7, 0.01, WallHalfHeight},
		{-0.69, 0, 0, 0.01, 0.38, WallHalfHeight}, {0.69, 0, 0, 0.01, 0.38, WallHalfHeight},
	}
	w("    <body name=\"RetainingWall\" pos=\"0 %s %s\">\n", ff(TableCenterY), ff(TableTopZ+WallHalfHeight))
	for i, wl := range walls {
		w("      <geom name=\"wall%d\" type=\"box\" pos=\"%s\" size=\"%s\" contype=\"0\" conaffinity=\"1\" condim=\"3\"/>\n",
			i, fs(wl[0], wl[1], wl[2]), fs(wl[3], wl[4], wl[5]))
	}
	w("    </body>\n")

	// The arm: a chain of bodies with hinges about their z axes, no geoms.
	ind := "    "
	w("%s<body name=\"base\" pos=\"0 0 0\">\n", ind)
	for _, l := range SawyerArm() {
		ind += "  "
		w("%s<body name=%q pos=\"%s\" quat=\"%s\">\n", ind, l.Name, fs(l.Pos[:]...), fs(l.Quat[:]...))
		w("%s  <inertial pos=\"%s\" mass=\"%s\" diaginertia=\"%s\"/>\n", ind, fs(l.COM[:]...), ff(l.Mass), fs(l.Inertia[:]...))
		w("%s  <joint name=%q type=\"hinge\" pos=\"0 0 0\" axis=\"0 0 1\" limited=\"true\" range=\"%s\" damping=\"%s\"/>\n",
			ind, l.Joint, fs(l.Range[:]...), ff(ArmJointDamping))
	}
	ind += "  "
	w("%s<body name=\"right_hand\" pos=\"%s\" quat=\"%s\">\n", ind, fs(rightHandPos[:]...), fs(rightHandQuat[:]...))
	w("%s  <geom name=\"gripper_base\" type=\"cylinder\" size=\"0.035 0.014\" pos=\"0 0 0.015\" mass=\"0.1\"/>\n", ind)
	ind += "  "
	w("%s<body name=\"hand\" pos=\"%s\" quat=\"%s\">\n", ind, fs(handPos[:]...), fs(handQuat[:]...))
	w("%s  <site name=\"endEffector\" pos=\"0.04 0 0\" size=\"0.01\"/>\n", ind)
	w("%s  <geom name=\"rail\" type=\"box\" pos=\"-0.05 0 0\" size=\"0.005 0.055 0.005\" density=\"7850\" condim=\"3\" friction=\"2 0.1 0.002\"/>\n", ind)
	finger := func(side string, y, padY float64, lo, hi float64, padMass string) {
		w("%s  <body name=\"%sclaw\" pos=\"0 %s 0\">\n", ind, side, ff(y))
		w("%s    <geom name=\"%sclaw_it\" type=\"box\" size=\"0.045 0.003 0.015\" condim=\"4\" margin=\"0.001\"/>\n", ind, side)
		w("%s    <joint name=\"%s_close\" type=\"slide\" pos=\"0 0 0\" axis=\"0 1 0\" limited=\"true\" range=\"%s\" armature=\"100\" damping=\"1000\"/>\n",
			ind, side[:1], fs(lo, hi))
		w("%s    <site name=\"%sEndEffector\" pos=\"%s 0 0\" size=\"0.01\"/>\n", ind, side, ff(TCPOffset))
		w("%s    <body name=\"%spad\" pos=\"0 %s 0\">\n", ind, side, ff(padY))
		w("%s      <geom name=\"%spad_geom\" type=\"box\" size=\"0.045 0.003 0.015\" condim=\"4\" margin=\"0.001\" solimp=\"0.95 0.99 0.01\" solref=\"0.01 1\" friction=\"2 0.1 0.002\"%s/>\n",
			ind, side, padMass)
		w("%s    </body>\n", ind)
		w("%s  </body>\n", ind)
	}
	finger("right", -ClawOffset, 0.003, 0, 0.04, " mass=\"1\"")
	finger("left", ClawOffset, -0.003, -0.03, 0, "")
	w("%s</body>\n", ind) // hand
	for range len(SawyerArm()) + 2 {
		ind = ind[:len(ind)-2]
		w("%s</body>\n", ind)
	}
	w("    <body name=\"mocap\" mocap=\"true\" pos=\"%s\" quat=\"%s\">\n", fs(handInit[:]...), fs(MocapQuat[:]...))
	w("      <site name=\"mocap\" pos=\"0 0 0\" size=\"0.01\"/>\n")
	w("    </body>\n")
	b.WriteString(fragment)
	w("    <site name=\"goal\" pos=\"%s\" size=\"0.02\"/>\n", fs(goal[:]...))
	w("  </worldbody>\n")
	if exclude != "" {
		w("  <contact>\n%s  </contact>\n", exclude)
	}
	w("  <equality>\n    <weld body1=\"mocap\" body2=\"hand\" relpose=\"0 0 0 1 0 0 0\" solref=\"0.02 1\"/>\n  </equality>\n")
	w("  <actuator>\n")
	w("    <position name=\"r_close\" joint=\"r_close\" kp=\"%s\" ctrllimited=\"true\" ctrlrange=\"-1 1\"/>\n", ff(GripperKp))
	w("    <position name=\"l_close\" joint=\"l_close\" kp=\"%s\" ctrllimited=\"true\" ctrlrange=\"-1 1\"/>\n", ff(GripperKp))
	w("  </actuator>\n</mujoco>\n")
	return b.String()
}
