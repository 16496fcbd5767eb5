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
		for i, v := range x {
			x[i] = max(v, 0)
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
		for i, v := range y {
			// Branch-free mask (a data-dependent branch mispredicts on
			// random activations): y = max(x, 0) is +0 or positive, so
			// −bits(y) is negative exactly when y > 0 and its sign bit,
			// spread by the arithmetic shift, keeps or clears d.
			m := uint32(int32(-math.Float32bits(v)) >> 31)
			d[i] = math.Float32frombits(math.Float32bits(d[i]) & m)
		}
	case Tanh:
		d = d[:len(y)]
		for i, v := range y {
			d[i] *= 1 - v*v
		}
	}
}
