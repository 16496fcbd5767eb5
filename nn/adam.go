package nn

import "math"

// Adam is the Adam optimizer (Kingma & Ba 2015) with PyTorch's defaults
// β1 = 0.9, β2 = 0.999, ε = 1e-8 and bias correction.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	Params                []*Param
	T                     int         // steps taken
	M, V                  [][]float32 // first and second moments, one per param
}

// NewAdam makes an optimizer over ps with learning rate lr.
func NewAdam(ps []*Param, lr float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Params: ps}
	for _, p := range ps {
		a.M = append(a.M, make([]float32, len(p.Data)))
		a.V = append(a.V, make([]float32, len(p.Data)))
	}
	return a
}

// Step applies one update from the accumulated gradients. It does not clear them.
func (a *Adam) Step() {
	a.T++
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	c1 := 1 - math.Pow(a.Beta1, float64(a.T))
	c2 := 1 - math.Pow(a.Beta2, float64(a.T))
	// θ ← θ − lr·m̂/(√v̂ + ε) with m̂ = m/c1, v̂ = v/c2, folded into two scalars.
	step := float32(a.LR / c1)
	isq := float32(1 / math.Sqrt(c2))
	eps := float32(a.Eps)
	k := [7]float32{b1, 1 - b1, b2, 1 - b2, step, isq, eps}
	for i, p := range a.Params {
		m, v, g, d := a.M[i], a.V[i], p.Grad, p.Data
		m = m[:len(d)]
		v = v[:len(d)]
		g = g[:len(d)]
		n := 0
		if useAVX2 {
			n = adamAVX2(d, g, m, v, &k) // the loop below, 8 at a time
		}
		for j := n; j < len(d); j++ {
			gj := g[j]
			mj := b1*m[j] + (1-b1)*gj
			vj := b2*v[j] + (1-b2)*gj*gj
			m[j], v[j] = mj, vj
			d[j] -= step * mj / (sqrt32(vj)*isq + eps)
		}
	}
}

// Reset clears the moment estimates and step count.
func (a *Adam) Reset() {
	a.T = 0
	for i := range a.M {
		clear(a.M[i])
		clear(a.V[i])
	}
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
