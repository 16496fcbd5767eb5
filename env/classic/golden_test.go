package classic

import (
	"bufio"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goldenLine is one parsed line of testdata/classic-control-golden.txt,
// produced by running Gymnasium 1.4.0 (NumPy 1.24.2).
type goldenLine struct {
	raw    string
	fields map[string]string
}

var goldenField = regexp.MustCompile(`([A-Za-z0-9_]+)=(\[[^\]]*\]|\S+)`)

// loadGolden returns the lines of the golden file that start with prefix.
func loadGolden(t *testing.T, prefix string) []goldenLine {
	t.Helper()
	f, err := os.Open("testdata/classic-control-golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []goldenLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		g := goldenLine{raw: line, fields: map[string]string{}}
		for _, m := range goldenField.FindAllStringSubmatch(line, -1) {
			g.fields[m[1]] = m[2]
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no golden lines with prefix %q", prefix)
	}
	return out
}

func (g goldenLine) num(t *testing.T, key string) float64 {
	t.Helper()
	s, ok := g.fields[key]
	if !ok {
		t.Fatalf("golden line %q has no %s=", g.raw, key)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("golden %s=%q: %v", key, s, err)
	}
	return v
}

func (g goldenLine) vec(t *testing.T, key string) []float64 {
	t.Helper()
	s, ok := g.fields[key]
	if !ok {
		t.Fatalf("golden line %q has no %s=", g.raw, key)
	}
	return parseVec(t, s)
}

func (g goldenLine) boolean(t *testing.T, key string) bool {
	t.Helper()
	s, ok := g.fields[key]
	if !ok {
		t.Fatalf("golden line %q has no %s=", g.raw, key)
	}
	return s == "True"
}

func parseVec(t *testing.T, s string) []float64 {
	t.Helper()
	s = strings.Trim(s, "[]")
	var out []float64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			t.Fatalf("golden vector %q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

// closeVec fails if got and want differ by more than tol·max(1, |want|).
func closeVec(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.17g, want %.17g (diff %.3g)", what, i, got[i], want[i], d)
		}
	}
}

// Tolerances: float64 states may differ from NumPy's by the last ulp of
// sin/cos (CPU dependent), so they are compared to 1e-12. Observations are
// float32-rounded; a 1e-16 difference can flip the rounding by one float32
// ulp (≈6e-8 relative), hence 1.2e-7.
const (
	tolState = 1e-12
	tolObs32 = 1.2e-7
)

func TestGoldenCartPole(t *testing.T) {
	e := NewCartPole()
	// Reference facts §1.1: the trajectory starts at [0.01, -0.02, 0.03, -0.04].
	if err := e.SetState([]float64{0.01, -0.02, 0.03, -0.04, 0}); err != nil {
		t.Fatal(err)
	}
	for _, g := range loadGolden(t, "CartPole t=") {
		obs, r, term, trunc, err := e.Step([]float64{g.num(t, "a")})
		if err != nil {
			t.Fatal(err)
		}
		closeVec(t, g.raw[:12]+" obs", obs, g.vec(t, "obs"), tolObs32)
		closeVec(t, g.raw[:12]+" state", e.State()[:4], g.vec(t, "state64"), tolState)
		for i, o := range obs {
			if o != f32(o) {
				t.Errorf("obs[%d] = %v is not float32-representable", i, o)
			}
		}
		if r != g.num(t, "r") || term != g.boolean(t, "term") || trunc != g.boolean(t, "trunc") {
			t.Errorf("%s: got r=%v term=%v trunc=%v", g.raw[:12], r, term, trunc)
		}
	}

	// Always action 1 from the zero state terminates at step 9.
	g := loadGolden(t, "CartPole always-1")[0]
	if err := e.SetState(make([]float64, 5)); err != nil {
		t.Fatal(err)
	}
	for step := 1; ; step++ {
		obs, r, term, trunc, err := e.Step([]float64{1})
		if err != nil {
			t.Fatal(err)
		}
		if r != 1 || trunc {
			t.Fatalf("step %d: r=%v trunc=%v", step, r, trunc)
		}
		if term {
			if !strings.Contains(g.raw, "step "+strconv.Itoa(step)+" ") {
				t.Errorf("terminated at step %d; golden: %s", step, g.raw)
			}
			closeVec(t, "always-1 obs", obs, g.vec(t, "obs"), tolObs32)
			break
		}
		if step > 20 {
			t.Fatal("did not terminate")
		}
	}
}

func TestGoldenPendulum(t *testing.T) {
	e := NewPendulum()
	// Reference facts §1.2: the trajectory starts at [1.0, 0.5].
	if err := e.SetState([]float64{1.0, 0.5, 0}); err != nil {
		t.Fatal(err)
	}
	for _, g := range loadGolden(t, "Pendulum t=") {
		obs, r, term, trunc, err := e.Step([]float64{g.num(t, "a")})
		if err != nil {
			t.Fatal(err)
		}
		closeVec(t, g.raw[:12]+" obs", obs, g.vec(t, "obs"), tolObs32)
		closeVec(t, g.raw[:12]+" state", e.State()[:2], g.vec(t, "state"), tolState)
		closeVec(t, g.raw[:12]+" reward", []float64{r}, []float64{g.num(t, "r")}, tolState)
		if term || trunc {
			t.Errorf("%s: term=%v trunc=%v", g.raw[:12], term, trunc)
		}
	}

	// Speed clipping: from [3.0, 7.9] with u = 2.
	g := loadGolden(t, "Pendulum speed-clip")[0]
	if err := e.SetState([]float64{3.0, 7.9, 0}); err != nil {
		t.Fatal(err)
	}
	_, r, _, _, err := e.Step([]float64{2})
	if err != nil {
		t.Fatal(err)
	}
	closeVec(t, "speed-clip state", e.State()[:2], g.vec(t, "state"), tolState)
	closeVec(t, "speed-clip reward", []float64{r}, []float64{g.num(t, "r")}, tolState)
}

func TestGoldenMountainCar(t *testing.T) {
	e := NewMountainCarContinuous()
	// Reference facts §1.3: the trajectory starts at [-0.5, 0] (float32).
	if err := e.SetState([]float64{-0.5, 0, 0}); err != nil {
		t.Fatal(err)
	}
	check := func(name string, g goldenLine, obs []float64, r float64, term bool) {
		t.Helper()
		closeVec(t, name+" obs", obs, g.vec(t, "obs"), tolObs32)
		closeVec(t, name+" state", e.State()[:2], g.vec(t, "obs"), tolObs32)
		for i, v := range e.State()[:2] {
			if v != f32(v) {
				t.Errorf("%s: state[%d] = %v not stored as float32 (Gym rounds the state each step)", name, i, v)
			}
		}
		closeVec(t, name+" reward", []float64{r}, []float64{g.num(t, "r")}, tolState)
		if _, ok := g.fields["term"]; ok && term != g.boolean(t, "term") {
			t.Errorf("%s: term=%v", name, term)
		}
	}
	for _, g := range loadGolden(t, "MCC t=") {
		obs, r, term, _, err := e.Step([]float64{g.num(t, "a")})
		if err != nil {
			t.Fatal(err)
		}
		check(g.raw[:7], g, obs, r, term)
	}

	// Inelastic left wall: from [-1.19, -0.05], a = -1.
	if err := e.SetState([]float64{-1.19, -0.05, 0}); err != nil {
		t.Fatal(err)
	}
	obs, r, term, _, err := e.Step([]float64{-1})
	if err != nil {
		t.Fatal(err)
	}
	check("left-wall", loadGolden(t, "MCC left-wall")[0], obs, r, term)

	// Goal: from [0.44, 0.03], a = 0.5 → +100 − 0.025, terminated.
	if err := e.SetState([]float64{0.44, 0.03, 0}); err != nil {
		t.Fatal(err)
	}
	obs, r, term, _, err = e.Step([]float64{0.5})
	if err != nil {
		t.Fatal(err)
	}
	check("goal", loadGolden(t, "MCC goal")[0], obs, r, term)
	if !term {
		t.Error("goal not terminated")
	}
}

// TestCartPoleOperationOrder pins Gym's floating-point operation order. The
// golden CartPole states differ from ours by a few ulps only because NumPy's
// cos(0.03) is 2.2e-16 (two ulps) above Go's (and libm's) on the machine that
// produced them (reference facts §1.0); substituting NumPy's value makes the first step agree bit for bit.
func TestCartPoleOperationOrder(t *testing.T) {
	g := loadGolden(t, "CartPole t=1 ")[0]
	want := g.vec(t, "state64")
	start := [4]float64{0.01, -0.02, 0.03, -0.04}
	const npCos = 0.9995500337489878 // = math.Cos(0.03) + 2.220446049250313e-16
	if npCos-math.Cos(0.03) != 2.220446049250313e-16 {
		t.Fatalf("Go's cos(0.03) = %.17g changed", math.Cos(0.03))
	}
	got := cartPoleEuler(start, ForceMag, npCos, math.Sin(0.03))
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("state[%d] = %.17g, want %.17g bit for bit", i, got[i], want[i])
		}
	}
	// And with Go's own cos the result is CartPoleDynamics.
	if cartPoleEuler(start, ForceMag, math.Cos(0.03), math.Sin(0.03)) != CartPoleDynamics(start, ForceMag) {
		t.Error("cartPoleEuler and CartPoleDynamics disagree")
	}
}
