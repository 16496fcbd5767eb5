package koopman

import (
	"fmt"
	"math"
	"math/cmplx"
)

// CommutatorResidual returns the relative commutator residual
// ‖σK − Kσ‖_F / (‖σ‖_F ‖K‖_F) of two N×N row-major matrices: 0 for an exact
// symmetry generator of K, about machine precision times cond(U) for one built
// from a numerical eigenbasis. It returns 0 when either norm is 0.
func CommutatorResidual(sigma, k []float64, n int) float64 {
	if len(sigma) != n*n || len(k) != n*n {
		panic(fmt.Sprintf("koopman: CommutatorResidual: sigma %d, K %d entries, N %d", len(sigma), len(k), n))
	}
	ns, nk := frobenius(sigma), frobenius(k)
	if ns == 0 || nk == 0 {
		return 0
	}
	s := 0.0
	for i := range n {
		for j := range n {
			var c float64
			for l := range n {
				c += sigma[i*n+l]*k[l*n+j] - k[i*n+l]*sigma[l*n+j]
			}
			s += c * c
		}
	}
	return math.Sqrt(s) / (ns * nk)
}

// EigenResidual returns ‖K U − U Λ‖_F / ‖K‖_F for the N×N row-major real
// operator k and its complex eigendecomposition (unit-norm eigenvectors, so
// this is a relative backward error; ≈1e-15 for a healthy decomposition).
func (ce *ComplexEigen) EigenResidual(k []float64) float64 {
	n := ce.N
	s := 0.0
	for i := range n {
		for j := range n {
			var c complex128
			for l := range n {
				c += complex(k[i*n+l], 0) * ce.U[l*n+j]
			}
			c -= ce.U[i*n+j] * ce.Values[j]
			s += real(c)*real(c) + imag(c)*imag(c)
		}
	}
	if nk := frobenius(k); nk > 0 {
		return math.Sqrt(s) / nk
	}
	return math.Sqrt(s)
}

// InverseResidual returns max |(U U⁻¹ − I)_ij|, a check on U⁻¹.
func (ce *ComplexEigen) InverseResidual() float64 {
	n := ce.N
	worst := 0.0
	for i := range n {
		for j := range n {
			var c complex128
			for l := range n {
				c += ce.U[i*n+l] * ce.UInv[l*n+j]
			}
			if i == j {
				c--
			}
			worst = math.Max(worst, cmplx.Abs(c))
		}
	}
	return worst
}

// SymmetryDiagnostics summarizes how trustworthy the symmetry generators of
// one operator K(a) are.
type SymmetryDiagnostics struct {
	// Cond is cond₁ of the real eigenbasis (RealBasis.Cond).
	Cond float64
	// EigenResidual is ‖KU − UΛ‖_F/‖K‖_F.
	EigenResidual float64
	// InverseResidual is max|U U⁻¹ − I|.
	InverseResidual float64
	// CommKFCpp is the relative commutator residual of σ(ε) for the ε given
	// to Diagnose; CommKFC that of the KFC generator.
	CommKFCpp, CommKFC float64
	// Fallback and Reason copy the basis' fallback state.
	Fallback bool
	Reason   string
}

// Diagnose computes SymmetryDiagnostics for operator k ([N*N]) decomposed into
// rb, with a KFC++ draw eps ([N]). O(N³); meant for logging a sample of
// transitions, not for every one.
func Diagnose(rb *RealBasis, k, eps []float64) SymmetryDiagnostics {
	n := rb.N
	d := SymmetryDiagnostics{Cond: rb.Cond, Fallback: rb.Fallback, Reason: rb.Reason}
	if !rb.Fallback {
		ce := rb.Complex()
		d.EigenResidual = ce.EigenResidual(k)
		d.InverseResidual = ce.InverseResidual()
	}
	d.CommKFCpp = CommutatorResidual(rb.Sigma(nil, eps), k, n)
	g, _ := rb.KFCGenerator(nil)
	d.CommKFC = CommutatorResidual(g, k, n)
	return d
}
