package mujoco

import "fmt"

// Robot parameter tables. Values follow the Gym v3 / D4RL v2 models
// (geometry_test.go pins them to Gym's published XML files); geometry is written in
// local coordinates.

var unlimitedRoot = Joint{Limited: false} // armature, damping, stiffness 0

func rootJoints(zref float64) []Joint {
	x, z, y := unlimitedRoot, unlimitedRoot, unlimitedRoot
	x.Name, x.Type, x.Axis = "rootx", "slide", [3]float64{1, 0, 0}
	z.Name, z.Type, z.Axis, z.Ref = "rootz", "slide", [3]float64{0, 0, 1}, zref
	y.Name, y.Type, y.Axis = "rooty", "hinge", [3]float64{0, 1, 0}
	return []Joint{x, z, y}
}

// Hopper returns the Hopper-v3 parameter table (RK4, dt 0.002, frame skip 4).
func Hopper() Robot {
	geom := func(name string, r float64, fromto []float64, mu float64) Geom {
		return Geom{Name: name, Type: "capsule", Size: []float64{r}, FromTo: fromto,
			Friction: [3]float64{mu, 0.005, 0.0001}, Density: 1000,
			ConType: 1, ConAffinity: 1, Condim: 1, Margin: 0.001,
			SolRef: []float64{0.02, 1}, SolImp: []float64{0.8, 0.8, 0.01}}
	}
	hinge := func(name string, lo, hi float64) Joint {
		return Joint{Name: name, Type: "hinge", Axis: [3]float64{0, -1, 0},
			Limited: true, Range: [2]float64{lo, hi}, Armature: 1, Damping: 1}
	}
	floor := geom("floor", 0, nil, 1)
	floor.Type, floor.Size, floor.Condim = "plane", []float64{20, 20, 0.125}, 3
	return Robot{
		Name: "hopper", Integrator: "RK4", Timestep: 0.002, FrameSkip: 4, Degrees: true,
		Floor: floor,
		Torso: Body{Name: "torso", Pos: [3]float64{0, 0, 1.25},
			Joints: rootJoints(1.25),
			Geoms:  []Geom{geom("torso_geom", 0.05, []float64{0, 0, 0.2, 0, 0, -0.2}, 0.9)},
			Children: []Body{{Name: "thigh", Pos: [3]float64{0, 0, -0.2},
				Joints: []Joint{hinge("thigh_joint", -150, 0)},
				Geoms:  []Geom{geom("thigh_geom", 0.05, []float64{0, 0, 0, 0, 0, -0.45}, 0.9)},
				Children: []Body{{Name: "leg", Pos: [3]float64{0, 0, -0.45},
					Joints: []Joint{hinge("leg_joint", -150, 0)},
					Geoms:  []Geom{geom("leg_geom", 0.04, []float64{0, 0, 0, 0, 0, -0.5}, 0.9)},
					Children: []Body{{Name: "foot", Pos: [3]float64{0, 0, -0.5},
						Joints: []Joint{hinge("foot_joint", -45, 45)},
						Geoms:  []Geom{geom("foot_geom", 0.06, []float64{-0.13, 0, 0, 0.26, 0, 0}, 2.0)},
					}},
				}},
			}},
		},
		Actuators: []Actuator{
			{Joint: "thigh_joint", Gear: 200, CtrlRange: [2]float64{-1, 1}},
			{Joint: "leg_joint", Gear: 200, CtrlRange: [2]float64{-1, 1}},
			{Joint: "foot_joint", Gear: 200, CtrlRange: [2]float64{-1, 1}},
		},
	}
}

// Walker2d returns the Walker2d-v3 parameter table (RK4, dt 0.002, frame
// skip 4). As in Gym, the left foot has friction 1.9 and the right 0.9, so
// the model is not mirror-symmetric.
func Walker2d() Robot {
	geom := func(name string, r float64, fromto []float64, mu float64) Geom {
		return Geom{Name: name, Type: "capsule", Size: []float64{r}, FromTo: fromto,
			Friction: [3]float64{mu, 0.1, 0.1}, Density: 1000,
			ConType: 1, ConAffinity: 0, Condim: 3}
	}
	hinge := func(name string, lo, hi float64) Joint {
		return Joint{Name: name, Type: "hinge", Axis: [3]float64{0, -1, 0},
			Limited: true, Range: [2]float64{lo, hi}, Armature: 0.01, Damping: 0.1}
	}
	leg := func(suffix string, footMu float64) Body {
		return Body{Name: "thigh" + suffix, Pos: [3]float64{0, 0, -0.2},
			Joints: []Joint{hinge("thigh"+suffix+"_joint", -150, 0)},
			Geoms:  []Geom{geom("thigh"+suffix+"_geom", 0.05, []float64{0, 0, 0, 0, 0, -0.45}, 0.9)},
			Children: []Body{{Name: "leg" + suffix, Pos: [3]float64{0, 0, -0.45},
				Joints: []Joint{hinge("leg"+suffix+"_joint", -150, 0)},
				Geoms:  []Geom{geom("leg"+suffix+"_geom", 0.04, []float64{0, 0, 0, 0, 0, -0.5}, 0.9)},
				Children: []Body{{Name: "foot" + suffix, Pos: [3]float64{0, 0, -0.5},
					Joints: []Joint{hinge("foot"+suffix+"_joint", -45, 45)},
					Geoms:  []Geom{geom("foot"+suffix+"_geom", 0.06, []float64{0, 0, 0, 0.2, 0, 0}, footMu)},
				}},
			}},
		}
	}
	floor := geom("floor", 0, nil, 0.7)
	floor.Type, floor.Size, floor.ConAffinity = "plane", []float64{40, 40, 40}, 1
	var act []Actuator
	for _, j := range []string{"thigh_joint", "leg_joint", "foot_joint", "thigh_left_joint", "leg_left_joint", "foot_left_joint"} {
		act = append(act, Actuator{Joint: j, Gear: 100, CtrlRange: [2]float64{-1, 1}})
	}
	return Robot{
		Name: "walker2d", Integrator: "RK4", Timestep: 0.002, FrameSkip: 4, Degrees: true,
		Floor: floor,
		Torso: Body{Name: "torso", Pos: [3]float64{0, 0, 1.25},
			Joints:   rootJoints(1.25),
			Geoms:    []Geom{geom("torso_geom", 0.05, []float64{0, 0, 0.2, 0, 0, -0.2}, 0.9)},
			Children: []Body{leg("", 0.9), leg("_left", 1.9)},
		},
		Actuators: act,
	}
}

// HalfCheetah returns the HalfCheetah-v3 parameter table (Euler, dt 0.01,
// frame skip 5, total mass rescaled to 14).
func HalfCheetah() Robot {
	capsule := func(name string, pos [3]float64, angle, hl float64) Geom {
		return Geom{Name: name, Type: "capsule", Size: []float64{0.046, hl}, Pos: pos,
			AxisAngle: []float64{0, 1, 0, angle}, Friction: [3]float64{0.4, 0.1, 0.1},
			Density: 1000, ConType: 1, ConAffinity: 0, Condim: 3,
			SolRef: []float64{0.02, 1}, SolImp: []float64{0, 0.8, 0.01}}
	}
	hinge := func(name string, lo, hi, k, d float64) Joint {
		return Joint{Name: name, Type: "hinge", Axis: [3]float64{0, 1, 0},
			Limited: true, Range: [2]float64{lo, hi}, Armature: 0.1, Damping: d, Stiffness: k,
			SolRefLimit: []float64{0.02, 1}, SolImpLimit: []float64{0, 0.8, 0.03}}
	}
	torso := capsule("torso", [3]float64{}, 0, 0)
	torso.AxisAngle, torso.Size, torso.FromTo = nil, []float64{0.046}, []float64{-0.5, 0, 0, 0.5, 0, 0}
	floor := capsule("floor", [3]float64{}, 0, 0)
	floor.Type, floor.Size, floor.AxisAngle, floor.ConAffinity = "plane", []float64{40, 40, 40}, nil, 1
	chain := func(specs [3]struct {
		name      string
		pos, gpos [3]float64
		lo, hi    float64
		k, d      float64
		angle, hl float64
	}) Body {
		var b *Body
		var root Body
		for i, s := range specs {
			nb := Body{Name: s.name, Pos: s.pos,
				Joints: []Joint{hinge(s.name, s.lo, s.hi, s.k, s.d)},
				Geoms:  []Geom{capsule(s.name, s.gpos, s.angle, s.hl)}}
			if i == 0 {
				root = nb
				b = &root
			} else {
				b.Children = []Body{nb}
				b = &b.Children[0]
			}
		}
		return root
	}
	type seg = struct {
		name      string
		pos, gpos [3]float64
		lo, hi    float64
		k, d      float64
		angle, hl float64
	}
	back := chain([3]seg{
		{"bthigh", [3]float64{-0.5, 0, 0}, [3]float64{0.1, 0, -0.13}, -0.52, 1.05, 240, 6, -3.8, 0.145},
		{"bshin", [3]float64{0.16, 0, -0.25}, [3]float64{-0.14, 0, -0.07}, -0.785, 0.785, 180, 4.5, -2.03, 0.15},
		{"bfoot", [3]float64{-0.28, 0, -0.14}, [3]float64{0.03, 0, -0.097}, -0.4, 0.785, 120, 3, -0.27, 0.094},
	})
	front := chain([3]seg{
		{"fthigh", [3]float64{0.5, 0, 0}, [3]float64{-0.07, 0, -0.12}, -1, 0.7, 180, 4.5, 0.52, 0.133},
		{"fshin", [3]float64{-0.14, 0, -0.24}, [3]float64{0.065, 0, -0.09}, -1.2, 0.87, 120, 3, -0.6, 0.106},
		{"ffoot", [3]float64{0.13, 0, -0.18}, [3]float64{0.045, 0, -0.07}, -0.5, 0.5, 60, 1.5, -0.6, 0.07},
	})
	root := rootJoints(0)
	for i := range root {
		root[i].SolRefLimit, root[i].SolImpLimit = []float64{0.02, 1}, []float64{0, 0.8, 0.03}
	}
	gears := []struct {
		j string
		g float64
	}{{"bthigh", 120}, {"bshin", 90}, {"bfoot", 60}, {"fthigh", 120}, {"fshin", 60}, {"ffoot", 30}}
	var act []Actuator
	for _, g := range gears {
		act = append(act, Actuator{Joint: g.j, Gear: g.g, CtrlRange: [2]float64{-1, 1}})
	}
	return Robot{
		Name: "halfcheetah", Integrator: "Euler", Timestep: 0.01, FrameSkip: 5, Degrees: false,
		SetTotalMass: 14, NStack: 300000,
		Floor: floor,
		Torso: Body{Name: "torso", Pos: [3]float64{0, 0, 0.7},
			Joints:   root,
			Geoms:    []Geom{torso, capsule("head", [3]float64{0.6, 0, 0.1}, 0.87, 0.15)},
			Children: []Body{back, front},
		},
		Actuators: act,
	}
}

// Ant returns the Ant-v3 parameter table (RK4, dt 0.01, frame skip 5).
// Actuator order is hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3,
// ankle_3 (as in Gym), while qpos order is hip_1, ankle_1, ..., ankle_4.
func Ant() Robot {
	geom := func(name, typ string, size []float64, fromto []float64) Geom {
		return Geom{Name: name, Type: typ, Size: size, FromTo: fromto,
			Friction: [3]float64{1, 0.5, 0.5}, Density: 5,
			ConType: 1, ConAffinity: 0, Condim: 3, Margin: 0.01}
	}
	hinge := func(name string, axis [3]float64, lo, hi float64) Joint {
		return Joint{Name: name, Type: "hinge", Axis: axis,
			Limited: true, Range: [2]float64{lo, hi}, Armature: 1, Damping: 1}
	}
	dirs := [4][2]float64{{0.2, 0.2}, {-0.2, 0.2}, {-0.2, -0.2}, {0.2, -0.2}}
	ankleAxis := [4][3]float64{{-1, 1, 0}, {1, 1, 0}, {-1, 1, 0}, {1, 1, 0}}
	ankleRange := [4][2]float64{{30, 70}, {-70, -30}, {-70, -30}, {30, 70}}
	baseNames := [4]string{"front_left_leg", "front_right_leg", "back_leg", "right_back_leg"}
	var legs []Body
	for k, d := range dirs {
		n := fmt.Sprint(k + 1)
		seg := []float64{0, 0, 0, d[0], d[1], 0}
		legs = append(legs, Body{Name: baseNames[k],
			Geoms: []Geom{geom("aux_"+n+"_geom", "capsule", []float64{0.08}, seg)},
			Children: []Body{{Name: "aux_" + n, Pos: [3]float64{d[0], d[1], 0},
				Joints: []Joint{hinge("hip_"+n, [3]float64{0, 0, 1}, -30, 30)},
				Geoms:  []Geom{geom("leg_"+n+"_geom", "capsule", []float64{0.08}, seg)},
				Children: []Body{{Name: "ankle_" + n + "_body", Pos: [3]float64{d[0], d[1], 0},
					Joints: []Joint{hinge("ankle_"+n, ankleAxis[k], ankleRange[k][0], ankleRange[k][1])},
					Geoms:  []Geom{geom("ankle_"+n+"_geom", "capsule", []float64{0.08}, []float64{0, 0, 0, 2 * d[0], 2 * d[1], 0})},
				}},
			}},
		})
	}
	floor := geom("floor", "plane", []float64{40, 40, 40}, nil)
	floor.ConAffinity = 1
	var act []Actuator
	for _, k := range []string{"4", "1", "2", "3"} {
		act = append(act,
			Actuator{Joint: "hip_" + k, Gear: 150, CtrlRange: [2]float64{-1, 1}},
			Actuator{Joint: "ankle_" + k, Gear: 150, CtrlRange: [2]float64{-1, 1}})
	}
	return Robot{
		Name: "ant", Integrator: "RK4", Timestep: 0.01, FrameSkip: 5, Degrees: true,
		Floor: floor,
		Torso: Body{Name: "torso", Pos: [3]float64{0, 0, 0.75},
			Joints:   []Joint{{Name: "root", Type: "free"}},
			Geoms:    []Geom{geom("torso_geom", "sphere", []float64{0.25}, nil)},
			Children: legs,
		},
		Actuators: act,
	}
}

// AntMazeRobot returns D4RL's AntMaze model (d4rl/locomotion/assets/ant.xml
// plus maze_env.py's walls): the Ant's bodies, joints and masses, with
//   - timestep 0.02 (Gym's Ant: 0.01) and frame skip 5, so one env step is 0.1 s;
//   - geom solref (0.02, 1) and solimp (0.8, 0.8, 0.01) on every geom, the
//     floor and walls included (Gym's Ant leaves MuJoCo's defaults);
//   - motors with control range ±1 and gear 30. D4RL's XML has gear 1 and
//     ctrlrange ±30 and its NormalizedBoxEnv maps actions in [−1, 1] onto
//     that range, so the joint torque is 30·a in both (Gym's Ant: 150·a);
//   - one box per wall cell of m (Maze.Walls).
func AntMazeRobot(m *Maze) Robot {
	r := Ant()
	r.Name = "antmaze-" + m.Name
	r.Timestep = 0.02
	var setSolver func(b *Body)
	setSolver = func(b *Body) {
		for i := range b.Geoms {
			b.Geoms[i].SolRef, b.Geoms[i].SolImp = []float64{0.02, 1}, []float64{0.8, 0.8, 0.01}
		}
		for i := range b.Children {
			setSolver(&b.Children[i])
		}
	}
	setSolver(&r.Torso)
	r.Floor.SolRef, r.Floor.SolImp = []float64{0.02, 1}, []float64{0.8, 0.8, 0.01}
	for i := range r.Actuators {
		r.Actuators[i].Gear = 30
	}
	r.Obstacles = m.Walls()
	return r
}

// RobotByName returns the parameter table registered under an environment
// name: "hopper", "walker2d", "halfcheetah" or "ant".
func RobotByName(name string) (Robot, error) {
	switch name {
	case "hopper":
		return Hopper(), nil
	case "walker2d":
		return Walker2d(), nil
	case "halfcheetah":
		return HalfCheetah(), nil
	case "ant":
		return Ant(), nil
	}
	if m, ok := Mazes[name]; ok {
		return AntMazeRobot(m), nil
	}
	return Robot{}, fmt.Errorf("mujoco: unknown robot %q (known: %v)", name, Names())
}
