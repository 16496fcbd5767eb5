package panda

import (
	"errors"
	"math"
)

// OSC is RoboSuite's operational-space controller in its OSC_POSITION
// configuration for an n-joint arm: the end effector is driven toward a
// goal position with stiffness Kp and critical damping 2·sqrt(Kp), its
// orientation is held at a goal orientation with the same gains, the
// position and orientation forces are decoupled through their own
// operational-space inertias Λ_pos = (J_p M⁻¹ J_pᵀ)⁻¹ and Λ_ori, gravity and
// Coriolis forces are compensated, and the remaining redundancy is used by
// a nullspace posture controller (stiffness KpNull, damping 2·sqrt(KpNull))
// toward the episode's initial joints. Torques are
//
//	τ = J_pᵀ Λ_pos (Kp e_p − Kd J_p q̇) + J_rᵀ Λ_ori (Kp e_r − Kd J_r q̇) + bias
//	    + (I − J̄ J)ᵀ M (KpNull (q₀ − q) − KdNull q̇),   J̄ = M⁻¹ Jᵀ Λ,  Λ = (J M⁻¹ Jᵀ)⁻¹
//
// with e_r RoboSuite's orientation error ½ Σᵢ cᵢ × dᵢ over the columns of
// the current (c) and goal (d) rotation matrices. An OSC keeps its
// workspace between calls, so Torques does not allocate; it is not safe for
// concurrent use.
type OSC struct {
	n int
	// Kp is the stiffness; the damping is 2·sqrt(Kp).
	Kp float64
	// KpNull is the nullspace stiffness; its damping is 2·sqrt(KpNull).
	KpNull float64

	minv, jfull, tmp6n, lfull, lpos, lori, jbar, work []float64
	chol                                              []float64
}

// NewOSC returns a controller for n arm joints with RoboSuite's default
// gains (Kp, KpNull).
func NewOSC(n int) *OSC {
	return &OSC{n: n, Kp: Kp, KpNull: KpNull,
		minv: make([]float64, n*n), jfull: make([]float64, 6*n), tmp6n: make([]float64, 6*n),
		lfull: make([]float64, 36), lpos: make([]float64, 9), lori: make([]float64, 9),
		jbar: make([]float64, 6*n), work: make([]float64, 4*n+36),
		chol: make([]float64, n*n)}
}

// OSCInput is the state one control computation reads.
type OSCInput struct {
	// M is the arm's joint-space inertia, [n, n] row-major.
	M []float64
	// Jp and Jr are the end effector's translational and rotational
	// Jacobians restricted to the arm joints, [3, n] each.
	Jp, Jr []float64
	// Bias is the arm's gravity and Coriolis force, [n].
	Bias []float64
	// Q, QVel are the arm's joint positions and velocities, [n]; Q0 the
	// nullspace target, [n].
	Q, QVel, Q0 []float64
	// Pos and R are the end effector's position (m) and rotation matrix
	// (row-major, columns are its axes); GoalPos and GoalR the goal.
	Pos, GoalPos [3]float64
	R, GoalR     [9]float64
}

// ErrSingular reports a singular inertia matrix (no Cholesky factor).
var ErrSingular = errors.New("panda: OSC: singular matrix")

// Torques writes the arm torques (N·m) for in into tau, [n]. It fails when
// the shapes are wrong or the mass matrix is not positive definite.
func (c *OSC) Torques(in *OSCInput, tau []float64) error {
	n := c.n
	if len(in.M) != n*n || len(in.Jp) != 3*n || len(in.Jr) != 3*n || len(in.Bias) != n || len(in.Q) != n ||
		len(in.QVel) != n || len(in.Q0) != n || len(tau) != n {
		return errors.New("panda: OSC: input shapes do not match the arm's joint count")
	}
	if !spdInverse(in.M, n, c.minv, c.chol) {
		return ErrSingular
	}
	copy(c.jfull[:3*n], in.Jp)
	copy(c.jfull[3*n:], in.Jr)
	// Λ's: (J M⁻¹ Jᵀ)⁻¹ for the full 6 rows and the two 3-row blocks.
	matMul(c.jfull, 6, n, c.minv, n, c.tmp6n)   // tmp = J M⁻¹, [6, n]
	matMulT(c.tmp6n, 6, n, c.jfull, 6, c.lfull) // J M⁻¹ Jᵀ, [6, 6]
	var lp, lr [9]float64
	for i := range 3 {
		for j := range 3 {
			lp[3*i+j] = c.lfull[6*i+j]
			lr[3*i+j] = c.lfull[6*(i+3)+j+3]
		}
	}
	pinvSPD(c.lfull, 6, c.work[4*n:4*n+36])
	pinvSPD3(lp[:], c.lpos)
	pinvSPD3(lr[:], c.lori)

	kd := 2 * math.Sqrt(c.Kp)
	var vp, vr, f, trq, fd, td [3]float64
	for i := range 3 {
		for j := range n {
			vp[i] += in.Jp[i*n+j] * in.QVel[j]
			vr[i] += in.Jr[i*n+j] * in.QVel[j]
		}
	}
	er := orientationError(in.GoalR, in.R)
	for i := range 3 {
		f[i] = c.Kp*(in.GoalPos[i]-in.Pos[i]) - kd*vp[i]
		trq[i] = c.Kp*er[i] - kd*vr[i]
	}
	for i := range 3 {
		for j := range 3 {
			fd[i] += c.lpos[3*i+j] * f[j]
			td[i] += c.lori[3*i+j] * trq[j]
		}
	}
	for j := range n {
		s := in.Bias[j]
		for i := range 3 {
			s += in.Jp[i*n+j]*fd[i] + in.Jr[i*n+j]*td[i]
		}
		tau[j] = s
	}
	// Nullspace posture torques: (I − J̄ J)ᵀ M (kp (q0 − q) − kd q̇).
	// J̄ = M⁻¹ Jᵀ Λ = (Λ J M⁻¹)ᵀ since M⁻¹ and Λ are symmetric.
	matMul(c.lfull, 6, 6, c.tmp6n, n, c.jbar) // Λ J M⁻¹ = J̄ᵀ, [6, n]
	kdn := 2 * math.Sqrt(c.KpNull)
	acc, pose := c.work[:n], c.work[n:2*n]
	for j := range n {
		acc[j] = c.KpNull*(in.Q0[j]-in.Q[j]) - kdn*in.QVel[j]
	}
	for i := range n {
		s := 0.0
		for j := range n {
			s += in.M[i*n+j] * acc[j]
		}
		pose[i] = s
	}
	// (I − J̄ J)ᵀ p = p − Jᵀ (J̄ᵀ p).
	var jb [6]float64
	for k := range 6 {
		for i := range n {
			jb[k] += c.jbar[k*n+i] * pose[i]
		}
	}
	for j := range n {
		s := pose[j]
		for k := range 6 {
			s -= c.jfull[k*n+j] * jb[k]
		}
		tau[j] += s
	}
	return nil
}

// orientationError is RoboSuite's orientation_error(desired, current):
// ½ (c₁×d₁ + c₂×d₂ + c₃×d₃) over the matrices' columns, an axis-angle-like
// vector (radians for small errors) in world axes.
func orientationError(desired, current [9]float64) [3]float64 {
	var e [3]float64
	for k := range 3 {
		c := [3]float64{current[k], current[3+k], current[6+k]}
		d := [3]float64{desired[k], desired[3+k], desired[6+k]}
		e[0] += c[1]*d[2] - c[2]*d[1]
		e[1] += c[2]*d[0] - c[0]*d[2]
		e[2] += c[0]*d[1] - c[1]*d[0]
	}
	for i := range e {
		e[i] /= 2
	}
	return e
}

// matMul writes a[r, k] · b[k, c] into out[r, c] (c inferred from len(b)/k).
func matMul(a []float64, r, k int, b []float64, c int, out []float64) {
	for i := range r {
		for j := range c {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[l*c+j]
			}
			out[i*c+j] = s
		}
	}
}

// matMulT writes a[r, k] · b[c, k]ᵀ into out[r, c].
func matMulT(a []float64, r, k int, b []float64, c int, out []float64) {
	for i := range r {
		for j := range c {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[j*k+l]
			}
			out[i*c+j] = s
		}
	}
}

// spdInverse inverts the symmetric positive definite a [n, n] into out
// through a Cholesky factor held in l; false when a is not positive definite.
func spdInverse(a []float64, n int, out, l []float64) bool {
	for i := range n {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			if i == j {
				if s <= 0 || math.IsNaN(s) {
					return false
				}
				l[i*n+i] = math.Sqrt(s)
			} else {
				l[i*n+j] = s / l[j*n+j]
			}
		}
		for j := i + 1; j < n; j++ {
			l[i*n+j] = 0
		}
	}
	// Columns of the inverse: solve L Lᵀ x = e_c.
	for c := range n {
		for i := range n { // forward: L y = e_c, y stored in out[:, c]
			s := 0.0
			if i == c {
				s = 1
			}
			for k := range i {
				s -= l[i*n+k] * out[k*n+c]
			}
			out[i*n+c] = s / l[i*n+i]
		}
		for i := n - 1; i >= 0; i-- { // backward: Lᵀ x = y
			s := out[i*n+c]
			for k := i + 1; k < n; k++ {
				s -= l[k*n+i] * out[k*n+c]
			}
			out[i*n+c] = s / l[i*n+i]
		}
	}
	return true
}

// pinvSPD replaces the symmetric positive semi-definite a [n, n] (n <= 6)
// by its inverse, or, when it is singular, by the inverse of a + 1e-9·I
// (RoboSuite uses a pseudo-inverse; away from singular poses the two are
// equal). ws needs n*n entries of scratch.
func pinvSPD(a []float64, n int, ws []float64) {
	var buf [36]float64
	out := buf[:n*n]
	if !spdInverse(a, n, out, ws[:n*n]) {
		for i := range n {
			a[i*n+i] += 1e-9
		}
		if !spdInverse(a, n, out, ws[:n*n]) {
			clear(out)
		}
	}
	copy(a, out)
}

// pinvSPD3 writes the inverse of the symmetric 3×3 a into out (see pinvSPD).
func pinvSPD3(a, out []float64) {
	var ws [9]float64
	copy(out, a)
	pinvSPD(out, 3, ws[:])
}

// OutputMaxRot is OSC_POSE's orientation scale (radians): an action's
// rotation entries in [-1, 1] times OutputMaxRot give the axis-angle
// rotation of the goal orientation relative to the current one (RoboSuite's
// osc_pose.json output_max for the rotation, 0.5).
const OutputMaxRot = 0.5

// rotateBy returns the row-major rotation matrix exp([w]×)·r: r turned by
// the axis-angle vector w (radians, world axes), as RoboSuite's OSC_POSE
// sets its goal orientation from a delta and the current orientation.
func rotateBy(w [3]float64, r [9]float64) [9]float64 {
	th := math.Sqrt(w[0]*w[0] + w[1]*w[1] + w[2]*w[2])
	if th < 1e-12 {
		return r
	}
	k := [3]float64{w[0] / th, w[1] / th, w[2] / th}
	c, s := math.Cos(th), math.Sin(th)
	v := 1 - c
	q := [9]float64{
		c + k[0]*k[0]*v, k[0]*k[1]*v - k[2]*s, k[0]*k[2]*v + k[1]*s,
		k[1]*k[0]*v + k[2]*s, c + k[1]*k[1]*v, k[1]*k[2]*v - k[0]*s,
		k[2]*k[0]*v - k[1]*s, k[2]*k[1]*v + k[0]*s, c + k[2]*k[2]*v,
	}
	var out [9]float64
	matMul(q[:], 3, 3, r[:], 3, out[:])
	return out
}
