package panda

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSPDInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 7
	b := make([]float64, n*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	a := make([]float64, n*n)
	matMulT(b, n, n, b, n, a) // B Bᵀ
	for i := range n {
		a[i*n+i] += 0.5
	}
	inv, l, prod := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	if !spdInverse(a, n, inv, l) {
		t.Fatal("a positive definite matrix was reported singular")
	}
	matMul(a, n, n, inv, n, prod)
	for i := range n {
		for j := range n {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(prod[i*n+j]-want) > 1e-10 {
				t.Fatalf("A·A⁻¹[%d,%d] = %v, want %v", i, j, prod[i*n+j], want)
			}
		}
	}
	neg := []float64{1, 2, 2, 1} // eigenvalues 3 and −1
	if spdInverse(neg, 2, make([]float64, 4), make([]float64, 4)) {
		t.Error("an indefinite matrix was inverted")
	}
}

func TestOrientationError(t *testing.T) {
	// The current frame is the goal turned by θ about z: the error is
	// sin θ about −z (it turns the current frame back toward the goal).
	const th = 0.1
	c, s := math.Cos(th), math.Sin(th)
	goal := [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	cur := [9]float64{c, -s, 0, s, c, 0, 0, 0, 1}
	e := orientationError(goal, cur)
	if math.Abs(e[0]) > 1e-15 || math.Abs(e[1]) > 1e-15 || math.Abs(e[2]+s) > 1e-15 {
		t.Errorf("orientation error %v, want (0, 0, %v)", e, -s)
	}
	if e := orientationError(goal, goal); e != [3]float64{} {
		t.Errorf("error of equal frames %v, want 0", e)
	}
}

// TestOSCPointMass checks the controller on a system whose answer is known
// by hand: three unit-mass sliders along x, y, z (M = I, J_p = I, no
// rotation, so Λ_pos = I) plus nothing else: τ = Kp e − Kd v + bias.
func TestOSCPointMass(t *testing.T) {
	c := NewOSC(3)
	in := &OSCInput{M: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, Jp: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1},
		Jr: make([]float64, 9), Bias: []float64{0, 0, 9.81}, Q: make([]float64, 3), QVel: []float64{0.1, 0, 0},
		Q0: make([]float64, 3), GoalPos: [3]float64{0.01, -0.02, 0}}
	in.R = [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	in.GoalR = in.R
	tau := make([]float64, 3)
	if err := c.Torques(in, tau); err != nil {
		t.Fatal(err)
	}
	kd := 2 * math.Sqrt(Kp)
	want := []float64{Kp*0.01 - kd*0.1, Kp * -0.02, 9.81}
	for i := range 3 {
		if math.Abs(tau[i]-want[i]) > 1e-9 {
			t.Errorf("tau = %v, want %v", tau, want)
			break
		}
	}
	if err := c.Torques(in, tau[:2]); err == nil {
		t.Error("a short torque slice was accepted")
	}
}

func TestLiftReward(t *testing.T) {
	on := [3]float64{0, 0, TableTopZ + CubeHalf}
	if r := LiftReward(on, on, false); math.Abs(r-1/2.25) > 1e-15 {
		t.Errorf("reward at the cube, not grasped: %v, want 1/2.25", r)
	}
	if r := LiftReward(on, on, true); math.Abs(r-1.25/2.25) > 1e-15 {
		t.Errorf("reward at the cube, grasped: %v, want 1.25/2.25", r)
	}
	far := [3]float64{0.1, 0, TableTopZ + CubeHalf}
	if r, want := LiftReward(far, on, false), (1-math.Tanh(1))/2.25; math.Abs(r-want) > 1e-15 {
		t.Errorf("reward 0.1 m away: %v, want %v", r, want)
	}
	up := [3]float64{0, 0, TableTopZ + LiftHeight + 1e-6}
	if r := LiftReward(far, up, false); r != 1 || !LiftSuccess(up[2]) {
		t.Errorf("lifted cube: reward %v success %v, want 1 true", r, LiftSuccess(up[2]))
	}
	if LiftSuccess(TableTopZ + LiftHeight) {
		t.Error("a cube exactly at the threshold counts as lifted (RoboSuite uses >)")
	}
}

func TestSampleCubeRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var minX, maxX = 1.0, -1.0
	for range 2000 {
		p, q := SampleCube(rng)
		if math.Abs(p[0]) > CubeRangeXY || math.Abs(p[1]) > CubeRangeXY || p[2] != TableTopZ+CubeDropZ+CubeHalf {
			t.Fatalf("cube centre %v outside Lift's range", p)
		}
		if n := q[0]*q[0] + q[3]*q[3]; math.Abs(n-1) > 1e-12 || q[1] != 0 || q[2] != 0 {
			t.Fatalf("quaternion %v is not a unit rotation about z", q)
		}
		minX, maxX = math.Min(minX, p[0]), math.Max(maxX, p[0])
	}
	if minX > -0.028 || maxX < 0.028 {
		t.Errorf("x spans [%v, %v], want nearly ±0.03", minX, maxX)
	}
}

func TestScriptedPolicyLookup(t *testing.T) {
	if p, err := ScriptedPolicy(LiftName); err != nil || p == nil {
		t.Errorf("ScriptedPolicy(%q) = %v, %v", LiftName, p, err)
	}
	if _, err := ScriptedPolicy("robosuite-nope"); err == nil {
		t.Error("an unknown task has a scripted controller")
	}
}
