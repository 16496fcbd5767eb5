package gradcheck

import (
	"math/rand/v2"
	"testing"
)

// recorder counts the failures Check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errs++ }
func (r *recorder) Fatalf(string, ...any) { r.errs++ }

// Check accepts the true gradient of Σ x_i³ and rejects a wrong one, and a
// kinked loss (Σ |x_i| at x = 0) is flagged as uninformative.
func TestCheckCanFail(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := []float32{0.5, -1.2, 2, 0.3, -0.7}
	loss := func() float64 {
		s := 0.0
		for _, v := range x {
			s += float64(v) * float64(v) * float64(v)
		}
		return s
	}
	good := make([]float32, len(x))
	bad := make([]float32, len(x))
	for i, v := range x {
		good[i] = 3 * v * v
		bad[i] = 3 * v * v * 1.1
	}
	r := &recorder{TB: t}
	Check(r, "cube", x, good, loss, rng, Options{})
	if r.errs != 0 {
		t.Fatalf("true gradient rejected %d times", r.errs)
	}
	Check(r, "cube", x, bad, loss, rng, Options{})
	if r.errs != len(x) {
		t.Fatalf("10%% wrong gradient: %d of %d entries rejected", r.errs, len(x))
	}
	z := make([]float32, 8)
	abs := func() float64 {
		s := 0.0
		for _, v := range z {
			if v < 0 {
				v = -v
			}
			s += float64(v)
		}
		return s
	}
	r = &recorder{TB: t}
	Check(r, "abs", z, make([]float32, 8), abs, rng, Options{SkipKinks: true})
	if r.errs != 1 {
		t.Fatalf("kinked loss: %d reports, want the one 'not informative' failure", r.errs)
	}
}
