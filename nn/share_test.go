package nn

import (
	"math/rand/v2"
	"testing"
)

// A weight-sharing twin computes the same outputs, keeps its own gradients,
// and AddGrads makes the sum equal to back-propagating all rows through one
// network.
func TestShareDataAddGrads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := NewMLP("m", []int{5, 7, 3}, ReLU, Identity, rng)
	twin := m.ShareData()
	x := make([]float32, 4*5)
	dy := make([]float32, 4*3)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range dy {
		dy[i] = float32(rng.NormFloat64())
	}
	var c0, c1, c2 Cache
	// Reference: all 4 rows through m alone.
	ref := append([]float32(nil), m.Forward(&c0, x, 4)...)
	ZeroGrad(m.Params())
	m.Backward(&c0, dy, nil, true)
	want := make([][]float32, 0)
	for _, p := range m.Params() {
		want = append(want, append([]float32(nil), p.Grad...))
	}
	// Split: rows 0-1 through m, rows 2-3 through the twin, concurrently.
	ZeroGrad(m.Params())
	var y0, y1 []float32
	Both(func(i int) {
		if i == 0 {
			y0 = m.Forward(&c1, x[:2*5], 2)
			m.Backward(&c1, dy[:2*3], nil, true)
		} else {
			y1 = twin.Forward(&c2, x[2*5:], 2)
			twin.Backward(&c2, dy[2*3:], nil, true)
		}
	})
	for i, v := range append(append([]float32(nil), y0...), y1...) {
		if v != ref[i] {
			t.Fatalf("output %d: split %v, whole %v", i, v, ref[i])
		}
	}
	AddGrads(m.Params(), twin.Params())
	for pi, p := range m.Params() {
		for j, g := range p.Grad {
			if d := g - want[pi][j]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%s[%d]: split %v, whole %v", p.Name, j, g, want[pi][j])
			}
		}
		for j, g := range twin.Params()[pi].Grad {
			if g != 0 {
				t.Fatalf("twin %s[%d] = %v after AddGrads, want 0", p.Name, j, g)
			}
		}
		if &twin.Params()[pi].Data[0] != &p.Data[0] {
			t.Fatalf("%s: twin does not share the weights", p.Name)
		}
	}
}
