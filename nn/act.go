package nn

import "math"

// Activation selects an elementwise nonlinearity.
type Activation int

const (
	// Identity is no nonlinearity (linear output layers).
	Identity Activation = iota
	// ReLU is max(x, 0).
	ReLU
	// Tanh is the hyperbolic tangent.
	Tanh
)

// String names the activation as in configs ("identity", "relu", "tanh").
func (a Activation) String() string {
	switch a {
	case ReLU:
		return "relu"
	case Tanh:
		return "tanh"
	}
	return "identity"
}

// ParseActivation is the inverse of String.
func ParseActivation(s string) (Activation, bool) {
	switch s {
	case "identity", "linear", "none":
		return Identity, true
	case "relu":
		return ReLU, true
	case "tanh":
		return Tanh, true
	}
	return Identity, false
}

// apply overwrites x with act(x).
func (a Activation) apply(x []float32) {
	switch a {
	case ReLU:
		n := 0
		if useAVX2 {
			n = reluAVX2(x)
		}
		for i := n; i < len(x); i++ {
			// max(0, x) that keeps NaN (so divergence stays visible) and −0,
			// exactly like the AVX2 kernel's VMAXPS.
			if x[i] < 0 {
				x[i] = 0
			}
		}
	case Tanh:
		for i, v := range x {
			x[i] = float32(math.Tanh(float64(v)))
		}
	}
}

// backward overwrites d (∂L/∂y) with ∂L/∂x given the activation's output y.
func (a Activation) backward(y, d []float32) {
	switch a {
	case ReLU:
		d = d[:len(y)]
		n := 0
		if useAVX2 {
			n = reluMaskAVX2(y, d)
		}
		for i := n; i < len(y); i++ {
			// Keep d where y > 0; −0 and NaN outputs pass no gradient.
			if !(y[i] > 0) {
				d[i] = 0
			}
		}
	case Tanh:
		d = d[:len(y)]
		for i, v := range y {
			d[i] *= 1 - v*v
		}
	}
}
