// Package nn is koopq's small neural-network engine: float32 row-major
// matrices (rows are samples), Linear layers, MLPs with ReLU or tanh, a
// tanh-Gaussian policy head, losses (MSE, Huber, logsumexp), Adam, Xavier and
// orthogonal initialization, and safetensors checkpoints.
//
// Backward passes are written by hand, one per op, and every op and network is
// covered by a finite-difference gradient test. Gradients are available with
// respect to parameters and to inputs (the actor loss needs ∂Q/∂a, S4RL-Adv
// needs ∂Q/∂s). All GEMMs go through internal/blas. Forward and backward reuse
// per-network workspaces, so a steady-state training step does not allocate.
//
// nn knows nothing about reinforcement learning.
package nn

import (
	"fmt"
	"math"
)

// Param is one trainable tensor and its gradient accumulator, both row-major
// float32 with the same number of elements.
type Param struct {
	Name  string    // unique within a network, e.g. "l0.weight"
	Shape []int     // e.g. [in, out] for a weight, [out] for a bias
	Data  []float32 // values
	Grad  []float32 // ∂loss/∂Data, accumulated by Backward until ZeroGrad
}

// NewParam allocates a zero parameter of the given shape.
func NewParam(name string, shape ...int) *Param {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return &Param{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, n), Grad: make([]float32, n)}
}

// ZeroGrad clears the gradients of ps.
func ZeroGrad(ps []*Param) {
	for _, p := range ps {
		clear(p.Grad)
	}
}

// CopyParams copies the values of src into dst (same layout), e.g. to
// initialize a target network.
func CopyParams(dst, src []*Param) {
	mustMatch(dst, src)
	for i := range dst {
		copy(dst[i].Data, src[i].Data)
	}
}

// Polyak moves dst toward src: dst ← (1−tau)·dst + tau·src (soft target update).
func Polyak(dst, src []*Param, tau float32) {
	mustMatch(dst, src)
	for i := range dst {
		d, s := dst[i].Data, src[i].Data
		s = s[:len(d)]
		n := 0
		if useAVX2 {
			n = polyakAVX2(d, s, tau) // the loop below, 8 at a time
		}
		for j := n; j < len(d); j++ {
			d[j] += tau * (s[j] - d[j])
		}
	}
}

func mustMatch(a, b []*Param) {
	if len(a) != len(b) {
		panic(fmt.Sprintf("nn: parameter lists differ in length: %d vs %d", len(a), len(b)))
	}
	for i := range a {
		if len(a[i].Data) != len(b[i].Data) {
			panic(fmt.Sprintf("nn: parameter %s has %d values, %s has %d", a[i].Name, len(a[i].Data), b[i].Name, len(b[i].Data)))
		}
	}
}

// NumParams counts the scalar parameters in ps.
func NumParams(ps []*Param) int {
	n := 0
	for _, p := range ps {
		n += len(p.Data)
	}
	return n
}

// CheckFinite returns an error naming the first parameter holding NaN or Inf.
func CheckFinite(ps []*Param) error {
	for _, p := range ps {
		for i, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("nn: parameter %s[%d] is %v", p.Name, i, v)
			}
		}
	}
	return nil
}

// grow returns buf resliced to n elements, reallocating only when its
// capacity is too small (workspaces reach steady state after the first step).
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// growH is grow for bfloat16 buffers.
func growH(buf []uint16, n int) []uint16 {
	if cap(buf) < n {
		return make([]uint16, n)
	}
	return buf[:n]
}
