//go:build cgo && !nomujoco

package mujoco

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/env"
	mj "github.com/koopq/koopq/internal/mujoco"
)

func newEnv(t testing.TB, name string, opt Options) *Env {
	t.Helper()
	e, err := New(name, opt)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func compile(t *testing.T, r Robot, opt ModelOptions) *mj.Model {
	t.Helper()
	m, err := mj.LoadXML(r.MJCF(opt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func randAction(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		a[i] = 2*rng.Float64() - 1
	}
	return a
}

// Compiled masses match mujoco-py's model.body_mass (MuJoCo 2.0, 8
// decimals; Walker2d's foot, 2.94053072 = 1000·π·0.06²·(0.2+0.06), is the
// legacy formula's value) with the default legacy inertia, and the MuJoCo 2.2.2 values
// of the reference table with ExactCapsuleInertia.
func TestMasses(t *testing.T) {
	legacy := map[string][]float64{
		"hopper":      {0, 3.53429174, 3.92699082, 2.71433605, 5.0893801},
		"walker2d":    {0, 3.53429174, 3.92699082, 2.71433605, 2.94053072, 3.92699082, 2.71433605, 2.94053072},
		"halfcheetah": {0, 6.36031332, 1.53524804, 1.58093995, 1.0691906, 1.42558747, 1.17885117, 0.84986945},
		"ant": {0, 0.32724923, 0.03647693, 0.03647693, 0.06491138, 0.03647693, 0.03647693, 0.06491138,
			0.03647693, 0.03647693, 0.06491138, 0.03647693, 0.03647693, 0.06491138},
	}
	exact := map[string][]float64{
		"hopper":      {0, 3.6652, 4.0579, 2.7814, 5.3156},
		"walker2d":    {0, 3.6652, 4.0579, 2.7814, 3.1667, 4.0579, 2.7814, 3.1667},
		"halfcheetah": {0, 6.2502, 1.5435, 1.5874, 1.0954, 1.4381, 1.2008, 0.8845},
		"ant": {0, 0.32725, 0.039158, 0.039158, 0.067592, 0.039158, 0.039158, 0.067592,
			0.039158, 0.039158, 0.067592, 0.039158, 0.039158, 0.067592},
	}
	totals := map[string][2]float64{"hopper": {15.265, 15.820}, "walker2d": {22.698, 23.677},
		"halfcheetah": {14, 14}, "ant": {0.87871, 0.91088}}
	for _, name := range Names() {
		r, _ := RobotByName(name)
		for k, ex := range []bool{false, true} {
			want, tol := legacy[name], 5e-9
			if ex {
				want, tol = exact[name], 5e-5
			}
			got := compile(t, r, ModelOptions{ExactCapsuleInertia: ex}).BodyMass()
			if len(got) != len(want) {
				t.Fatalf("%s: %d bodies, want %d", name, len(got), len(want))
			}
			var total float64
			for i := range got {
				total += got[i]
				if math.Abs(got[i]-want[i]) > tol {
					t.Errorf("%s exact=%v body %d mass %.10f, want %.10f", name, ex, i, got[i], want[i])
				}
			}
			if math.Abs(total-totals[name][k]) > 1e-3 {
				t.Errorf("%s exact=%v total mass %.5f, want %.5f", name, ex, total, totals[name][k])
			}
		}
	}
}

// Dimensions, frame skips, timesteps, integrators, joint ranges, gears,
// control ranges and the per-joint parameters of the reference tables.
func TestModelTables(t *testing.T) {
	deg := math.Pi / 180
	type spec struct {
		nq, nv, nu, nbody int
		timestep          float64
		skip, integrator  int // integrator: 0 Euler, 1 RK4
		ranges            [][2]float64
		gears             []float64
		armature, damping float64 // of the first actuated joint's dof
		stiffness         []float64
	}
	hopperR := [][2]float64{{-150 * deg, 0}, {-150 * deg, 0}, {-45 * deg, 45 * deg}}
	specs := map[string]spec{
		"hopper": {6, 6, 3, 5, 0.002, 4, 1, hopperR, []float64{200, 200, 200}, 1, 1, nil},
		"walker2d": {9, 9, 6, 8, 0.002, 4, 1, append(append([][2]float64{}, hopperR...), hopperR...),
			[]float64{100, 100, 100, 100, 100, 100}, 0.01, 0.1, nil},
		"halfcheetah": {9, 9, 6, 8, 0.01, 5, 0,
			[][2]float64{{-0.52, 1.05}, {-0.785, 0.785}, {-0.4, 0.785}, {-1, 0.7}, {-1.2, 0.87}, {-0.5, 0.5}},
			[]float64{120, 90, 60, 120, 60, 30}, 0.1, 6, []float64{240, 180, 120, 180, 120, 60}},
		"ant": {15, 14, 8, 14, 0.01, 5, 1,
			[][2]float64{{-30 * deg, 30 * deg}, {30 * deg, 70 * deg}, {-30 * deg, 30 * deg}, {-70 * deg, -30 * deg},
				{-30 * deg, 30 * deg}, {-70 * deg, -30 * deg}, {-30 * deg, 30 * deg}, {30 * deg, 70 * deg}},
			[]float64{150, 150, 150, 150, 150, 150, 150, 150}, 1, 1, nil},
	}
	for _, name := range Names() {
		s := specs[name]
		e := newEnv(t, name, Options{})
		m := e.model
		if m.NQ() != s.nq || m.NV() != s.nv || m.NU() != s.nu || m.NBody() != s.nbody {
			t.Errorf("%s: nq %d nv %d nu %d nbody %d", name, m.NQ(), m.NV(), m.NU(), m.NBody())
		}
		if m.Timestep() != s.timestep || e.robot.FrameSkip != s.skip || m.Integrator() != s.integrator {
			t.Errorf("%s: timestep %v skip %d integrator %d", name, m.Timestep(), e.robot.FrameSkip, m.Integrator())
		}
		if want := s.timestep * float64(s.skip); math.Abs(e.Dt()-want) > 1e-15 {
			t.Errorf("%s: dt %v, want %v", name, e.Dt(), want)
		}
		// Actuated joints are all joints after the root (3 planar, or 1 free).
		root := 3
		if name == "ant" {
			root = 1
		}
		rng, lim := m.JntRange(), m.JntLimited()
		for i := range root {
			if lim[i] {
				t.Errorf("%s: root joint %d is limited", name, i)
			}
		}
		for i, r := range s.ranges {
			j := root + i
			if !lim[j] || math.Abs(rng[2*j]-r[0]) > 1e-12 || math.Abs(rng[2*j+1]-r[1]) > 1e-12 {
				t.Errorf("%s: joint %d range [%v %v] limited %v, want %v", name, j, rng[2*j], rng[2*j+1], lim[j], r)
			}
		}
		gear, cr := m.ActuatorGear(), m.ActuatorCtrlRange()
		for i, g := range s.gears {
			if gear[i] != g || cr[2*i] != -1 || cr[2*i+1] != 1 {
				t.Errorf("%s: actuator %d gear %v ctrlrange %v", name, i, gear[i], cr[2*i:2*i+2])
			}
		}
		as := e.ActionSpace()
		if as.Dim() != s.nu || as.Low[0] != -1 || as.High[s.nu-1] != 1 {
			t.Errorf("%s: action space %+v", name, as)
		}
		dof := m.NV() - m.NU() // first actuated dof
		if arm, damp := m.DofArmature(), m.DofDamping(); arm[dof] != s.armature || damp[dof] != s.damping || arm[0] != 0 || damp[0] != 0 {
			t.Errorf("%s: armature %v damping %v", name, arm, damp)
		}
		if s.stiffness != nil {
			k := m.JntStiffness()
			for i, want := range s.stiffness {
				if k[root+i] != want {
					t.Errorf("%s: stiffness %v", name, k)
				}
			}
		}
	}
	// Ant: actuators drive hip_4, ankle_4, hip_1, ... while qpos is ordered hip_1, ankle_1, ...
	ant := newEnv(t, "ant", Options{})
	wantJ := []int{7, 8, 1, 2, 3, 4, 5, 6}
	for i, j := range ant.model.ActuatorJoint() {
		if j != wantJ[i] {
			t.Errorf("ant actuator joints %v, want %v", ant.model.ActuatorJoint(), wantJ)
			break
		}
	}
	// Walker2d: the left foot's friction is 1.9, the right's 0.9.
	w := newEnv(t, "walker2d", Options{})
	fr := w.model.GeomFriction()
	if r, l := fr[3*w.model.ID(mj.ObjGeom, "foot_geom")], fr[3*w.model.ID(mj.ObjGeom, "foot_left_geom")]; r != 0.9 || l != 1.9 {
		t.Errorf("walker foot friction right %v left %v", r, l)
	}
	// qpos0 (Gym's init_qpos).
	for name, want := range map[string][]float64{
		"hopper": {0, 1.25, 0, 0, 0, 0}, "halfcheetah": make([]float64, 9),
		"ant": {0, 0, 0.75, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		got := newEnv(t, name, Options{}).qpos0
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s qpos0 %v, want %v", name, got, want)
		}
	}
}

func TestRegistryAndSpaces(t *testing.T) {
	want := map[string][2]int{"hopper": {11, 3}, "walker2d": {17, 6}, "halfcheetah": {17, 6}, "ant": {111, 8}}
	for name, d := range want {
		e, err := env.Make(name)
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() != name || e.ObservationSpace().Dim() != d[0] || e.ActionSpace().Dim() != d[1] || e.MaxEpisodeSteps() != 1000 {
			t.Errorf("%s: name %q obs %d act %d limit %d", name, e.Name(), e.ObservationSpace().Dim(), e.ActionSpace().Dim(), e.MaxEpisodeSteps())
		}
		if _, _, _, _, err := e.Step(make([]float64, d[1])); err == nil {
			t.Errorf("%s: Step before Reset succeeded", name)
		}
		obs := e.Reset(rand.New(rand.NewPCG(1, 1)))
		if len(obs) != d[0] {
			t.Errorf("%s: Reset obs len %d", name, len(obs))
		}
		if !math.IsInf(e.ObservationSpace().Low[0], -1) {
			t.Errorf("%s: observation space bounded", name)
		}
	}
}

// Reset noise: Hopper/Walker qpos and qvel within ±0.005 of init, HalfCheetah
// and Ant qpos within ±0.1; the same seed gives the same first observation.
func TestResetNoise(t *testing.T) {
	for name, b := range map[string][2]float64{"hopper": {5e-3, 5e-3}, "walker2d": {5e-3, 5e-3}, "halfcheetah": {0.1, 0}, "ant": {0.1, 0}} {
		e := newEnv(t, name, Options{})
		var maxq, maxv float64
		for s := range uint64(20) {
			o1 := e.Reset(rand.New(rand.NewPCG(s, 7)))
			for i, q := range e.qpos {
				if name == "ant" && i >= 3 && i < 7 {
					continue // MuJoCo renormalises the noisy quaternion
				}
				maxq = math.Max(maxq, math.Abs(q-e.qpos0[i]))
			}
			for _, v := range e.qvel {
				maxv = math.Max(maxv, math.Abs(v))
			}
			o2 := e.Reset(rand.New(rand.NewPCG(s, 7)))
			if fmt.Sprint(o1) != fmt.Sprint(o2) {
				t.Errorf("%s: same seed, different first observation", name)
			}
		}
		if maxq > b[0] || maxq < b[0]/2 {
			t.Errorf("%s: max |qpos - qpos0| = %v, want in [%v, %v]", name, maxq, b[0]/2, b[0])
		}
		if b[1] > 0 && (maxv > b[1] || maxv < b[1]/2) {
			t.Errorf("%s: max |qvel| = %v, want in [%v, %v]", name, maxv, b[1]/2, b[1])
		}
		if b[1] == 0 && (maxv < 0.15 || maxv > 0.6) { // 0.1·N(0,1) over ≥ 180 draws
			t.Errorf("%s: max |qvel| = %v, not like 0.1·N(0,1)", name, maxv)
		}
	}
}

// Step's reward equals the hand formula evaluated on the simulator's own x
// positions; actions are clipped to [-1, 1] (and the cost uses the clipped
// action); observations are qpos without x (and y) plus qvel, clipped at ±10
// for Hopper and Walker2d only.
func TestStepSemantics(t *testing.T) {
	ctrl := map[string]float64{"hopper": 1e-3, "walker2d": 1e-3, "halfcheetah": 0.1, "ant": 0.5}
	alive := map[string]float64{"hopper": 1, "walker2d": 1, "halfcheetah": 0, "ant": 1}
	for _, name := range Names() {
		e := newEnv(t, name, Options{})
		rng := rand.New(rand.NewPCG(3, 4))
		e.Reset(rng)
		nu := e.ActionSpace().Dim()
		for range 5 {
			if _, _, _, _, err := e.Step(randAction(rng, nu)); err != nil {
				t.Fatal(err)
			}
		}
		s := e.State()
		a := randAction(rng, nu)
		a[0], a[1] = 3, -7 // out of range
		x0 := e.X()
		obs, r, _, _, err := e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		x1 := e.QPos()[0]
		if name == "ant" {
			x1 = e.xpos[3*e.torso]
		}
		var a2 float64
		for i, v := range a {
			v = math.Max(-1, math.Min(1, v))
			a2 += v * v
			a[i] = v
		}
		want := (x1-x0)/e.Dt() + alive[name] - ctrl[name]*a2
		if math.Abs(r-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: reward %.15g, want %.15g", name, r, want)
		}
		// The same step with the clipped action is identical.
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		obs2, r2, _, _, _ := e.Step(a)
		if fmt.Sprint(obs, r) != fmt.Sprint(obs2, r2) {
			t.Errorf("%s: clipped and unclipped actions differ", name)
		}
		// Observation layout.
		skip := 1
		if name == "ant" {
			skip = 2
		}
		q, v := e.QPos(), e.QVel()
		for i := range q[skip:] {
			if obs2[i] != q[skip+i] {
				t.Errorf("%s: obs[%d] = %v, want qpos[%d] = %v", name, i, obs2[i], skip+i, q[skip+i])
			}
		}
		for i := range v {
			if obs2[len(q)-skip+i] != v[i] && math.Abs(v[i]) <= 10 {
				t.Errorf("%s: obs qvel[%d] mismatch", name, i)
			}
		}
	}
	// Velocity clipping: Hopper clips qvel at ±10 in observations, HalfCheetah does not.
	for name, clipped := range map[string]bool{"hopper": true, "halfcheetah": false} {
		e := newEnv(t, name, Options{})
		e.Reset(rand.New(rand.NewPCG(1, 2)))
		s := e.State()
		nq := len(e.qpos)
		s[nq] = 25 // x velocity (not range-checked by Hopper's health test)
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		obs, _, _, _, err := e.Step(make([]float64, e.ActionSpace().Dim()))
		if err != nil {
			t.Fatal(err)
		}
		got := obs[nq-1]
		if clipped && got != 10 || !clipped && (got <= 10 || got != e.qvel[0]) {
			t.Errorf("%s: observed x velocity %v (qvel %v), clipped %v", name, got, e.qvel[0], clipped)
		}
	}
}

func TestTermination(t *testing.T) {
	cases := []struct {
		name    string
		set     func(q []float64)
		want    bool
		healthy float64
	}{
		{"hopper", func(q []float64) { q[1] = 0.6 }, true, 1},       // too low (still pays +1)
		{"hopper", func(q []float64) { q[2] = 0.3 }, true, 1},       // tilted
		{"hopper", func(q []float64) {}, false, 1},                  // upright
		{"walker2d", func(q []float64) { q[1] = 2.5 }, true, 1},     // too high
		{"walker2d", func(q []float64) { q[2] = -1.2 }, true, 1},    // tilted
		{"walker2d", func(q []float64) {}, false, 1},                //
		{"halfcheetah", func(q []float64) { q[2] = 3.1 }, false, 0}, // upside down: never terminates
		{"ant", func(q []float64) { q[2] = 1.5 }, true, 1},          // torso above 1.0
		{"ant", func(q []float64) { q[2] = 0.5 }, false, 1},         //
	}
	for _, c := range cases {
		e := newEnv(t, c.name, Options{})
		e.Reset(rand.New(rand.NewPCG(5, 5)))
		s := e.State()
		c.set(s)
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		_, _, term, trunc, err := e.Step(make([]float64, e.ActionSpace().Dim()))
		if err != nil {
			t.Fatal(err)
		}
		if term != c.want || trunc {
			t.Errorf("%s %v: terminated %v truncated %v, want %v false", c.name, s[:3], term, trunc, c.want)
		}
	}
	// Time limit: the 1000th step is truncated, the 999th is not.
	e := newEnv(t, "halfcheetah", Options{})
	e.Reset(rand.New(rand.NewPCG(5, 5)))
	s := e.State()
	for steps, want := range map[float64]bool{998: false, 999: true} {
		s[len(s)-1] = steps
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		if _, _, _, trunc, _ := e.Step(make([]float64, 6)); trunc != want || e.ElapsedSteps() != int(steps)+1 {
			t.Errorf("after %v steps: truncated %v, want %v", steps, trunc, want)
		}
	}
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// State/SetState restore bitwise: replaying the same actions from a restored
// state (in the same env after it moved on, and in a fresh env) gives
// bit-identical observations, rewards, flags and states.
func TestStateReplayBitwise(t *testing.T) {
	for _, name := range append(Names(), "antmaze-umaze-v2", AntGoalName) {
		e := newEnv(t, name, Options{})
		rng := rand.New(rand.NewPCG(11, 12))
		e.Reset(rng)
		nu := e.ActionSpace().Dim()
		for range 20 {
			if _, _, term, _, err := e.Step(randAction(rng, nu)); err != nil || term {
				t.Fatalf("%s: warm-up: err %v term %v", name, err, term)
			}
		}
		snap := e.State()
		type rec struct {
			obs   []float64
			r     float64
			term  bool
			state []float64
		}
		var acts [][]float64
		var ref []rec
		for range 60 {
			a := randAction(rng, nu)
			obs, r, term, _, err := e.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			acts = append(acts, a)
			ref = append(ref, rec{obs, r, term, e.State()})
		}
		fresh := newEnv(t, name, Options{})
		for k, target := range []*Env{e, fresh} {
			if err := target.SetState(snap); err != nil {
				t.Fatal(err)
			}
			if !sameBits(target.State(), snap) {
				t.Fatalf("%s: State after SetState differs", name)
			}
			for i, a := range acts {
				obs, r, term, _, err := target.Step(a)
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(obs, ref[i].obs) || math.Float64bits(r) != math.Float64bits(ref[i].r) ||
					term != ref[i].term || !sameBits(target.State(), ref[i].state) {
					t.Errorf("%s (env %d): replay differs at step %d", name, k, i)
					break
				}
			}
		}
	}
}

// Shifting the root x by δ and stepping gives the same next observation and
// reward and a next x shifted by δ, for all four robots (to round-off).
func TestXTranslationInvariance(t *testing.T) {
	const delta = 3.7
	for _, name := range Names() {
		e := newEnv(t, name, Options{})
		f := newEnv(t, name, Options{})
		rng := rand.New(rand.NewPCG(21, 22))
		e.Reset(rng)
		nu := e.ActionSpace().Dim()
		var worstObs, worstX, worstR float64
		for trial := range 8 {
			for range 3 {
				if _, _, _, _, err := e.Step(randAction(rng, nu)); err != nil {
					t.Fatal(err)
				}
			}
			s := e.State()
			s2 := append([]float64(nil), s...)
			s2[0] += delta
			s2[len(s2)-2] += delta // progress coordinate x
			if err := f.SetState(s2); err != nil {
				t.Fatal(err)
			}
			a := randAction(rng, nu)
			o1, r1, t1, _, err1 := e.Step(a)
			o2, r2, t2, _, err2 := f.Step(a)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if t1 != t2 {
				t.Errorf("%s trial %d: terminated %v vs %v", name, trial, t1, t2)
			}
			for i := range o1 {
				worstObs = math.Max(worstObs, math.Abs(o1[i]-o2[i]))
			}
			worstX = math.Max(worstX, math.Abs(f.X()-e.X()-delta))
			worstX = math.Max(worstX, math.Abs(f.QPos()[0]-e.QPos()[0]-delta))
			worstR = math.Max(worstR, math.Abs(r1-r2))
			if t1 {
				e.Reset(rng)
			}
		}
		t.Logf("%s: max |Δobs| %.2g, max |Δx - δ| %.2g, max |Δr| %.2g", name, worstObs, worstX, worstR)
		if worstObs > 1e-11 || worstX > 1e-13 || worstR > 1e-10 {
			t.Errorf("%s: not x-translation invariant: |Δobs| %g |Δx-δ| %g |Δr| %g", name, worstObs, worstX, worstR)
		}
	}
}

// An observation plus x reconstructs a state whose next step matches the
// original run up to the constraint solver's warm start (and, for Hopper and
// Walker2d, the clipping of |qvel| > 10). The Ant's reward differs slightly:
// Gym measures its progress by the torso xpos of the last RK4 stage, which an
// observation does not carry.
func TestSetStateFromObservation(t *testing.T) {
	for _, name := range Names() {
		e := newEnv(t, name, Options{})
		f := newEnv(t, name, Options{})
		rng := rand.New(rand.NewPCG(31, 32))
		obs := e.Reset(rng)
		nu := e.ActionSpace().Dim()
		for range 10 {
			var err error
			if obs, _, _, _, err = e.Step(randAction(rng, nu)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.SetStateFromObservation(obs, e.QPos()[0]); err != nil {
			t.Fatal(err)
		}
		wantV := e.QVel()
		for i, v := range wantV {
			if c := e.task.clipVel; c > 0 {
				wantV[i] = math.Max(-c, math.Min(c, v))
			}
		}
		if name != "ant" && !sameBits(f.QPos(), e.QPos()) || !sameBits(f.QVel(), wantV) {
			t.Errorf("%s: qpos/qvel not restored", name)
		}
		clippedAny := !sameBits(wantV, e.QVel())
		a := randAction(rng, nu)
		o1, r1, _, _, _ := e.Step(a)
		o2, r2, _, _, err := f.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		var d float64
		for i := range o1 {
			d = math.Max(d, math.Abs(o1[i]-o2[i]))
		}
		rtol := 1e-4
		if name == "ant" {
			rtol = 1e-2
		}
		if !clippedAny && (d > 1e-6 || math.Abs(r1-r2) > rtol) {
			t.Errorf("%s: next obs differs by %g, reward by %g", name, d, r1-r2)
		}
		if err := f.SetStateFromObservation(obs[1:], 0); err == nil {
			t.Errorf("%s: short observation accepted", name)
		}
	}
}

// A NaN or huge state makes Step return an error (MuJoCo would silently
// reset to qpos0 and carry on); the env then refuses to step until reset.
func TestBadStateReturnsError(t *testing.T) {
	for _, name := range Names() {
		e := newEnv(t, name, Options{})
		e.Reset(rand.New(rand.NewPCG(1, 1)))
		nu := e.ActionSpace().Dim()
		s := e.State()
		s[len(e.qpos)+2] = 2e10 // angular velocity beyond MuJoCo's 1e10 limit
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		obs, _, _, _, err := e.Step(make([]float64, nu))
		if !errors.Is(err, ErrBadState) || obs != nil {
			t.Fatalf("%s: Step on a huge state: obs %v err %v, want ErrBadState", name, obs, err)
		}
		if _, _, _, _, err := e.Step(make([]float64, nu)); err == nil {
			t.Errorf("%s: Step after a failure succeeded without reset", name)
		}
		e.Reset(rand.New(rand.NewPCG(1, 1)))
		if _, _, _, _, err := e.Step(make([]float64, nu)); err != nil {
			t.Errorf("%s: Step after Reset: %v", name, err)
		}
		s[len(e.qpos)+2] = math.NaN()
		if err := e.SetState(s); err == nil {
			t.Errorf("%s: SetState with NaN accepted", name)
		}
		s[len(e.qpos)+2] = 0
		for _, steps := range []float64{-1, 0.5} {
			s[len(s)-1] = steps
			if err := e.SetState(s); err == nil || !strings.Contains(err.Error(), "elapsed step count") {
				t.Errorf("%s: step count %v: error %v, want a refusal", name, steps, err)
			}
		}
		if _, _, _, _, err := e.Step(append(make([]float64, nu-1), math.NaN())); err == nil {
			t.Errorf("%s: NaN action accepted", name)
		}
		if _, _, _, _, err := e.Step(make([]float64, nu+1)); err == nil {
			t.Errorf("%s: wrong-length action accepted", name)
		}
	}
}

// As in D4RL, the Ant's 84 contact-force observations are zero by default;
// with ContactForces (Gymnasium v4 behaviour) they are not.
func TestAntContactForces(t *testing.T) {
	for _, on := range []bool{false, true} {
		e := newEnv(t, "ant", Options{ContactForces: on})
		rng := rand.New(rand.NewPCG(2, 3))
		e.Reset(rng)
		var nonzero int
		for range 30 {
			obs, _, _, _, err := e.Step(randAction(rng, 8))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range obs[27:] {
				if v != 0 {
					nonzero++
				}
			}
		}
		if on != (nonzero > 0) {
			t.Errorf("ContactForces=%v: %d non-zero contact observations", on, nonzero)
		}
	}
}

func BenchmarkEnvStep(b *testing.B) {
	for _, name := range []string{"hopper", "walker2d", "halfcheetah", "ant"} {
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, name, Options{})
			rng := rand.New(rand.NewPCG(1, 2))
			e.Reset(rng)
			nu := e.ActionSpace().Dim()
			acts := make([][]float64, 1024)
			for i := range acts {
				acts[i] = randAction(rng, nu)
			}
			i := 0
			for b.Loop() {
				_, _, term, trunc, err := e.Step(acts[i%len(acts)])
				if err != nil {
					b.Fatal(err)
				}
				if term || trunc {
					e.Reset(rng)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
