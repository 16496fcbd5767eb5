//go:build cgo && !nomujoco

package mujoco

import (
	"math"
	"testing"

	mj "github.com/koopq/koopq/internal/mujoco"
)

// The compiled geometry is pinned to Gym's published model files, not to
// koopq's own tables: github.com/openai/gym, gym/envs/mujoco/assets/
// hopper.xml, walker2d.xml, half_cheetah.xml and ant.xml (the files of the
// v3 environments that D4RL v2 was collected with). The numbers below are
// those files' attribute values, copied as literals (read at gym commits
// 1b09a7e for hopper.xml, 63fc044 for walker2d.xml, e8f2980 for the others).
//
// What is compared is the model as MuJoCo compiles it, in world
// coordinates at qpos0 (mj_forward): every joint's anchor and axis, every
// geom's centre, axis and size, in the order of the XML. World coordinates
// make the comparison independent of how each file writes them: hopper.xml
// and walker2d.xml use coordinate="global" (values read off directly),
// half_cheetah.xml and ant.xml coordinate="local" (their body offsets are
// summed here along each chain; no body is rotated). Body frame origins
// are not compared: with inertia from geoms and joints and geoms placed in
// the world, a body frame's origin carries no physics, and the
// global-coordinate files put the leg and foot frames of hopper and walker2d
// at points (0 0 .35), (.13 0 0) where no joint or geom is.

type gymJoint struct {
	name   string
	anchor *[3]float64 // nil: not compared (slide joints have no anchor)
	axis   [3]float64  // zero: not compared (free joint)
}

type gymGeom struct {
	name         string
	center, axis [3]float64 // axis zero: not compared (sphere); capsule axes up to sign
	size         [3]float64 // MuJoCo geom_size: capsule (r, half-length, 0), sphere (r, 0, 0), plane (x, y, grid)
}

func add3(a, b [3]float64) [3]float64 { return [3]float64{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

func hingeAt(name string, anchor, axis [3]float64) gymJoint {
	return gymJoint{name: name, anchor: &anchor, axis: axis}
}

func slideJ(name string, axis [3]float64) gymJoint { return gymJoint{name: name, axis: axis} }

// fromto is a capsule given by its end points (world coordinates) and radius.
func fromto(name string, r float64, a, b [3]float64) gymGeom {
	d := [3]float64{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
	n := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
	return gymGeom{name: name, center: [3]float64{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2},
		axis: [3]float64{d[0] / n, d[1] / n, d[2] / n}, size: [3]float64{r, n / 2, 0}}
}

// yCapsule is half_cheetah.xml's capsule: pos in its body, axisangle
// "0 1 0 angle" (radians), size "r hl"; its axis is R_y(angle)·ẑ.
func yCapsule(name string, body, pos [3]float64, angle, r, hl float64) gymGeom {
	return gymGeom{name: name, center: add3(body, pos), axis: [3]float64{math.Sin(angle), 0, math.Cos(angle)},
		size: [3]float64{r, hl, 0}}
}

func gymGeometry() map[string]struct {
	joints []gymJoint
	geoms  []gymGeom
} {
	out := map[string]struct {
		joints []gymJoint
		geoms  []gymGeom
	}{}
	x, y, z, my := [3]float64{1, 0, 0}, [3]float64{0, 1, 0}, [3]float64{0, 0, 1}, [3]float64{0, -1, 0}
	plane := func(s float64, grid float64) gymGeom {
		return gymGeom{name: "floor", axis: z, size: [3]float64{s, s, grid}}
	}

	// hopper.xml (coordinate="global").
	out["hopper"] = struct {
		joints []gymJoint
		geoms  []gymGeom
	}{
		joints: []gymJoint{slideJ("rootx", x), slideJ("rootz", z), hingeAt("rooty", [3]float64{0, 0, 1.25}, y),
			hingeAt("thigh_joint", [3]float64{0, 0, 1.05}, my), hingeAt("leg_joint", [3]float64{0, 0, 0.6}, my),
			hingeAt("foot_joint", [3]float64{0, 0, 0.1}, my)},
		geoms: []gymGeom{plane(20, 0.125),
			fromto("torso_geom", 0.05, [3]float64{0, 0, 1.45}, [3]float64{0, 0, 1.05}),
			fromto("thigh_geom", 0.05, [3]float64{0, 0, 1.05}, [3]float64{0, 0, 0.6}),
			fromto("leg_geom", 0.04, [3]float64{0, 0, 0.6}, [3]float64{0, 0, 0.1}),
			fromto("foot_geom", 0.06, [3]float64{-0.13, 0, 0.1}, [3]float64{0.26, 0, 0.1})},
	}

	// walker2d.xml (coordinate="global"): the right leg, then the left leg at
	// the same places.
	w := out["walker2d"]
	w.joints = []gymJoint{slideJ("rootx", x), slideJ("rootz", z), hingeAt("rooty", [3]float64{0, 0, 1.25}, y)}
	w.geoms = []gymGeom{plane(40, 40), fromto("torso_geom", 0.05, [3]float64{0, 0, 1.45}, [3]float64{0, 0, 1.05})}
	for _, side := range []string{"", "_left"} {
		w.joints = append(w.joints, hingeAt("thigh"+side+"_joint", [3]float64{0, 0, 1.05}, my),
			hingeAt("leg"+side+"_joint", [3]float64{0, 0, 0.6}, my), hingeAt("foot"+side+"_joint", [3]float64{0, 0, 0.1}, my))
		w.geoms = append(w.geoms, fromto("thigh"+side+"_geom", 0.05, [3]float64{0, 0, 1.05}, [3]float64{0, 0, 0.6}),
			fromto("leg"+side+"_geom", 0.04, [3]float64{0, 0, 0.6}, [3]float64{0, 0, 0.1}),
			fromto("foot"+side+"_geom", 0.06, [3]float64{0, 0, 0.1}, [3]float64{0.2, 0, 0.1}))
	}
	out["walker2d"] = w

	// half_cheetah.xml (coordinate="local", angles in radians): body
	// offsets along the back and front chains.
	torso := [3]float64{0, 0, 0.7}
	bthigh := add3(torso, [3]float64{-0.5, 0, 0})
	bshin := add3(bthigh, [3]float64{0.16, 0, -0.25})
	bfoot := add3(bshin, [3]float64{-0.28, 0, -0.14})
	fthigh := add3(torso, [3]float64{0.5, 0, 0})
	fshin := add3(fthigh, [3]float64{-0.14, 0, -0.24})
	ffoot := add3(fshin, [3]float64{0.13, 0, -0.18})
	hc := out["halfcheetah"]
	hc.joints = []gymJoint{slideJ("rootx", x), slideJ("rootz", z), hingeAt("rooty", torso, y),
		hingeAt("bthigh", bthigh, y), hingeAt("bshin", bshin, y), hingeAt("bfoot", bfoot, y),
		hingeAt("fthigh", fthigh, y), hingeAt("fshin", fshin, y), hingeAt("ffoot", ffoot, y)}
	hc.geoms = []gymGeom{plane(40, 40),
		fromto("torso", 0.046, add3(torso, [3]float64{-0.5, 0, 0}), add3(torso, [3]float64{0.5, 0, 0})),
		yCapsule("head", torso, [3]float64{0.6, 0, 0.1}, 0.87, 0.046, 0.15),
		yCapsule("bthigh", bthigh, [3]float64{0.1, 0, -0.13}, -3.8, 0.046, 0.145),
		yCapsule("bshin", bshin, [3]float64{-0.14, 0, -0.07}, -2.03, 0.046, 0.15),
		yCapsule("bfoot", bfoot, [3]float64{0.03, 0, -0.097}, -0.27, 0.046, 0.094),
		yCapsule("fthigh", fthigh, [3]float64{-0.07, 0, -0.12}, 0.52, 0.046, 0.133),
		yCapsule("fshin", fshin, [3]float64{0.065, 0, -0.09}, -0.6, 0.046, 0.106),
		yCapsule("ffoot", ffoot, [3]float64{0.045, 0, -0.07}, -0.6, 0.046, 0.07)}
	out["halfcheetah"] = hc

	// ant.xml (coordinate="local", angles in degrees): four legs, each
	// aux_k at d, the ankle body at 2d from the torso; Gym's geom names.
	at := [3]float64{0, 0, 0.75}
	an := out["ant"]
	an.joints = []gymJoint{{name: "root", anchor: &at}}
	an.geoms = []gymGeom{plane(40, 40), {name: "torso_geom", center: at, size: [3]float64{0.25, 0, 0}}}
	legs := []struct {
		d, ankleAxis     [3]float64
		aux, leg, ankle  string // geom names
		hipJ, ankleJoint string
	}{
		{[3]float64{0.2, 0.2, 0}, [3]float64{-1, 1, 0}, "aux_1_geom", "left_leg_geom", "left_ankle_geom", "hip_1", "ankle_1"},
		{[3]float64{-0.2, 0.2, 0}, [3]float64{1, 1, 0}, "aux_2_geom", "right_leg_geom", "right_ankle_geom", "hip_2", "ankle_2"},
		{[3]float64{-0.2, -0.2, 0}, [3]float64{-1, 1, 0}, "aux_3_geom", "back_leg_geom", "third_ankle_geom", "hip_3", "ankle_3"},
		{[3]float64{0.2, -0.2, 0}, [3]float64{1, 1, 0}, "aux_4_geom", "rightback_leg_geom", "fourth_ankle_geom", "hip_4", "ankle_4"},
	}
	for _, l := range legs {
		aux := add3(at, l.d)    // body aux_k
		ankle := add3(aux, l.d) // its child body
		// fromto "0 0 0 ±.4 ±.4 0" in the ankle body: twice the offset.
		end := add3(ankle, [3]float64{2 * l.d[0], 2 * l.d[1], 0})
		n := math.Sqrt2
		an.joints = append(an.joints, hingeAt(l.hipJ, aux, z),
			hingeAt(l.ankleJoint, ankle, [3]float64{l.ankleAxis[0] / n, l.ankleAxis[1] / n, 0}))
		an.geoms = append(an.geoms, fromto(l.aux, 0.08, at, aux), fromto(l.leg, 0.08, aux, ankle),
			fromto(l.ankle, 0.08, ankle, end))
	}
	out["ant"] = an
	return out
}

func TestGeometryMatchesGymXML(t *testing.T) {
	const tol = 1e-9
	for name, want := range gymGeometry() {
		e := newEnv(t, name, Options{})
		m := e.model
		d, err := mj.NewData(m)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		if err := d.Forward(); err != nil {
			t.Fatal(err)
		}
		if m.NJnt() != len(want.joints) || m.NGeom() != len(want.geoms) {
			t.Fatalf("%s: %d joints and %d geoms, Gym's XML has %d and %d", name, m.NJnt(), m.NGeom(), len(want.joints), len(want.geoms))
		}
		anchor, axis := d.XAnchor(), d.XAxis()
		for j, wj := range want.joints {
			if wj.anchor != nil && !near3(anchor[3*j:3*j+3], *wj.anchor, tol) {
				t.Errorf("%s joint %s: anchor %v, Gym %v", name, wj.name, anchor[3*j:3*j+3], *wj.anchor)
			}
			if wj.axis != ([3]float64{}) && !near3(axis[3*j:3*j+3], wj.axis, tol) {
				t.Errorf("%s joint %s: axis %v, Gym %v", name, wj.name, axis[3*j:3*j+3], wj.axis)
			}
		}
		pos, mat, size := d.GeomXPos(), d.GeomXMat(), m.GeomSize()
		for g, wg := range want.geoms {
			if !near3(pos[3*g:3*g+3], wg.center, tol) {
				t.Errorf("%s geom %s: centre %v, Gym %v", name, wg.name, pos[3*g:3*g+3], wg.center)
			}
			if !near3(size[3*g:3*g+3], wg.size, tol) {
				t.Errorf("%s geom %s: size %v, Gym %v", name, wg.name, size[3*g:3*g+3], wg.size)
			}
			if wg.axis != ([3]float64{}) {
				zAxis := [3]float64{mat[9*g+2], mat[9*g+5], mat[9*g+8]}
				dot := zAxis[0]*wg.axis[0] + zAxis[1]*wg.axis[1] + zAxis[2]*wg.axis[2]
				if math.Abs(math.Abs(dot)-1) > tol {
					t.Errorf("%s geom %s: axis %v, Gym %v", name, wg.name, zAxis, wg.axis)
				}
			}
		}
	}
}

func near3(got []float64, want [3]float64, tol float64) bool {
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol {
			return false
		}
	}
	return true
}
