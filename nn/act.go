package nn

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
		n := 0
		if useAVX2 {
			n = tanhAVX2(x)
		}
		for i := n; i < len(x); i++ {
			x[i] = tanh32(x[i])
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
		n := 0
		if useAVX2 {
			n = tanhBackAVX2(y, d)
		}
		for i := n; i < len(y); i++ {
			v := y[i]
			// float32(v*v): no fused multiply-subtract, as in the AVX2 kernel.
			d[i] *= 1 - float32(v*v)
		}
	}
}

// backwardBiasGrad is backward followed by adding the column sums of the
// result d [rows, cols] into bias [cols], done row by row so that each row
// is still in L1 cache for the sum: one pass over d instead of two, with the
// same arithmetic in the same order as backward + colSumAdd.
func (a Activation) backwardBiasGrad(y, d []float32, rows, cols int, bias []float32) {
	bias = bias[:cols]
	for r := 0; r < rows; r++ {
		dr := d[r*cols : (r+1)*cols]
		a.backward(y[r*cols:(r+1)*cols], dr)
		n := 0
		if useAVX2 {
			n = addToAVX2(bias, dr)
		}
		for j := n; j < cols; j++ {
			bias[j] += dr[j]
		}
	}
}

// tanh32 is a float32 hyperbolic tangent: the odd rational minimax
// approximation x·P(x²)/Q(x²) of degree 13/6 (the coefficients Eigen uses for
// its vectorized float tanh), exact to a few float32 ulps on the clamped
// range |x| ≤ 7.905 where it reaches ±1 in float32, and x itself for tiny
// |x|. It is about 5× faster than float64 math.Tanh, which dominates the
// Koopman encoder/decoder passes otherwise. NaN propagates.
func tanh32(x float32) float32 {
	const clamp = 7.90531110763549805
	if x > clamp {
		x = clamp
	} else if x < -clamp {
		x = -clamp
	}
	if x < 4e-4 && x > -4e-4 {
		return x
	}
	// Each float32(·) rounds the product before the add, so no compiler
	// fuses a step into an FMA (GOAMD64=v3 would): the AVX2 kernel
	// (tanhAVX2) repeats these exact operations.
	x2 := x * x
	p := float32(-2.76076847742355e-16)
	p = float32(p*x2) + 2.00018790482477e-13
	p = float32(p*x2) - 8.60467152213735e-11
	p = float32(p*x2) + 5.12229709037114e-08
	p = float32(p*x2) + 1.48572235717979e-05
	p = float32(p*x2) + 6.37261928875436e-04
	p = float32(p*x2) + 4.89352455891786e-03
	p *= x
	q := float32(1.19825839466702e-06)
	q = float32(q*x2) + 1.18534705686654e-04
	q = float32(q*x2) + 2.26843463243900e-03
	q = float32(q*x2) + 4.89352518554385e-03
	return p / q
}
