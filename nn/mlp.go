package nn

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/koopq/koopq/internal/blas"
)

// MLP is a stack of Linear layers with Hidden applied after every layer but
// the last and Output applied after the last. Sizes are [in, h1, ..., out].
type MLP struct {
	Sizes  []int
	Layers []*Linear
	Hidden Activation
	Output Activation
}

// NewMLP builds an MLP with Xavier-uniform weights and zero biases.
// sizes = [in, hidden..., out]; name prefixes parameter names.
func NewMLP(name string, sizes []int, hidden, output Activation, rng *rand.Rand) *MLP {
	if len(sizes) < 2 {
		panic("nn: MLP needs at least input and output sizes")
	}
	m := &MLP{Sizes: append([]int(nil), sizes...), Hidden: hidden, Output: output}
	for i := 0; i+1 < len(sizes); i++ {
		m.Layers = append(m.Layers, NewLinear(fmt.Sprintf("%s.l%d", name, i), sizes[i], sizes[i+1], true, rng))
	}
	return m
}

// In and Out are the input and output widths.
func (m *MLP) In() int  { return m.Sizes[0] }
func (m *MLP) Out() int { return m.Sizes[len(m.Sizes)-1] }

// Params lists every layer's parameters in order.
func (m *MLP) Params() []*Param {
	var ps []*Param
	for _, l := range m.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// FLOPs returns the multiply-add FLOPs (2 per MAC) of one forward pass for
// one row; a backward pass with parameter and input gradients costs twice that.
func (m *MLP) FLOPs() int {
	f := 0
	for _, l := range m.Layers {
		f += 2 * l.In * l.Out
	}
	return f
}

func (m *MLP) act(i int) Activation {
	if i == len(m.Layers)-1 {
		return m.Output
	}
	return m.Hidden
}

// Cache holds one forward pass's activations so Backward can run, plus
// scratch space. Keep one Cache per concurrent use of a network; it grows to
// the largest batch seen and is reused without allocation afterwards.
type Cache struct {
	rows int
	x    []float32   // the input of the last Forward (not copied)
	outs [][]float32 // outs[i]: [rows, Sizes[i+1]] after activation
	d0   []float32   // scratch gradients
	d1   []float32

	// Under bf16 GEMM precision (blas.BF16) Forward rounds every layer's
	// input and weights to bfloat16 once and keeps them, so Backward's
	// weight and input gradients reuse them instead of rounding the same
	// values again inside each GEMM; dh is the rounded ∂L/∂y of the layer
	// being back-propagated, shared by its two GEMMs.
	half bool       // the last Forward ran in bf16
	xh   [][]uint16 // xh[i]: layer i's input [rows, Sizes[i]], rounded
	wh   [][]uint16 // wh[i]: layer i's weights [Sizes[i], Sizes[i+1]], rounded
	dh   []uint16
}

var roundOnce atomic.Bool

func init() { roundOnce.Store(true) }

// SetRoundOnce turns MLP's bf16 operand reuse (Cache's rounded copies, see
// Cache) on (the default) or off, for A/B measurements: off, every GEMM
// rounds its f32 inputs itself, as blas.Gemm does. The numbers are the same
// either way; only the time differs.
func SetRoundOnce(on bool) { roundOnce.Store(on) }

// Forward runs x: [rows, In] through the network and returns the output
// [rows, Out], which lives in c until the next Forward with c.
func (m *MLP) Forward(c *Cache, x []float32, rows int) []float32 {
	if len(x) < rows*m.In() {
		panic(fmt.Sprintf("nn: MLP forward: len(x)=%d < rows %d × in %d", len(x), rows, m.In()))
	}
	if len(c.outs) != len(m.Layers) {
		c.outs = make([][]float32, len(m.Layers))
	}
	c.rows, c.x = rows, x
	c.half = roundOnce.Load() && blas.CurrentPrecision() == blas.BF16
	if c.half && len(c.xh) != len(m.Layers) {
		c.xh, c.wh = make([][]uint16, len(m.Layers)), make([][]uint16, len(m.Layers))
	}
	in := x
	for i, l := range m.Layers {
		c.outs[i] = grow(c.outs[i], rows*l.Out)
		if c.half {
			// Layer i's rounded input was written by layer i−1's pass
			// (forwardHalf's yh), except the network's input.
			if i == 0 {
				c.xh[0] = growH(c.xh[0], rows*l.In)
				blas.ToBF16(c.xh[0], in[:rows*l.In])
			}
			c.wh[i] = growH(c.wh[i], l.In*l.Out)
			blas.ToBF16(c.wh[i], l.W.Data)
			var yh []uint16
			if i+1 < len(m.Layers) {
				c.xh[i+1] = growH(c.xh[i+1], rows*l.Out)
				yh = c.xh[i+1]
			}
			l.forwardHalf(c.xh[i], c.wh[i], rows, c.outs[i], m.act(i), yh)
		} else if !l.forwardFused(in, rows, c.outs[i], m.act(i)) {
			l.Forward(in, rows, c.outs[i])
			m.act(i).apply(c.outs[i])
		}
		in = c.outs[i]
	}
	return in
}

// Backward back-propagates dy = ∂L/∂out [rows, Out] through the last
// Forward made with c. With params it accumulates parameter gradients; with
// dx non-nil it writes ∂L/∂x [rows, In]. dy is not modified.
func (m *MLP) Backward(c *Cache, dy []float32, dx []float32, params bool) {
	rows := c.rows
	n := len(m.Layers)
	widest := 0
	for _, s := range m.Sizes {
		widest = max(widest, s)
	}
	// Both scratch buffers hold the widest layer, so swapping them between
	// layers never forces a reallocation.
	c.d0, c.d1 = grow(c.d0, rows*widest), grow(c.d1, rows*widest)
	d := c.d0[:rows*m.Out()]
	copy(d, dy[:rows*m.Out()])
	for i := n - 1; i >= 0; i-- {
		l := m.Layers[i]
		biasDone := params && l.B != nil
		if c.half {
			// Activation backward, bias gradient and rounding of d in one
			// pass where blas has it (ReLU, identity; d itself is then left
			// as it was: only its rounded copy is read afterwards).
			var bias []float32
			if biasDone {
				bias = l.B.Grad
			}
			c.dh = growH(c.dh, rows*l.Out)
			if act := m.act(i); act == Tanh {
				if biasDone {
					act.backwardBiasGrad(c.outs[i], d, rows, l.Out, bias)
				} else {
					act.backward(c.outs[i], d)
				}
				blas.ToBF16(c.dh, d)
			} else {
				blas.GradToBF16(c.outs[i], d, c.dh, rows, l.Out, act == ReLU, bias)
			}
		} else if biasDone {
			m.act(i).backwardBiasGrad(c.outs[i], d, rows, l.Out, l.B.Grad)
		} else {
			m.act(i).backward(c.outs[i], d)
		}
		in := c.x
		if i > 0 {
			in = c.outs[i-1]
		}
		var next []float32
		switch {
		case i > 0:
			next = c.d1[:rows*l.In]
		case dx != nil:
			next = dx[:rows*l.In]
		}
		if c.half {
			l.backwardHalf(c.xh[i], c.wh[i], c.dh, rows, next, params)
		} else {
			l.backward(in, d, rows, next, params, !biasDone)
		}
		if i > 0 {
			c.d0, c.d1 = c.d1, c.d0
			d = next
		}
	}
}

// Output returns the output of the last Forward made with c.
func (c *Cache) Output() []float32 { return c.outs[len(c.outs)-1] }

// ShareData returns an MLP with the same architecture whose parameters share
// m's Data slices but have their own zeroed Grad buffers. Two goroutines can
// then back-propagate different rows through m and the twin at the same
// time without racing on gradients; the caller adds the twin's gradients
// into m's (AddGrads) afterwards.
func (m *MLP) ShareData() *MLP {
	twin := &MLP{Sizes: append([]int(nil), m.Sizes...), Hidden: m.Hidden, Output: m.Output}
	share := func(p *Param) *Param {
		if p == nil {
			return nil
		}
		return &Param{Name: p.Name, Shape: p.Shape, Data: p.Data, Grad: make([]float32, len(p.Grad))}
	}
	for _, l := range m.Layers {
		twin.Layers = append(twin.Layers, &Linear{In: l.In, Out: l.Out, W: share(l.W), B: share(l.B)})
	}
	return twin
}

// AddGrads adds src's gradients into dst's and zeroes src's (parameters
// matched by position; both lists must come from the same architecture).
func AddGrads(dst, src []*Param) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("nn: AddGrads: %d vs %d parameters", len(dst), len(src)))
	}
	for i, d := range dst {
		s := src[i]
		if len(d.Grad) != len(s.Grad) {
			panic(fmt.Sprintf("nn: AddGrads: %s has %d gradients, %s %d", d.Name, len(d.Grad), s.Name, len(s.Grad)))
		}
		n := 0
		if useAVX2 {
			n = addToAVX2(d.Grad, s.Grad)
		}
		for j := n; j < len(s.Grad); j++ {
			d.Grad[j] += s.Grad[j]
		}
		clear(s.Grad)
	}
}
