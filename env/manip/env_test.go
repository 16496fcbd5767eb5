//go:build cgo && !nomujoco

package manip

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/env"
	mj "github.com/koopq/koopq/internal/mujoco"
)

func newPush(t *testing.T) *Env {
	t.Helper()
	e, err := New(PushName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestSceneGeometry pins the compiled model to MetaWorld v2's published
// numbers: simulation settings, table, floor, puck, finger ranges and the
// Sawyer joint ranges and first-joint height.
func TestSceneGeometry(t *testing.T) {
	m, err := mj.LoadXML(sceneMJCF("t", Push().HandInit, [3]float64{0, 0.6, 0.02}, [3]float64{0.1, 0.8, 0.02}))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := mj.NewData(m)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Forward(); err != nil {
		t.Fatal(err)
	}
	if m.Timestep() != 0.0025 || FrameSkip != 5 || MaxEpisodeSteps != 500 || ActionScale != 0.01 {
		t.Errorf("timestep %v, frame skip %d, max steps %d, action scale %v; want 0.0025, 5, 500, 0.01",
			m.Timestep(), FrameSkip, MaxEpisodeSteps, ActionScale)
	}
	gx, size := d.GeomXPos(), m.GeomSize()
	geom := func(name string) (pos, sz [3]float64) {
		g := m.ID(mj.ObjGeom, name)
		if g < 0 {
			t.Fatalf("no geom %q", name)
		}
		copy(pos[:], gx[3*g:3*g+3])
		copy(sz[:], size[3*g:3*g+3])
		return
	}
	// Table top at z = 0, centred at (0, 0.6), 1.4 m × 0.8 m; floor at -0.913.
	p, s := geom("tabletop")
	if top := p[2] + s[2]; !near(top, 0, 1e-12) || p[0] != 0 || p[1] != 0.6 || s[0] != 0.7 || s[1] != 0.4 {
		t.Errorf("table top z %v centre %v half size %v; want 0, (0, 0.6), (0.7, 0.4)", top, p, s)
	}
	if p, _ := geom("floor"); p[2] != -0.913 {
		t.Errorf("floor z = %v, want -0.913 (table 0.913 m high)", p[2])
	}
	// Puck: cylinder r = 0.02, half height 0.02, 0.75 kg.
	if _, s := geom("objGeom"); s[0] != 0.02 || s[1] != 0.02 {
		t.Errorf("puck size %v, want radius 0.02 half-height 0.02", s[:2])
	}
	if mass := m.BodyMass()[m.ID(mj.ObjBody, "obj")]; !near(mass, 0.75, 1e-12) {
		t.Errorf("puck mass %v, want 0.75", mass)
	}
	// Finger pads: boxes 0.09 × 0.006 × 0.03.
	if _, s := geom("rightpad_geom"); s != [3]float64{0.045, 0.003, 0.015} {
		t.Errorf("pad half sizes %v", s)
	}
	// Joint ranges: Sawyer's seven hinges, then r_close [0, 0.04] and
	// l_close [-0.03, 0].
	want := [][2]float64{{-3.0503, 3.0503}, {-3.8, -0.5}, {-3.0426, 3.0426}, {-3.0439, 3.0439},
		{-2.9761, 2.9761}, {-2.9761, 2.9761}, {-4.7124, 4.7124}, {0, 0.04}, {-0.03, 0}}
	jr, lim := m.JntRange(), m.JntLimited()
	if m.NJnt() != len(want)+1 || m.NQ() != 16 || m.NV() != 15 || m.NU() != 2 || m.NMocap() != 1 {
		t.Fatalf("njnt %d nq %d nv %d nu %d nmocap %d; want 10, 16, 15, 2, 1", m.NJnt(), m.NQ(), m.NV(), m.NU(), m.NMocap())
	}
	for j, w := range want {
		if !lim[j] || jr[2*j] != w[0] || jr[2*j+1] != w[1] {
			t.Errorf("joint %d range %v (limited %v), want %v", j, jr[2*j:2*j+2], lim[j], w)
		}
	}
	for j, dmp := range m.DofDamping()[:7] {
		if dmp != 10 {
			t.Errorf("arm dof %d damping %v, want 10", j, dmp)
		}
	}
	// The first hinge sits 0.08 m above the base at the origin, on the z axis.
	if a := d.XAnchor()[:3]; a[0] != 0 || a[1] != 0 || !near(a[2], 0.08, 1e-12) {
		t.Errorf("right_j0 anchor %v, want (0, 0, 0.08)", a)
	}
	// Link masses as published (kg), 17.0863 kg in all.
	wantMass := map[string]float64{"right_l0": 5.3213, "right_l1": 4.505, "right_l2": 1.745, "right_l3": 2.5097,
		"right_l4": 1.1136, "right_l5": 1.5625, "right_l6": 0.3292}
	bm := m.BodyMass()
	for name, w := range wantMass {
		if b := m.ID(mj.ObjBody, name); b < 0 || bm[b] != w {
			t.Errorf("%s mass %v, want %v", name, bm[max(b, 0)], w)
		}
	}
}

// TestResetLayout checks the observation slots right after Reset and the
// ranges the puck and goal are drawn from.
func TestResetLayout(t *testing.T) {
	e := newPush(t)
	tk := Push()
	rng := rand.New(rand.NewPCG(7, 0))
	for ep := range 100 {
		obs := e.Reset(rng)
		if len(obs) != ObsDim {
			t.Fatalf("obs length %d", len(obs))
		}
		hand, puck, goal, oi := e.HandPos(), e.PuckPos(), e.Goal(), e.ObjInit()
		for i := range 3 {
			if obs[ObsHand+i] != hand[i] || obs[ObsObj+i] != puck[i] || obs[ObsGoal+i] != goal[i] {
				t.Fatalf("episode %d: obs %v; hand %v puck %v goal %v", ep, obs, hand, puck, goal)
			}
		}
		if dist3(hand, tk.HandInit) > 0.005 {
			t.Errorf("episode %d: hand %v not at the initial position %v", ep, hand, tk.HandInit)
		}
		if obs[ObsGripper] != 1 {
			t.Errorf("episode %d: gripper opening %v, want 1 (open)", ep, obs[ObsGripper])
		}
		// Upright puck: quaternion (x, y, z, w) = (0, 0, 0, 1); second slot zero.
		q := obs[ObsObj+3 : ObsObj+7]
		if !near(q[0], 0, 1e-3) || !near(q[1], 0, 1e-3) || !near(q[2], 0, 1e-6) || !near(q[3], 1, 1e-6) {
			t.Errorf("episode %d: puck quaternion %v, want (0, 0, 0, 1)", ep, q)
		}
		for i := ObsObj + 7; i < ObsFrame; i++ {
			if obs[i] != 0 {
				t.Errorf("episode %d: obs[%d] = %v, want 0 (empty second object slot)", ep, i, obs[i])
			}
		}
		for i := range ObsFrame {
			if obs[ObsPrev+i] != obs[i] {
				t.Fatalf("episode %d: previous frame %v differs from current %v at reset", ep, obs[ObsPrev:ObsGoal], obs[:ObsFrame])
			}
		}
		// Ranges: push-v2's obj x ∈ [-0.1, 0.1], y ∈ [0.6, 0.7]; goal
		// x ∈ [-0.1, 0.1], y ∈ [0.8, 0.9]; at least 0.15 apart in x-y; the
		// puck rests on the table and the goal is at its height.
		if oi[0] < -0.1 || oi[0] > 0.1 || oi[1] < 0.6 || oi[1] > 0.7 ||
			goal[0] < -0.1 || goal[0] > 0.1 || goal[1] < 0.8 || goal[1] > 0.9 ||
			math.Hypot(oi[0]-goal[0], oi[1]-goal[1]) < 0.15 {
			t.Errorf("episode %d: puck %v goal %v out of range", ep, oi, goal)
		}
		if oi[0] != puck[0] || oi[1] != puck[1] || !near(puck[2], PuckHalfHeight, 1e-3) || goal[2] != puck[2] {
			t.Errorf("episode %d: puck %v, initial %v, goal %v", ep, puck, oi, goal)
		}
	}
}

// TestStepLayoutAndActionScaling checks that each step's previous-frame
// slot is the last step's current frame, that the mocap moves by
// action·0.01 m (clipped to [-1, 1] and to the hand bounds), that the hand
// follows it, and that the gripper command opens and closes the fingers.
func TestStepLayoutAndActionScaling(t *testing.T) {
	e := newPush(t)
	tk := Push()
	obs := e.Reset(rand.New(rand.NewPCG(1, 1)))
	m0 := e.MocapPos()
	if m0 != tk.HandInit {
		t.Fatalf("mocap after reset %v, want %v", m0, tk.HandInit)
	}
	step := func(a ...float64) []float64 {
		t.Helper()
		o, _, term, _, err := e.Step(a)
		if err != nil || term {
			t.Fatalf("step: %v (terminated %v)", err, term)
		}
		for i := range ObsFrame {
			if o[ObsPrev+i] != obs[i] {
				t.Fatalf("obs[%d] = %v, want the previous step's obs[%d] = %v", ObsPrev+i, o[ObsPrev+i], i, obs[i])
			}
		}
		obs = o
		return o
	}
	step(1, -0.5, 0.25, -1)
	want := [3]float64{m0[0] + 0.01, m0[1] - 0.005, m0[2] + 0.0025}
	if got := e.MocapPos(); got != want {
		t.Errorf("mocap %v, want %v", got, want)
	}
	step(7, 0, -3, -1) // clipped to (1, 0, -1)
	want = [3]float64{want[0] + 0.01, want[1], want[2] - 0.01}
	if got := e.MocapPos(); !near(got[0], want[0], 1e-15) || got[1] != want[1] || !near(got[2], want[2], 1e-15) {
		t.Errorf("mocap %v, want %v", got, want)
	}
	for range 60 {
		step(0, 0, 1, -1)
	}
	if got := e.MocapPos(); got[2] != tk.HandHigh[2] {
		t.Errorf("mocap z %v, want the hand bound %v", got[2], tk.HandHigh[2])
	}
	for range 60 {
		step(0, 0, -1, -1)
	}
	if got := e.MocapPos(); got[2] != tk.HandLow[2] {
		t.Errorf("mocap z %v, want the hand bound %v", got[2], tk.HandLow[2])
	}
	for range 20 {
		step(0, 0, 0, -1)
	}
	if d := dist3(e.HandPos(), e.MocapPos()); d > 0.005 {
		t.Errorf("hand %v is %.4f m from the mocap %v", e.HandPos(), d, e.MocapPos())
	}
	if tcp, h := e.TCP(), e.HandPos(); !near(h[2]-tcp[2], TCPOffset, 2e-3) {
		t.Errorf("tool centre %v is not %.3f m below the hand %v", tcp, TCPOffset, h)
	}
	// Close on nothing: claws move 0.04 and 0.03 inward, 0.03 m apart.
	for range 60 {
		step(0, 0, 0, 1)
	}
	if g := obs[ObsGripper]; !near(g, 0.3, 0.01) {
		t.Errorf("closed gripper opening %v, want about 0.3", g)
	}
	for range 60 {
		step(0, 0, 0, -1)
	}
	if g := obs[ObsGripper]; g != 1 {
		t.Errorf("open gripper opening %v, want 1", g)
	}
}

// runEpisode runs one episode with policy and reports whether any step
// was a success and whether the last one was.
func runEpisode(t *testing.T, e *Env, rng *rand.Rand, policy func(obs []float64) []float64) (any, final bool) {
	t.Helper()
	obs := e.Reset(rng)
	for k := 1; ; k++ {
		o, _, term, trunc, err := e.Step(policy(obs))
		if err != nil {
			t.Fatal(err)
		}
		if term {
			t.Fatal("push-v2 terminated; MetaWorld v2 never terminates")
		}
		any = any || e.Success()
		if trunc {
			if k != MaxEpisodeSteps {
				t.Fatalf("truncated at step %d", k)
			}
			return any, e.Success()
		}
		obs = o
	}
}

// TestScriptedPushSucceeds: the scripted controller (ScriptedPush, scripted.go)
// must put the puck within 0.05 m of the goal, and keep it there until the
// last step, in at least 90% of 50 seeded episodes.
func TestScriptedPushSucceeds(t *testing.T) {
	e := newPush(t)
	rng := rand.New(rand.NewPCG(2024, 71))
	var anyN, finalN int
	for range 50 {
		a, f := runEpisode(t, e, rng, ScriptedPush)
		if a {
			anyN++
		}
		if f {
			finalN++
		}
	}
	t.Logf("scripted push: success at some step %d/50, at the last step %d/50", anyN, finalN)
	if anyN < 45 || finalN < 45 {
		t.Errorf("scripted push succeeded in %d/50 episodes (%d/50 at the last step); want >= 45", anyN, finalN)
	}
}

// TestRandomActionsRarelySucceed: uniform random actions must succeed (at
// any step) in at most 5 of 50 episodes.
func TestRandomActionsRarelySucceed(t *testing.T) {
	e := newPush(t)
	rng := rand.New(rand.NewPCG(99, 1))
	act := rand.New(rand.NewPCG(99, 2))
	random := func([]float64) []float64 {
		a := make([]float64, ActDim)
		for i := range a {
			a[i] = 2*act.Float64() - 1
		}
		return a
	}
	var n int
	for range 50 {
		if a, _ := runEpisode(t, e, rng, random); a {
			n++
		}
	}
	t.Logf("random actions: success at some step %d/50", n)
	if n > 5 {
		t.Errorf("random actions succeeded in %d/50 episodes; want <= 5", n)
	}
}

type rollout struct {
	obs     [][]float64
	rewards []float64
}

func roll(t *testing.T, e *Env, seed uint64, steps int) rollout {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	var r rollout
	obs := e.Reset(rng)
	r.obs = append(r.obs, obs)
	for range steps {
		a := ScriptedPush(obs)
		for i := range a { // perturb so that contacts vary
			a[i] += 0.3 * (2*rng.Float64() - 1)
		}
		o, rew, _, _, err := e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		r.obs, r.rewards, obs = append(r.obs, o), append(r.rewards, rew), o
	}
	return r
}

func sameRollout(t *testing.T, what string, a, b rollout) {
	t.Helper()
	for k := range a.obs {
		for i := range a.obs[k] {
			if math.Float64bits(a.obs[k][i]) != math.Float64bits(b.obs[k][i]) {
				t.Fatalf("%s: obs %d[%d] %v != %v", what, k, i, a.obs[k][i], b.obs[k][i])
			}
		}
	}
	for k := range a.rewards {
		if math.Float64bits(a.rewards[k]) != math.Float64bits(b.rewards[k]) {
			t.Fatalf("%s: reward %d %v != %v", what, k, a.rewards[k], b.rewards[k])
		}
	}
}

// TestDeterministic: the same seed gives a bitwise identical episode, in a
// fresh environment and in one reset after another episode.
func TestDeterministic(t *testing.T) {
	e1, e2 := newPush(t), newPush(t)
	a := roll(t, e1, 5, 150)
	sameRollout(t, "two environments", a, roll(t, e2, 5, 150))
	roll(t, e1, 6, 80) // another episode in between
	sameRollout(t, "reset after another episode", a, roll(t, e1, 5, 150))
	if c := roll(t, e2, 8, 1); c.obs[0][ObsObj] == a.obs[0][ObsObj] {
		t.Error("different seeds gave the same puck position")
	}
}

// TestStateRoundTrip: restoring State mid-episode continues bitwise
// identically, also in another environment.
func TestStateRoundTrip(t *testing.T) {
	e1, e2 := newPush(t), newPush(t)
	obs := e1.Reset(rand.New(rand.NewPCG(3, 3)))
	for range 40 { // mid-grasp: the fingers are closing on the puck
		var err error
		if obs, _, _, _, err = e1.Step(ScriptedPush(obs)); err != nil {
			t.Fatal(err)
		}
	}
	s := e1.State()
	cont := func(e *Env) rollout {
		var r rollout
		a := rand.New(rand.NewPCG(1, 9))
		for range 60 {
			act := []float64{2*a.Float64() - 1, 2*a.Float64() - 1, 2*a.Float64() - 1, 2*a.Float64() - 1}
			o, rew, _, _, err := e.Step(act)
			if err != nil {
				t.Fatal(err)
			}
			r.obs, r.rewards = append(r.obs, o), append(r.rewards, rew)
		}
		return r
	}
	first := cont(e1)
	if err := e1.SetState(s); err != nil {
		t.Fatal(err)
	}
	sameRollout(t, "same env", first, cont(e1))
	if err := e2.SetState(s); err != nil {
		t.Fatal(err)
	}
	sameRollout(t, "other env", first, cont(e2))
	if e2.ElapsedSteps() != 100 {
		t.Errorf("elapsed steps %d, want 100", e2.ElapsedSteps())
	}
	before := e2.State()
	for _, steps := range []float64{-1, 2.5, MaxEpisodeSteps + 1} {
		bad := append([]float64(nil), s...)
		bad[len(bad)-1] = steps
		if err := e2.SetState(bad); err == nil || !strings.Contains(err.Error(), "elapsed step count") {
			t.Errorf("step count %v: error %v, want a refusal", steps, err)
		}
	}
	if after := e2.State(); !slices.Equal(after, before) {
		t.Error("a refused state changed the env")
	}
}

// TestTruncation: the 500th step truncates, the 501st fails.
func TestTruncation(t *testing.T) {
	e := newPush(t)
	e.Reset(rand.New(rand.NewPCG(4, 4)))
	for k := 1; k <= MaxEpisodeSteps; k++ {
		_, _, term, trunc, err := e.Step([]float64{0, 0, 0, 0})
		if err != nil || term || trunc != (k == MaxEpisodeSteps) {
			t.Fatalf("step %d: err %v terminated %v truncated %v", k, err, term, trunc)
		}
	}
	if _, _, _, _, err := e.Step([]float64{0, 0, 0, 0}); err == nil {
		t.Error("step 501 succeeded")
	}
	if _, _, _, _, err := e.Step([]float64{0, 0, 0}); err == nil {
		t.Error("3-entry action accepted")
	}
	e.Reset(rand.New(rand.NewPCG(4, 4)))
	if _, _, _, _, err := e.Step([]float64{0, math.NaN(), 0, 0}); err == nil {
		t.Error("NaN action accepted")
	}
}

// TestRegistered: env.Make builds the push task with MetaWorld's spaces.
func TestRegistered(t *testing.T) {
	ev, err := env.Make(PushName)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ObservationSpace().Dim() != 39 || ev.ActionSpace().Dim() != 4 || ev.MaxEpisodeSteps() != 500 {
		t.Errorf("spaces %d, %d, %d steps", ev.ObservationSpace().Dim(), ev.ActionSpace().Dim(), ev.MaxEpisodeSteps())
	}
	ev.(*Env).Close()
}
