package classic

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/env"
)

var allNames = []string{NameCartPole, NameCartPoleContinuous, NamePendulum, NameMountainCarContinuous}

func mustMake(t testing.TB, name string) env.Env {
	t.Helper()
	e, err := env.Make(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// randomAction samples uniformly from the action space, widened by 50% for
// continuous spaces so that clipping is exercised.
func randomAction(rng *rand.Rand, s env.Space) []float64 {
	if s.Discrete > 0 {
		return []float64{float64(rng.IntN(s.Discrete))}
	}
	a := make([]float64, len(s.Low))
	for i := range a {
		w := s.High[i] - s.Low[i]
		a[i] = s.Low[i] - 0.25*w + 1.5*w*rng.Float64()
	}
	return a
}

func TestRegistryAndSpaces(t *testing.T) {
	want := map[string]struct {
		obsDim, actDim, discrete, limit int
	}{
		NameCartPole:              {4, 1, 2, 500},
		NameCartPoleContinuous:    {4, 1, 0, 500},
		NamePendulum:              {3, 1, 0, 200},
		NameMountainCarContinuous: {2, 1, 0, 999},
	}
	for name, w := range want {
		e := mustMake(t, name)
		if e.Name() != name {
			t.Errorf("%s: Name() = %q", name, e.Name())
		}
		os, as := e.ObservationSpace(), e.ActionSpace()
		if os.Dim() != w.obsDim || as.Dim() != w.actDim || as.Discrete != w.discrete || e.MaxEpisodeSteps() != w.limit {
			t.Errorf("%s: obs dim %d act dim %d discrete %d limit %d, want %+v", name, os.Dim(), as.Dim(), as.Discrete, e.MaxEpisodeSteps(), w)
		}
		for i := range os.Low {
			if !(os.Low[i] < os.High[i]) {
				t.Errorf("%s: obs bound %d: [%v, %v]", name, i, os.Low[i], os.High[i])
			}
		}
	}
	// Gym's exact (float32) bounds.
	cp := NewCartPole().ObservationSpace().High
	if cp[0] != float64(float32(4.8)) || !math.IsInf(cp[1], 1) || cp[2] != float64(float32(0.41887903)) || !math.IsInf(cp[3], 1) {
		t.Errorf("cartpole obs high = %v", cp)
	}
	if h := NewPendulum().ObservationSpace().High; h[0] != 1 || h[1] != 1 || h[2] != 8 {
		t.Errorf("pendulum obs high = %v", h)
	}
	if a := NewPendulum().ActionSpace(); a.Low[0] != -2 || a.High[0] != 2 {
		t.Errorf("pendulum action space %+v", a)
	}
	mc := NewMountainCarContinuous().ObservationSpace()
	if mc.Low[0] != float64(float32(-1.2)) || mc.Low[1] != float64(float32(-0.07)) || mc.High[0] != float64(float32(0.6)) || mc.High[1] != float64(float32(0.07)) {
		t.Errorf("mountaincar obs space %+v", mc)
	}
	if a := NewMountainCarContinuous().ActionSpace(); a.Low[0] != -1 || a.High[0] != 1 {
		t.Errorf("mountaincar action space %+v", a)
	}
}

func TestThetaThresholdMatchesGym(t *testing.T) {
	pi := math.Pi
	gym := 12 * 2 * pi / 360 // float64, left to right, as Python evaluates it
	if ThetaThresholdRadians != gym {
		t.Errorf("ThetaThresholdRadians = %.17g, Gym's float64 value %.17g", ThetaThresholdRadians, gym)
	}
	if TotalMass != 0.1+1.0 || PoleMassLength != 0.05 {
		t.Error("derived constants differ from Gym's float64 values")
	}
}

// TestResetDistributions checks that every initial state lies in Gym's reset
// box, that the box is filled (extremes near its edges, mean near its centre)
// and that Reset is deterministic for a given seed.
func TestResetDistributions(t *testing.T) {
	type box struct{ lo, hi []float64 }
	boxes := map[string]box{
		NameCartPole:              {[]float64{-.05, -.05, -.05, -.05}, []float64{.05, .05, .05, .05}},
		NameCartPoleContinuous:    {[]float64{-.05, -.05, -.05, -.05}, []float64{.05, .05, .05, .05}},
		NamePendulum:              {[]float64{-math.Pi, -1}, []float64{math.Pi, 1}},
		NameMountainCarContinuous: {[]float64{-0.6, 0}, []float64{-0.4, 0}},
	}
	const n = 20000
	for name, b := range boxes {
		e := mustMake(t, name)
		rng := rand.New(rand.NewPCG(1, 2))
		d := len(b.lo)
		mn, mx, sum := make([]float64, d), make([]float64, d), make([]float64, d)
		for i := range mn {
			mn[i], mx[i] = math.Inf(1), math.Inf(-1)
		}
		for k := 0; k < n; k++ {
			obs := e.Reset(rng)
			st := e.State()
			if st[d] != 0 {
				t.Fatalf("%s: steps after reset = %v", name, st[d])
			}
			if len(obs) != e.ObservationSpace().Dim() {
				t.Fatalf("%s: obs length %d", name, len(obs))
			}
			for i := 0; i < d; i++ {
				v := st[i]
				if v < b.lo[i] || v > b.hi[i] || (b.lo[i] < b.hi[i] && v == b.hi[i]) {
					t.Fatalf("%s: reset state[%d] = %v outside [%v, %v)", name, i, v, b.lo[i], b.hi[i])
				}
				mn[i], mx[i] = math.Min(mn[i], v), math.Max(mx[i], v)
				sum[i] += v
			}
		}
		for i := 0; i < d; i++ {
			w := b.hi[i] - b.lo[i]
			if w == 0 {
				continue
			}
			mean := sum[i] / n
			// 1% of the width at the edges; mean within ~6 standard errors.
			if mn[i]-b.lo[i] > 0.01*w || b.hi[i]-mx[i] > 0.01*w || math.Abs(mean-(b.lo[i]+b.hi[i])/2) > 6*w/math.Sqrt(12*n) {
				t.Errorf("%s: state[%d] min %v max %v mean %v for U(%v, %v)", name, i, mn[i], mx[i], mean, b.lo[i], b.hi[i])
			}
		}
		// Same seed, same initial observation.
		a := e.Reset(rand.New(rand.NewPCG(7, 7)))
		b2 := mustMake(t, name).Reset(rand.New(rand.NewPCG(7, 7)))
		for i := range a {
			if a[i] != b2[i] {
				t.Errorf("%s: Reset not deterministic: %v vs %v", name, a, b2)
			}
		}
	}
}

// TestObservationsMatchState checks obs = float32(f(state)) after Reset and Step.
func TestObservationsMatchState(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range allNames {
		e := mustMake(t, name)
		obs := e.Reset(rng)
		for k := 0; k < 50; k++ {
			s := e.State()
			var want []float64
			switch name {
			case NamePendulum:
				want = []float64{f32(math.Cos(s[0])), f32(math.Sin(s[0])), f32(s[1])}
			default:
				for _, v := range s[:len(s)-1] {
					want = append(want, f32(v))
				}
			}
			for i := range want {
				if obs[i] != want[i] {
					t.Fatalf("%s: obs %v, want %v from state %v", name, obs, want, s)
				}
			}
			var term, trunc bool
			var err error
			obs, _, term, trunc, err = e.Step(randomAction(rng, e.ActionSpace()))
			if err != nil {
				t.Fatal(err)
			}
			if term || trunc {
				obs = e.Reset(rng)
			}
		}
	}
}

func TestCartPoleTermination(t *testing.T) {
	e := NewCartPole()
	cases := []struct {
		state  []float64
		action float64
		term   bool
	}{
		{[]float64{2.39, 1, 0, 0, 0}, 1, true},                   // x → 2.41 > 2.4
		{[]float64{-2.39, -1, 0, 0, 0}, 0, true},                 // x → -2.41
		{[]float64{2.4, 0, 0, 0, 0}, 1, false},                   // x stays exactly 2.4: strict inequality
		{[]float64{0, 0, 0.2, 1, 0}, 1, true},                    // θ → 0.22 > 0.2094
		{[]float64{0, 0, -0.2, -1, 0}, 0, true},                  // θ → -0.22
		{[]float64{0, 0, ThetaThresholdRadians, 0, 0}, 0, false}, // θ unchanged (Euler uses old θ̇ = 0)
		{[]float64{0, 0, 0, 0, 0}, 0, false},
	}
	for _, c := range cases {
		if err := e.SetState(c.state); err != nil {
			t.Fatal(err)
		}
		_, r, term, trunc, err := e.Step([]float64{c.action})
		if err != nil {
			t.Fatal(err)
		}
		if term != c.term || trunc || r != 1 {
			t.Errorf("from %v action %v: term=%v trunc=%v r=%v, want term=%v r=1", c.state, c.action, term, trunc, r, c.term)
		}
		// Reported termination agrees with the exported predicate on the new state.
		s := e.State()
		if CartPoleTerminated([4]float64(s[:4])) != term {
			t.Errorf("CartPoleTerminated disagrees with Step at %v", s)
		}
	}
}

func TestCartPoleDynamicsHandComputed(t *testing.T) {
	// From rest at θ = 0 with F = +10: temp = 10/1.1, θ̈ = -temp/(0.5·(4/3 − 0.1/1.1)),
	// ẍ = temp − 0.05·θ̈/1.1; Euler leaves positions unchanged (old velocities are 0).
	s := CartPoleDynamics([4]float64{}, ForceMag)
	temp := 10 / 1.1
	thAcc := -temp / (0.5 * (4.0/3.0 - 0.1/1.1))
	xAcc := temp - 0.05*thAcc/1.1
	want := [4]float64{0, 0.02 * xAcc, 0, 0.02 * thAcc}
	for i := range s {
		if math.Abs(s[i]-want[i]) > 1e-15 {
			t.Errorf("state[%d] = %v, want %v", i, s[i], want[i])
		}
	}
	// Mirror symmetry: (x, ẋ, θ, θ̇, F) → −(…) maps trajectories to trajectories.
	a := [4]float64{0.3, -0.2, 0.05, 0.4}
	p := CartPoleDynamics(a, 7)
	m := CartPoleDynamics([4]float64{-a[0], -a[1], -a[2], -a[3]}, -7)
	for i := range p {
		if p[i] != -m[i] {
			t.Errorf("mirror symmetry broken at %d: %v vs %v", i, p[i], -m[i])
		}
	}
	// Translation invariance in x (the symmetry of the paper's Sec. 3.4):
	// ẋ, θ, θ̇ do not depend on x.
	q := CartPoleDynamics([4]float64{a[0] + 1, a[1], a[2], a[3]}, 7)
	if q[1] != p[1] || q[2] != p[2] || q[3] != p[3] || math.Abs(q[0]-p[0]-1) > 1e-15 {
		t.Errorf("translation: %v vs %v", q, p)
	}
}

func TestCartPoleContinuousMatchesDiscrete(t *testing.T) {
	start := []float64{0.1, -0.3, 0.02, 0.15, 3}
	d, c := NewCartPole(), NewCartPoleContinuous()
	for _, pair := range [][2]float64{{1, 1}, {0, -1}, {1, 5}, {0, -1e9}} {
		if err := d.SetState(start); err != nil {
			t.Fatal(err)
		}
		if err := c.SetState(start); err != nil {
			t.Fatal(err)
		}
		od, rd, td, _, err1 := d.Step([]float64{pair[0]})
		oc, rc, tc, _, err2 := c.Step([]float64{pair[1]})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for i := range od {
			if od[i] != oc[i] {
				t.Fatalf("discrete %v vs continuous %v: %v vs %v", pair[0], pair[1], od, oc)
			}
		}
		if rd != rc || td != tc {
			t.Errorf("reward/termination differ")
		}
	}
	// Intermediate force: a = 0.5 → F = 5 N.
	if err := c.SetState(start); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := c.Step([]float64{0.5}); err != nil {
		t.Fatal(err)
	}
	want := CartPoleDynamics([4]float64(start[:4]), 5)
	got := c.State()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("a=0.5: state %v, want %v", got[:4], want)
		}
	}
	if got[4] != 4 {
		t.Errorf("steps = %v, want 4", got[4])
	}
}

func TestTruncation(t *testing.T) {
	// Pendulum never terminates: a full episode truncates at exactly 200.
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{NamePendulum, NameMountainCarContinuous} {
		e := mustMake(t, name)
		e.Reset(rng)
		for step := 1; ; step++ {
			_, _, term, trunc, err := e.Step([]float64{0})
			if err != nil {
				t.Fatal(err)
			}
			if term {
				t.Fatalf("%s: terminated at step %d with zero action", name, step)
			}
			if trunc != (step == e.MaxEpisodeSteps()) {
				t.Fatalf("%s: truncated=%v at step %d", name, trunc, step)
			}
			if trunc {
				break
			}
		}
		if _, _, _, _, err := e.Step([]float64{0}); err == nil {
			t.Errorf("%s: Step after truncation succeeded", name)
		}
	}

	// CartPole balanced by a linear state-feedback controller survives to the limit.
	for _, name := range []string{NameCartPole, NameCartPoleContinuous} {
		e := mustMake(t, name)
		obs := e.Reset(rng)
		for step := 1; ; step++ {
			u := 0.5*obs[0] + 1.0*obs[1] + 20*obs[2] + 3*obs[3]
			var a float64
			if name == NameCartPole {
				if u > 0 {
					a = 1
				}
			} else {
				a = math.Max(-1, math.Min(1, u))
			}
			var term, trunc bool
			var err error
			obs, _, term, trunc, err = e.Step([]float64{a})
			if err != nil {
				t.Fatal(err)
			}
			if term {
				t.Fatalf("%s: controller failed at step %d", name, step)
			}
			if trunc != (step == 500) {
				t.Fatalf("%s: truncated=%v at step %d", name, trunc, step)
			}
			if trunc {
				break
			}
		}
	}

	// Terminated and truncated together on the last step.
	e := NewCartPole()
	if err := e.SetState([]float64{2.39, 1, 0, 0, 499}); err != nil {
		t.Fatal(err)
	}
	_, r, term, trunc, err := e.Step([]float64{1})
	if err != nil || !term || !trunc || r != 1 {
		t.Errorf("last-step terminal: term=%v trunc=%v r=%v err=%v", term, trunc, r, err)
	}
	// One step before the limit is not truncated.
	if err := e.SetState([]float64{0, 0, 0, 0, 498}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, trunc, _ := e.Step([]float64{1}); trunc {
		t.Error("truncated at step 499")
	}
}

func TestRewards(t *testing.T) {
	// Pendulum: −(θ̂² + 0.1·θ̇² + 0.001·u²) on the pre-step state, clipped u.
	p := NewPendulum()
	cases := []struct{ th, thDot, u, want float64 }{
		{0, 0, 0, 0},
		{1, 0.5, 2, -(1 + 0.025 + 0.004)},
		{1, 0.5, 9, -(1 + 0.025 + 0.004)}, // u clipped to 2 before the cost
		{-0.5, -2, -1, -(0.25 + 0.4 + 0.001)},
		{2*math.Pi + 0.5, 0, 0, -0.25},                     // angle wrapped before squaring
		{math.Pi, 8, -2, -(math.Pi*math.Pi + 6.4 + 0.004)}, // worst case −16.2736…
	}
	for _, c := range cases {
		if err := p.SetState([]float64{c.th, c.thDot, 0}); err != nil {
			t.Fatal(err)
		}
		_, r, _, _, err := p.Step([]float64{c.u})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r-c.want) > 1e-12 {
			t.Errorf("pendulum θ=%v θ̇=%v u=%v: reward %v, want %v", c.th, c.thDot, c.u, r, c.want)
		}
	}

	// MountainCar: −0.1·a² with the RAW action, +100 at the goal.
	m := NewMountainCarContinuous()
	mcases := []struct {
		x, v, a, want float64
		term          bool
	}{
		{-0.5, 0, 0, 0, false},
		{-0.5, 0, 1, -0.1, false},
		{-0.5, 0, -0.5, -0.025, false},
		{-0.5, 0, 2, -0.4, false}, // penalty on 2, not the clipped 1
		{0.44, 0.03, 0, 100, true},
		{0.44, 0.03, -3, 100 - 0.9, true},
		{0.5, -0.06, 0, 0, false}, // past the goal but moving left: v < 0
	}
	for _, c := range mcases {
		if err := m.SetState([]float64{c.x, c.v, 0}); err != nil {
			t.Fatal(err)
		}
		_, r, term, _, err := m.Step([]float64{c.a})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r-c.want) > 1e-12 || term != c.term {
			t.Errorf("mountaincar x=%v v=%v a=%v: reward %v term %v, want %v %v", c.x, c.v, c.a, r, term, c.want, c.term)
		}
	}
	// Clipping of the force: a = 2 moves the car exactly like a = 1.
	s1, _, _ := MountainCarStep([2]float64{-0.5, 0.01}, 1)
	s2, _, _ := MountainCarStep([2]float64{-0.5, 0.01}, 2)
	if s1 != s2 {
		t.Errorf("force not clipped: %v vs %v", s1, s2)
	}
	// Right bound and speed limit.
	s3, _, term := MountainCarStep([2]float64{0.59, 0.0699}, 1)
	if s3[0] != f32(0.6) || s3[1] != f32(0.07) || !term {
		t.Errorf("right bound: %v term %v", s3, term)
	}
}

func TestAngleNormalize(t *testing.T) {
	cases := []struct{ in, want float64 }{
		{0, 0}, {0.1, 0.1}, {-0.1, -0.1}, {math.Pi, -math.Pi}, {-math.Pi, -math.Pi},
		{2*math.Pi + 0.1, 0.1}, {-2*math.Pi - 0.1, -0.1}, {3 * math.Pi / 2, -math.Pi / 2},
		{-3 * math.Pi / 2, math.Pi / 2}, {-7, 2*math.Pi - 7}, {100, 100 - 32*math.Pi},
	}
	for _, c := range cases {
		got := AngleNormalize(c.in)
		if math.Abs(got-c.want) > 1e-12 || got < -math.Pi || got >= math.Pi {
			t.Errorf("AngleNormalize(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestStateReplay saves the state mid-episode, keeps stepping, then restores
// the state into a fresh environment and replays the same actions: every
// observation, reward and flag must agree bit for bit.
func TestStateReplay(t *testing.T) {
	for _, name := range allNames {
		e := mustMake(t, name)
		rng := rand.New(rand.NewPCG(11, 12))
		e.Reset(rng)
		for k := 0; k < 23; k++ {
			if _, _, term, trunc, err := e.Step(randomAction(rng, e.ActionSpace())); err != nil || term || trunc {
				e.Reset(rng)
			}
		}
		saved := e.State()
		type rec struct {
			obs         []float64
			r           float64
			term, trunc bool
		}
		var actions [][]float64
		var recs []rec
		for k := 0; k < 60; k++ {
			a := randomAction(rng, e.ActionSpace())
			obs, r, term, trunc, err := e.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			actions = append(actions, a)
			recs = append(recs, rec{obs, r, term, trunc})
			if term || trunc {
				break
			}
		}
		final := e.State()

		f := mustMake(t, name)
		if err := f.SetState(saved); err != nil {
			t.Fatal(err)
		}
		if got := f.State(); !equalBits(got, saved) {
			t.Fatalf("%s: State after SetState = %v, want %v", name, got, saved)
		}
		for k, a := range actions {
			obs, r, term, trunc, err := f.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			w := recs[k]
			if !equalBits(obs, w.obs) || math.Float64bits(r) != math.Float64bits(w.r) || term != w.term || trunc != w.trunc {
				t.Fatalf("%s: replay step %d differs: %v %v %v %v vs %v", name, k, obs, r, term, trunc, w)
			}
		}
		if !equalBits(f.State(), final) {
			t.Errorf("%s: final state %v, want %v", name, f.State(), final)
		}
	}
}

func equalBits(a, b []float64) bool {
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

// TestFreshSlices checks that returned observations and states do not alias
// the environment's internals.
func TestFreshSlices(t *testing.T) {
	for _, name := range allNames {
		e := mustMake(t, name)
		rng := rand.New(rand.NewPCG(1, 1))
		obs := e.Reset(rng)
		st := e.State()
		orig := append([]float64(nil), st...)
		obs[0] = 1e9
		st[0] = 1e9
		if !equalBits(e.State(), orig) {
			t.Errorf("%s: State aliases internal state", name)
		}
		in := append([]float64(nil), orig...)
		if err := e.SetState(in); err != nil {
			t.Fatal(err)
		}
		in[0] = 1e9
		if !equalBits(e.State(), orig) {
			t.Errorf("%s: SetState keeps a reference to its argument", name)
		}
		o1, _, _, _, err := e.Step(randomAction(rng, e.ActionSpace()))
		if err != nil {
			t.Fatal(err)
		}
		o1c := append([]float64(nil), o1...)
		if _, _, _, _, err := e.Step(randomAction(rng, e.ActionSpace())); err != nil {
			t.Fatal(err)
		}
		if !equalBits(o1, o1c) {
			t.Errorf("%s: Step reuses its observation slice", name)
		}
	}
}

func TestErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, name := range allNames {
		e := mustMake(t, name)
		wantErr := func(what string, err error, substr string) {
			t.Helper()
			if err == nil {
				t.Errorf("%s: %s: no error", name, what)
			} else if !strings.Contains(err.Error(), substr) || !strings.HasPrefix(err.Error(), name+":") {
				t.Errorf("%s: %s: error %q does not mention %q", name, what, err, substr)
			}
		}
		step := func(a []float64) error { _, _, _, _, err := e.Step(a); return err }

		wantErr("step before reset", step([]float64{0}), "before Reset")

		e.Reset(rand.New(rand.NewPCG(1, 2)))
		before := e.State()
		wantErr("empty action", step(nil), "length 0")
		wantErr("long action", step([]float64{0, 0}), "length 2")
		wantErr("NaN action", step([]float64{nan}), "not finite")
		wantErr("+Inf action", step([]float64{inf}), "not finite")
		wantErr("-Inf action", step([]float64{-inf}), "not finite")
		if e.ActionSpace().Discrete > 0 {
			wantErr("action 2", step([]float64{2}), "not an index")
			wantErr("action -1", step([]float64{-1}), "not an index")
			wantErr("action 0.5", step([]float64{0.5}), "not an index")
		}
		if !equalBits(e.State(), before) {
			t.Errorf("%s: invalid action changed the state", name)
		}

		n := len(before)
		wantErr("short state", e.SetState(before[:n-1]), "length")
		wantErr("long state", e.SetState(append(append([]float64(nil), before...), 0)), "length")
		for i := 0; i < n; i++ {
			for _, bad := range []float64{nan, inf, -inf} {
				s := append([]float64(nil), before...)
				s[i] = bad
				wantErr("non-finite state", e.SetState(s), "not finite")
			}
		}
		for _, badSteps := range []float64{-1, 2.5, 1e300} {
			s := append([]float64(nil), before...)
			s[n-1] = badSteps
			wantErr("bad steps", e.SetState(s), "elapsed step count")
		}
		if !equalBits(e.State(), before) {
			t.Errorf("%s: rejected SetState changed the state", name)
		}

		// Stepping after the episode ended is an error until Reset or SetState.
		s := append([]float64(nil), before...)
		s[n-1] = float64(e.MaxEpisodeSteps() - 1)
		if err := e.SetState(s); err != nil {
			t.Fatal(err)
		}
		if _, _, _, trunc, err := e.Step(randomAction(rand.New(rand.NewPCG(0, 0)), e.ActionSpace())); err != nil || !trunc {
			t.Fatalf("%s: last step: trunc=%v err=%v", name, trunc, err)
		}
		wantErr("step after end", step([]float64{0}), "after the episode ended")
		e.Reset(rand.New(rand.NewPCG(1, 2)))
		if err := step([]float64{0}); err != nil {
			t.Errorf("%s: step after Reset: %v", name, err)
		}
	}

	// Terminal (not truncated) CartPole state.
	e := NewCartPole()
	if err := e.SetState([]float64{2.39, 1, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if _, _, term, _, _ := e.Step([]float64{1}); !term {
		t.Fatal("expected termination")
	}
	if _, _, _, _, err := e.Step([]float64{1}); err == nil {
		t.Error("step after terminal succeeded")
	}
	// SetState clears the episode-over flag, even for a terminal state.
	if err := e.SetState(e.State()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := e.Step([]float64{1}); err != nil {
		t.Errorf("step after SetState: %v", err)
	}
}
