package manip

import (
	"fmt"
	"strings"
)

// Door of door-close-v2 (sawyer_door_pull.xml, doorlockB.xml and
// doorlock_dependencies.xml of MetaWorld v2): a safe whose door hangs on a
// vertical hinge at the safe's front-left corner. Metres, radians, in the
// frame of the door's base body (the drawn object position).
const (
	// DoorHingeX and DoorHingeY place the door_link body (and its hinge)
	// relative to the base.
	DoorHingeX, DoorHingeY = -0.185, -0.1
	// DoorJointMin and DoorJointMax are doorjoint's range: 0 is closed,
	// negative angles swing the door toward the arm.
	DoorJointMin, DoorJointMax = -2.0, 0.0
	// DoorOpenAngle is the angle reset puts the door at (−1.5708 rad).
	DoorOpenAngle = -1.5708
	// DoorPanelHalf are the half sizes of the door panel's collision box,
	// centred at (0.185, 0, 0) in door_link's frame.
	DoorPanelHalfX, DoorPanelHalfY, DoorPanelHalfZ = 0.18, 0.01, 0.123
	// FixtureDamping and FixtureArmature are the door hinge's and drawer
	// slide's damping (N·m·s/rad or N·s/m) and armature.
	FixtureDamping, FixtureArmature = 2.0, 0.001
)

// DoorHandlePos is the handle geom's position in door_link's frame; its
// orientation is a 1.57 rad turn about x (doorlockB.xml).
var DoorHandlePos = [3]float64{0.325, -0.062, 0}

// DoorHandleEulerX is the handle geom's rotation about door_link's x axis.
const DoorHandleEulerX = 1.57

// Drawer of the drawer tasks (sawyer_drawer.xml, drawer.xml and
// drawer_dependencies.xml of MetaWorld v2): a fixed case and a drawer on
// a slide along y. Metres, in the frame of the drawer's base body.
const (
	// DrawerCaseZ is the height of drawercase_link above the base.
	DrawerCaseZ = 0.084
	// DrawerLinkY and DrawerLinkZ place drawer_link in drawercase_link's
	// frame, so the closed drawer's body origin is at base + (0, −0.01, 0.09).
	DrawerLinkY, DrawerLinkZ = -0.01, 0.006
	// DrawerSlideMin and DrawerSlideMax are goal_slidey's range: 0 is
	// closed, −0.16 fully open (toward the arm).
	DrawerSlideMin, DrawerSlideMax = -0.16, 0.0
	// DrawerHandleY is the y of the handle bar (a capsule along x of
	// radius DrawerHandleRadius and half length 0.05) in drawer_link's
	// frame.
	DrawerHandleY, DrawerHandleRadius = -0.15, 0.009
	// DrawerLinkMass is drawer_link's mass in kg: five walls of 0.04 and
	// three handle capsules of 0.06 (only collision geoms carry inertia).
	DrawerLinkMass = 5*0.04 + 3*0.06
	// DrawerObsOffsetY is the offset along y from drawer_link's origin to
	// the observed handle point (both drawer tasks).
	DrawerObsOffsetY = -0.16
	// DrawerCloseObsOffsetZ is drawer-close-v2's extra height of the
	// observed handle point above drawer_link's origin.
	DrawerCloseObsOffsetZ = 0.05
	// DrawerCloseStart is the slide position drawer-close-v2's reset pulls
	// the drawer to (−maxDist = −0.15).
	DrawerCloseStart = -0.15
	// DrawerOpenMaxDist is drawer-open-v2's maxDist: the goal lies this far
	// in front of the closed handle point.
	DrawerOpenMaxDist = 0.2
)

// fixtureCol is the contact setting of MetaWorld's dl_col and drawer_col
// collision classes.
const fixtureCol = `contype="1" conaffinity="1" condim="3" solimp="0.99 0.99 0.01" solref="0.01 1"`

// doorMJCF is door-close-v2's scene fragment: the safe's walls on a mocap
// base body named door (so Reset can move it), door_link on the hinge
// doorjoint with the panel and handle collision shapes, and a site named
// handle where the handle geom sits. Without mass attributes the door's
// shapes weigh 1000 kg/m³ as MuJoCo's default density gives them.
func doorMJCF(base [3]float64) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("    <body name=\"door\" mocap=\"true\" pos=\"%s\">\n", fs(base[:]...))
	walls := [][6]float64{
		{-0.204, 0, 0, 0.016, 0.106, 0.15}, {0.204, 0, 0, 0.016, 0.106, 0.15},
		{0, 0, 0.138, 0.188, 0.106, 0.012}, {0, 0, -0.138, 0.189, 0.106, 0.012},
		{0, 0.094, 0, 0.188, 0.012, 0.126},
	}
	for i, wl := range walls {
		w("      <geom name=\"safe%d\" type=\"box\" pos=\"%s\" size=\"%s\" %s/>\n", i, fs(wl[:3]...), fs(wl[3:]...), fixtureCol)
	}
	w("      <body name=\"door_link\" pos=\"%s\">\n", fs(DoorHingeX, DoorHingeY, 0))
	w("        <joint name=\"doorjoint\" type=\"hinge\" axis=\"0 0 1\" limited=\"true\" range=\"%s\" damping=\"%s\" armature=\"%s\"/>\n",
		fs(DoorJointMin, DoorJointMax), ff(FixtureDamping), ff(FixtureArmature))
	cyl := [][6]float64{ // pos, euler x/y flag, radius, half length
		{0.325, -0.006, 0, 1, 0.028, 0.012}, {0.325, -0.065, 0, 1, 0.013, 0.047},
		{0.381, -0.12, 0, 0, 0.019, 0.075}, {0.395, -0.12, 0, 0, 0.023, 0.054},
	}
	for i, c := range cyl {
		euler := "0 1.57 0"
		if c[3] == 1 {
			euler = "1.57 0 0"
		}
		w("        <geom name=\"handle_col%d\" type=\"cylinder\" pos=\"%s\" euler=\"%s\" size=\"%s\" %s/>\n",
			i, fs(c[0], c[1], c[2]), euler, fs(c[4], c[5]), fixtureCol)
	}
	w("        <geom name=\"door_panel\" type=\"box\" pos=\"0.185 0 0\" size=\"%s\" %s/>\n",
		fs(DoorPanelHalfX, DoorPanelHalfY, DoorPanelHalfZ), fixtureCol)
	w("        <site name=\"handle\" pos=\"%s\" euler=\"%s 0 0\" size=\"0.01\"/>\n", fs(DoorHandlePos[:]...), ff(DoorHandleEulerX))
	w("      </body>\n    </body>\n")
	return b.String()
}

// doorExclude turns off contacts between the door and its safe, and
// between the safe and the table. MetaWorld's door collides with the safe,
// but at DoorOpenAngle its panel overlaps the safe's left wall by 1 mm,
// and the contact kicks the door shut by itself within a few steps (in
// koopq's model; measured). The safe and table are static, so their
// contact only costs time.
const doorExclude = `    <exclude body1="door" body2="door_link"/>
    <exclude body1="door" body2="tablelink"/>
`

// drawerExclude turns off contacts of the drawer's case with the table
// (both static). MetaWorld's drawer runs in its case with 2 mm clearance,
// so its contacts with the case do not arise in normal use either.
const drawerExclude = `    <exclude body1="drawercase_link" body2="tablelink"/>
    <exclude body1="drawercase_link" body2="drawer_link"/>
`

// drawerMJCF is the drawer tasks' scene fragment: the case's walls on
// drawercase_link under a mocap base body named drawer (so Reset can move
// it), and drawer_link on the slide goal_slidey with its walls and the
// three capsules of its handle.
func drawerMJCF(base [3]float64) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("    <body name=\"drawer\" mocap=\"true\" pos=\"%s\">\n", fs(base[:]...))
	w("      <body name=\"drawercase_link\" pos=\"0 0 %s\">\n", ff(DrawerCaseZ))
	caseWalls := [][6]float64{
		{-0.11, 0, 0, 0.008, 0.1, 0.084}, {0.11, 0, 0, 0.008, 0.1, 0.084},
		{0, 0.092, -0.008, 0.102, 0.008, 0.076}, {0, -0.008, -0.07, 0.102, 0.092, 0.014},
		{0, 0, 0.076, 0.102, 0.1, 0.008},
	}
	for i, wl := range caseWalls {
		w("        <geom name=\"case%d\" type=\"box\" pos=\"%s\" size=\"%s\" mass=\"0.05\" %s/>\n", i, fs(wl[:3]...), fs(wl[3:]...), fixtureCol)
	}
	w("        <body name=\"drawer_link\" pos=\"0 %s %s\">\n", ff(DrawerLinkY), ff(DrawerLinkZ))
	w("          <joint name=\"goal_slidey\" type=\"slide\" axis=\"0 1 0\" limited=\"true\" range=\"%s\" damping=\"%s\" armature=\"%s\"/>\n",
		fs(DrawerSlideMin, DrawerSlideMax), ff(FixtureDamping), ff(FixtureArmature))
	walls := [][6]float64{
		{0, -0.082, 0.008, 0.1, 0.008, 0.052}, {0, 0.082, 0.008, 0.1, 0.008, 0.052},
		{-0.092, 0, 0.008, 0.008, 0.074, 0.052}, {0.092, 0, 0.008, 0.008, 0.074, 0.052},
		{0, 0, -0.052, 0.1, 0.09, 0.008},
	}
	for i, wl := range walls {
		w("          <geom name=\"drawer%d\" type=\"box\" pos=\"%s\" size=\"%s\" mass=\"0.04\" %s/>\n", i, fs(wl[:3]...), fs(wl[3:]...), fixtureCol)
	}
	w("          <geom name=\"handle_side0\" type=\"capsule\" pos=\"-0.05 -0.12 0\" euler=\"1.571 0 0\" size=\"%s 0.03\" mass=\"0.06\" %s/>\n", ff(DrawerHandleRadius), fixtureCol)
	w("          <geom name=\"handle_bar\" type=\"capsule\" pos=\"0 %s 0\" euler=\"0 1.57 0\" size=\"%s 0.05\" mass=\"0.06\" %s/>\n", ff(DrawerHandleY), ff(DrawerHandleRadius), fixtureCol)
	w("          <geom name=\"handle_side1\" type=\"capsule\" pos=\"0.05 -0.12 0\" euler=\"1.57 0 0\" size=\"%s 0.03\" mass=\"0.06\" %s/>\n", ff(DrawerHandleRadius), fixtureCol)
	w("        </body>\n      </body>\n    </body>\n")
	return b.String()
}
