// Package gradcheck compares analytic gradients with central finite
// differences. It is the one finite-difference checker behind the gradient
// tests of nn, koopman and cql.
package gradcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Options tune a check. Zero fields take the defaults noted.
type Options struct {
	// Probes is how many entries of x are perturbed, chosen at random
	// (default 30; all of x when it is shorter).
	Probes int
	// Step is the perturbation h of the central difference (default 1e-3).
	Step float64
	// RelTol, Floor and AbsTol define agreement:
	// |num − ana| ≤ RelTol·max(Floor, |num|) + AbsTol
	// (defaults 2e-2, 1 and 0).
	RelTol, Floor, AbsTol float64
	// SkipKinks skips probes whose one-sided slopes disagree by more than
	// 5%, i.e. that straddle a ReLU kink, where no finite difference is
	// meaningful. More than a quarter of the probes skipped is a failure.
	SkipKinks bool
}

// Check perturbs entries of x in place (restoring them), evaluates loss and
// reports through t every entry whose central finite difference disagrees
// with analytic[i], the claimed ∂loss/∂x[i].
func Check(t testing.TB, name string, x, analytic []float32, loss func() float64, rng *rand.Rand, o Options) {
	t.Helper()
	if o.Probes == 0 {
		o.Probes = 30
	}
	if o.Step == 0 {
		o.Step = 1e-3
	}
	if o.RelTol == 0 {
		o.RelTol = 2e-2
	}
	if o.Floor == 0 {
		o.Floor = 1
	}
	if len(analytic) != len(x) {
		t.Fatalf("%s: %d analytic gradients for %d entries", name, len(analytic), len(x))
	}
	h := float32(o.Step)
	idx := rng.Perm(len(x))
	if len(idx) > o.Probes {
		idx = idx[:o.Probes]
	}
	var l0 float64
	if o.SkipKinks {
		l0 = loss()
	}
	kinks := 0
	for _, i := range idx {
		old := x[i]
		x[i] = old + h
		lp := loss()
		x[i] = old - h
		lm := loss()
		x[i] = old
		if o.SkipKinks {
			fwd, bwd := (lp-l0)/o.Step, (l0-lm)/o.Step
			if math.Abs(fwd-bwd) > 5e-2*math.Max(1, math.Abs(fwd)) {
				kinks++
				continue
			}
		}
		num := (lp - lm) / (2 * o.Step)
		ana := float64(analytic[i])
		if math.Abs(num-ana) > o.RelTol*math.Max(o.Floor, math.Abs(num))+o.AbsTol {
			t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", name, i, ana, num)
		}
	}
	if kinks*4 > len(idx) {
		t.Errorf("%s: %d of %d probes straddled a kink; the check is not informative", name, kinks, len(idx))
	}
}
