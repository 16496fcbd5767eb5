package mujoco

import (
	"fmt"
	"math"
	"strings"

	"github.com/koopq/koopq/internal/mjcf"
)

// Robot is a parameter table for one MuJoCo locomotion model. MJCF turns it
// into an MJCF document. Every attribute is written explicitly on its element
// (no <default> classes), in local coordinates. Lengths are in metres; angles
// (joint ranges, geom axis-angles) are in degrees when Degrees is set and in
// radians otherwise, exactly as in the published Gym XML files, so that
// MuJoCo performs the same unit conversions.
type Robot struct {
	// Name is the model name, e.g. "hopper".
	Name string
	// Integrator is "Euler" or "RK4".
	Integrator string
	// Timestep is opt.timestep in seconds.
	Timestep float64
	// FrameSkip is the number of mj_step calls per environment step.
	FrameSkip int
	// Degrees selects compiler angle="degree".
	Degrees bool
	// SetTotalMass, when > 0, rescales all masses and inertias so the model
	// weighs this much (compiler settotalmass; HalfCheetah uses 14).
	SetTotalMass float64
	// NStack, when > 0, sets <size nstack> (number of mjtNums in the stack).
	NStack int
	// Floor is the ground plane, a child of the world body.
	Floor Geom
	// Obstacles are further static geoms of the world body (AntMaze walls).
	Obstacles []Geom
	// Torso is the root body of the robot, a child of the world body.
	Torso Body
	// Actuators are motors, in actuator (ctrl) order.
	Actuators []Actuator
}

// Body is a rigid body with its joints, geoms and children.
type Body struct {
	// Name is the body name (Gym's names where the envs look bodies up).
	Name string
	// Pos is the body frame origin in the parent's frame.
	Pos      [3]float64
	Joints   []Joint
	Geoms    []Geom
	Children []Body
}

// Joint is a MuJoCo joint with all parameters explicit.
type Joint struct {
	// Name is the joint name that actuators refer to.
	Name string
	// Type is "slide", "hinge" or "free".
	Type string
	// Pos is the joint position in the body frame, Axis its axis.
	Pos, Axis [3]float64
	// Limited enables Range (in the robot's angle unit for hinges).
	Limited bool
	Range   [2]float64
	// Ref is the reference position (qpos0 for slide and hinge joints).
	Ref float64
	// Armature (added rotor inertia), Damping and Stiffness (spring to qpos0).
	Armature, Damping, Stiffness float64
	// SolRefLimit and SolImpLimit override MuJoCo's limit solver
	// parameters when non-nil.
	SolRefLimit, SolImpLimit []float64
}

// Geom is a collision/inertia geometry with all parameters explicit.
type Geom struct {
	// Name is the geom name.
	Name string
	// Type is "capsule", "sphere" or "plane".
	Type string
	// Size is the MuJoCo size vector: capsule (radius) with FromTo or
	// (radius, half-length) with Pos/AxisAngle; sphere (radius); plane (x, y, spacing).
	Size []float64
	// FromTo (length 6), when set, places a capsule between two points.
	FromTo []float64
	// Pos is the geom centre (ignored with FromTo).
	Pos [3]float64
	// AxisAngle (length 4: axis then angle), when set, orients the geom.
	AxisAngle []float64
	// Friction is (sliding, torsional, rolling).
	Friction [3]float64
	// Density in kg/m³ (used for masses).
	Density                      float64
	ConType, ConAffinity, Condim int
	Margin                       float64
	// SolRef and SolImp override MuJoCo's contact solver parameters when non-nil.
	SolRef, SolImp []float64
}

// Actuator is a motor on a joint with a gear ratio and control range.
type Actuator struct {
	// Joint is the name of the driven joint.
	Joint string
	// Gear scales the control into a joint torque (force).
	Gear float64
	// CtrlRange is the control range; controls are clamped to it.
	CtrlRange [2]float64
}

// ModelOptions selects model-generation variants.
type ModelOptions struct {
	// ExactCapsuleInertia, when true, lets MuJoCo 2.2.2 compute capsule
	// masses and inertias exactly (behaviour of MuJoCo >= 2.1.1, Gymnasium
	// v4). The default (false) writes explicit <inertial> elements computed
	// with the approximation of MuJoCo <= 2.1.0 (a cylinder of length L + r),
	// which is what mujoco-py and therefore D4RL used.
	ExactCapsuleInertia bool
}

// ff and fs format one number and a space-separated list for MJCF.
var ff, fs = mjcf.Num, mjcf.Nums

// MJCF returns the MJCF document for r.
func (r Robot) MJCF(opt ModelOptions) string {
	var b strings.Builder
	angle := "radian"
	if r.Degrees {
		angle = "degree"
	}
	inertia := "true"
	if !opt.ExactCapsuleInertia {
		inertia = "auto" // explicit <inertial> elements take precedence
	}
	fmt.Fprintf(&b, "<mujoco model=%q>\n", r.Name)
	fmt.Fprintf(&b, "  <compiler angle=%q coordinate=\"local\" inertiafromgeom=%q", angle, inertia)
	if r.SetTotalMass > 0 {
		fmt.Fprintf(&b, " settotalmass=\"%s\"", ff(r.SetTotalMass))
	}
	b.WriteString("/>\n")
	fmt.Fprintf(&b, "  <option integrator=%q timestep=\"%s\" gravity=\"0 0 -9.81\"/>\n", r.Integrator, ff(r.Timestep))
	if r.NStack > 0 {
		fmt.Fprintf(&b, "  <size nstack=\"%d\"/>\n", r.NStack)
	}
	b.WriteString("  <worldbody>\n")
	writeGeom(&b, r.Floor, "    ")
	for _, g := range r.Obstacles {
		writeGeom(&b, g, "    ")
	}
	writeBody(&b, r.Torso, "    ", r.Degrees, !opt.ExactCapsuleInertia)
	b.WriteString("  </worldbody>\n  <actuator>\n")
	for _, a := range r.Actuators {
		fmt.Fprintf(&b, "    <motor joint=%q gear=\"%s\" ctrllimited=\"true\" ctrlrange=\"%s\"/>\n",
			a.Joint, ff(a.Gear), fs(a.CtrlRange[0], a.CtrlRange[1]))
	}
	b.WriteString("  </actuator>\n</mujoco>\n")
	return b.String()
}

func writeGeom(b *strings.Builder, g Geom, ind string) {
	fmt.Fprintf(b, "%s<geom name=%q type=%q size=\"%s\"", ind, g.Name, g.Type, fs(g.Size...))
	if g.FromTo != nil {
		fmt.Fprintf(b, " fromto=\"%s\"", fs(g.FromTo...))
	} else {
		fmt.Fprintf(b, " pos=\"%s\"", fs(g.Pos[:]...))
		if g.AxisAngle != nil {
			fmt.Fprintf(b, " axisangle=\"%s\"", fs(g.AxisAngle...))
		}
	}
	fmt.Fprintf(b, " friction=\"%s\" density=\"%s\" contype=\"%d\" conaffinity=\"%d\" condim=\"%d\" margin=\"%s\"",
		fs(g.Friction[:]...), ff(g.Density), g.ConType, g.ConAffinity, g.Condim, ff(g.Margin))
	if g.SolRef != nil {
		fmt.Fprintf(b, " solref=\"%s\"", fs(g.SolRef...))
	}
	if g.SolImp != nil {
		fmt.Fprintf(b, " solimp=\"%s\"", fs(g.SolImp...))
	}
	b.WriteString("/>\n")
}

func writeBody(b *strings.Builder, body Body, ind string, degrees, legacy bool) {
	fmt.Fprintf(b, "%s<body name=%q pos=\"%s\">\n", ind, body.Name, fs(body.Pos[:]...))
	in := ind + "  "
	if legacy {
		in := legacyInertial(body, degrees)
		fmt.Fprintf(b, "%s  <inertial pos=\"%s\" mass=\"%s\" fullinertia=\"%s\"/>\n",
			ind, fs(in.pos[:]...), ff(in.mass), fs(in.full[:]...))
	}
	for _, j := range body.Joints {
		fmt.Fprintf(b, "%s<joint name=%q type=%q pos=\"%s\"", in, j.Name, j.Type, fs(j.Pos[:]...))
		if j.Type != "free" {
			fmt.Fprintf(b, " axis=\"%s\" ref=\"%s\"", fs(j.Axis[:]...), ff(j.Ref))
		}
		fmt.Fprintf(b, " limited=\"%t\"", j.Limited)
		if j.Limited {
			fmt.Fprintf(b, " range=\"%s\"", fs(j.Range[0], j.Range[1]))
		}
		fmt.Fprintf(b, " armature=\"%s\" damping=\"%s\" stiffness=\"%s\"", ff(j.Armature), ff(j.Damping), ff(j.Stiffness))
		if j.SolRefLimit != nil {
			fmt.Fprintf(b, " solreflimit=\"%s\"", fs(j.SolRefLimit...))
		}
		if j.SolImpLimit != nil {
			fmt.Fprintf(b, " solimplimit=\"%s\"", fs(j.SolImpLimit...))
		}
		b.WriteString("/>\n")
	}
	for _, g := range body.Geoms {
		writeGeom(b, g, in)
	}
	for _, c := range body.Children {
		writeBody(b, c, in, degrees, legacy)
	}
	fmt.Fprintf(b, "%s</body>\n", ind)
}

type inertial struct {
	mass float64
	pos  [3]float64
	full [6]float64 // ixx iyy izz ixy ixz iyz about pos, body axes
}

// geomMassProps returns mass, centre (body frame) and the unit axis of a
// geom, with capsule mass and inertia computed the MuJoCo <= 2.1.0 way.
func geomMassProps(g Geom, degrees bool) (m float64, c, u [3]float64, iAxial, iPerp float64) {
	switch g.Type {
	case "sphere":
		r := g.Size[0]
		m = g.Density * 4.0 / 3.0 * math.Pi * r * r * r
		iAxial = 2.0 / 5.0 * m * r * r
		return m, g.Pos, [3]float64{0, 0, 1}, iAxial, iAxial
	case "capsule":
		r := g.Size[0]
		var L float64
		if g.FromTo != nil {
			d := [3]float64{g.FromTo[3] - g.FromTo[0], g.FromTo[4] - g.FromTo[1], g.FromTo[5] - g.FromTo[2]}
			L = math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
			for i := range 3 {
				c[i] = 0.5 * (g.FromTo[i] + g.FromTo[i+3])
				u[i] = d[i] / L
			}
		} else {
			L = 2 * g.Size[1]
			c = g.Pos
			u = [3]float64{0, 0, 1}
			if g.AxisAngle != nil {
				u = rotate([3]float64{0, 0, 1}, g.AxisAngle, degrees)
			}
		}
		h := L + r // legacy: cylinder lengthened by r/2 at each end
		m = g.Density * math.Pi * r * r * h
		iAxial = m * r * r / 2
		iPerp = m * (3*r*r + h*h) / 12
		return m, c, u, iAxial, iPerp
	}
	panic("mujoco: no mass properties for geom type " + g.Type)
}

// rotate applies the axis-angle rotation aa = (axis, angle) to v (Rodrigues).
func rotate(v [3]float64, aa []float64, degrees bool) [3]float64 {
	k := [3]float64{aa[0], aa[1], aa[2]}
	n := math.Sqrt(k[0]*k[0] + k[1]*k[1] + k[2]*k[2])
	for i := range k {
		k[i] /= n
	}
	th := aa[3]
	if degrees {
		th *= math.Pi / 180
	}
	s, co := math.Sincos(th)
	kxv := [3]float64{k[1]*v[2] - k[2]*v[1], k[2]*v[0] - k[0]*v[2], k[0]*v[1] - k[1]*v[0]}
	kv := k[0]*v[0] + k[1]*v[1] + k[2]*v[2]
	var out [3]float64
	for i := range out {
		out[i] = v[i]*co + kxv[i]*s + k[i]*kv*(1-co)
	}
	return out
}

// legacyInertial sums the geoms of a body into one inertial element.
func legacyInertial(body Body, degrees bool) inertial {
	var in inertial
	type part struct {
		m, ia, ip float64
		c, u      [3]float64
	}
	parts := make([]part, 0, len(body.Geoms))
	for _, g := range body.Geoms {
		m, c, u, ia, ip := geomMassProps(g, degrees)
		parts = append(parts, part{m, ia, ip, c, u})
		in.mass += m
		for i := range 3 {
			in.pos[i] += m * c[i]
		}
	}
	for i := range 3 {
		in.pos[i] /= in.mass
	}
	var I [3][3]float64
	for _, p := range parts {
		d := [3]float64{p.c[0] - in.pos[0], p.c[1] - in.pos[1], p.c[2] - in.pos[2]}
		dd := d[0]*d[0] + d[1]*d[1] + d[2]*d[2]
		for i := range 3 {
			for j := range 3 {
				var delta float64
				if i == j {
					delta = 1
				}
				// rotated principal inertia: ip (E - uu^T) + ia uu^T, plus parallel axis
				I[i][j] += p.ip*(delta-p.u[i]*p.u[j]) + p.ia*p.u[i]*p.u[j] + p.m*(dd*delta-d[i]*d[j])
			}
		}
	}
	in.full = [6]float64{I[0][0], I[1][1], I[2][2], I[0][1], I[0][2], I[1][2]}
	return in
}
