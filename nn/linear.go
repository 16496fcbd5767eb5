package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/koopq/koopq/internal/blas"
)

// Linear is an affine layer y = x·W + b with W: [In, Out] and b: [Out]
// (b is nil for a bias-free layer). x: [rows, In], y: [rows, Out].
type Linear struct {
	In, Out int
	W       *Param // [In, Out]
	B       *Param // [Out], nil when the layer has no bias
}

// NewLinear makes a layer with Xavier-uniform weights and zero bias.
func NewLinear(name string, in, out int, bias bool, rng *rand.Rand) *Linear {
	l := &Linear{In: in, Out: out, W: NewParam(name+".weight", in, out)}
	if bias {
		l.B = NewParam(name+".bias", out)
	}
	XavierUniform(l.W.Data, in, out, 1, rng)
	return l
}

// Params returns the layer's parameters (weight, then bias if any).
func (l *Linear) Params() []*Param {
	if l.B == nil {
		return []*Param{l.W}
	}
	return []*Param{l.W, l.B}
}

// Forward writes y = x·W + b. x: [rows, In], y: [rows, Out].
func (l *Linear) Forward(x []float32, rows int, y []float32) {
	if len(x) < rows*l.In || len(y) < rows*l.Out {
		panic(fmt.Sprintf("nn: Linear %dx%d forward with len(x)=%d len(y)=%d rows=%d", l.In, l.Out, len(x), len(y), rows))
	}
	if l.forwardFused(x, rows, y, Identity) {
		return
	}
	if l.B != nil {
		b := l.B.Data
		for r := 0; r < rows; r++ {
			copy(y[r*l.Out:(r+1)*l.Out], b)
		}
	}
	blas.MatMul(false, false, rows, l.Out, l.In, x, l.W.Data, y, l.B != nil)
}

// forwardFused writes y = act(x·W + b) with the bias, and for tanh the
// activation, fused into one GEMM (blas.Affine), and reports whether the
// GEMM backend could. ReLU stays a separate pass (nn's, which propagates
// NaN): oneDNN's ReLU post-op maps NaN to 0, which would hide a diverged
// network behind finite outputs. Measured on the critic's 7936×256→256
// layer, fusing the bias alone takes 0.8-0.9× the time of the separate
// bias, GEMM and ReLU passes (go test -bench Affine ./internal/blas/).
func (l *Linear) forwardFused(x []float32, rows int, y []float32, act Activation) bool {
	var b []float32
	if l.B != nil {
		b = l.B.Data
	}
	switch act {
	case Identity, ReLU:
		if !blas.Affine(rows, l.In, l.Out, x, l.W.Data, b, y, blas.ActNone) {
			return false
		}
		act.apply(y)
		return true
	case Tanh:
		return blas.Affine(rows, l.In, l.Out, x, l.W.Data, b, y, blas.ActTanh)
	}
	return false
}

// forwardHalf is forwardFused for inputs x [rows, In] and weights w
// already rounded to bfloat16 (MLP's bf16 path): y = act(x·W + b), the bias
// (and tanh) fused into the GEMM when the backend can, ReLU as nn's pass
// (fused with rounding y into yh when yh, the next layer's input, is
// non-nil).
func (l *Linear) forwardHalf(x, w []uint16, rows int, y []float32, act Activation, yh []uint16) {
	l.affineHalf(x, w, rows, y, act)
	switch {
	case yh == nil:
		if act != Tanh {
			act.apply(y)
		}
	case act == ReLU:
		blas.ReLUToBF16(y[:rows*l.Out], yh)
	default:
		if act != Tanh {
			act.apply(y)
		}
		blas.ToBF16(yh, y[:rows*l.Out])
	}
}

// affineHalf writes x·W + b into y, with tanh applied when act is Tanh and
// no other activation.
func (l *Linear) affineHalf(x, w []uint16, rows int, y []float32, act Activation) {
	var b []float32
	if l.B != nil {
		b = l.B.Data
	}
	fused := blas.ActNone
	if act == Tanh {
		fused = blas.ActTanh
	}
	if blas.AffineBF16(rows, l.In, l.Out, x, w, b, y, fused) {
		return
	}
	beta := float32(0)
	if b != nil {
		for r := 0; r < rows; r++ {
			copy(y[r*l.Out:(r+1)*l.Out], b)
		}
		beta = 1
	}
	blas.GemmBF16(false, false, rows, l.Out, l.In, 1, x, w, beta, y, l.Out)
	if act == Tanh {
		act.apply(y)
	}
}

// backwardHalf is backward on the bfloat16 copies made by the forward pass
// (x [rows, In], w [In, Out]) and dh, dy [rows, Out] rounded: ∂L/∂W +=
// xᵀ·dy and ∂L/∂x = dy·Wᵀ with each operand rounded once. The bias gradient
// is the caller's (MLP computes it while rounding dy).
func (l *Linear) backwardHalf(x, w, dh []uint16, rows int, dx []float32, params bool) {
	if params {
		blas.GemmBF16(true, false, l.In, l.Out, rows, 1, x, dh, 1, l.W.Grad, l.Out)
	}
	if dx != nil {
		blas.GemmBF16(false, true, rows, l.In, l.Out, 1, dh, w, 0, dx, l.In)
	}
}

// Backward takes dy = ∂L/∂y [rows, Out] and the forward input x [rows, In].
// When params is true it accumulates ∂L/∂W += xᵀ·dy and ∂L/∂b += Σ_rows dy.
// When dx is non-nil it writes ∂L/∂x = dy·Wᵀ into dx [rows, In].
func (l *Linear) Backward(x, dy []float32, rows int, dx []float32, params bool) {
	l.backward(x, dy, rows, dx, params, true)
}

// backward is Backward; with bias false it leaves ∂L/∂b to the caller (MLP
// folds it into the activation's backward pass).
func (l *Linear) backward(x, dy []float32, rows int, dx []float32, params, bias bool) {
	if params {
		blas.MatMul(true, false, l.In, l.Out, rows, x, dy, l.W.Grad, true)
		if bias && l.B != nil {
			colSumAdd(dy, rows, l.Out, l.B.Grad)
		}
	}
	if dx != nil {
		blas.MatMul(false, true, rows, l.In, l.Out, dy, l.W.Data, dx, false)
	}
}

// colSumAdd adds the column sums of m [rows, cols] to out [cols].
func colSumAdd(m []float32, rows, cols int, out []float32) {
	out = out[:cols]
	for r := 0; r < rows; r++ {
		row := m[r*cols : (r+1)*cols]
		n := 0
		if useAVX2 {
			n = addToAVX2(out, row)
		}
		for j := n; j < cols; j++ {
			out[j] += row[j]
		}
	}
}
