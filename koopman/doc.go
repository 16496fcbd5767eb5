// Package koopman holds the Koopman side of KFC / KFC++ (Weissenbacher et al.,
// "Koopman Q-learning: Offline Reinforcement Learning via Symmetries of
// Dynamics", ICML 2022): Step 1, the bilinear Koopman forward model
// E, K(a) = K0 + Σ_i a_i K_i, D (model*.go), and Step 2, symmetry generators σ
// that commute with K(a), with their diagnostics (symmetry*.go), plus the
// paper's CartPole translation-symmetry example (cartpole*.go).
//
// Linear algebra here is float64 and row-major; K(a) acts on column vectors,
// g' = K(a) g, as the authors' linear layers do.
//
// # Step 2 in one page
//
// For one transition with logged action a, Decomposer.Decompose computes the
// real eigenbasis of K(a) (RealBasis: P with Re/Im columns for conjugate
// pairs, P⁻¹, eigenvalues, cond₁(P)). From it:
//
//   - KFC++ (paper Eq. symoptions): σ_a(ε) = Re(U diag(ε) U⁻¹), ε ∈ R^N.
//     Because K is real this equals P diag(ε′) P⁻¹ with ε′ the conjugate-pair
//     average of ε, so RealBasis.Shift computes Δg = σ(ε) g in O(N²) and
//     RealBasis.Sigma forms σ when needed. The shifted latent is g + Δg, for
//     E(s_t) and E(s_{t+1}) with the same a and ε.
//   - KFC: one unit-Frobenius-norm generator G = U diag(c) U⁻¹ per transition
//     with c_j = |λ_j| − mean|λ| (RealBasis.KFCGenerator), shift g + εGg with a
//     scalar ε. This replaces the authors' ill-posed Sylvester solve
//     K X − X K = I (whose output commutes with K only through round-off and
//     is rescaled by its entry mean); see KFCCoefficients.
//   - Near-defective K(a) (singular or ill-conditioned eigenbasis,
//     cond₁(P) > SymmetryConfig.MaxCond, or a failed eigen iteration): the
//     scalar fallback σ(ε) = (Σε/√N)·I, which commutes with any K, is used and
//     reported (Decompose returns false; Shifter counts them in BatchStats).
//     The authors' code instead falls back to U = I, i.e. non-commuting
//     diagonal noise.
//   - Shifter does all of this for a batch on the fly, over goroutines,
//     storing nothing per transition (the authors store U and U⁻¹ per
//     transition: ~25 GB per million).
//   - Diagnostics: CommutatorResidual ‖[σ,K]‖_F/(‖σ‖_F‖K‖_F),
//     ComplexEigen.EigenResidual ‖KU − UΛ‖_F/‖K‖_F, RealBasis.Cond, Diagnose.
//
// # CartPole (paper Sec. 3.4, appendix "Global translation symmetry CartPole")
//
// CollectCartPole, FitCartPoleKoopman, TruncateSmall, TranslationGenerator and
// CheckCartPoleSymmetry reproduce the example: with g = s the fitted K(a) has
// an eigenvalue-1 mode with right eigenvector e_x, and its spectral projector,
// normalized to σ0[0,0] = −1, is the paper's σ0 (first row (−1, c1, c2, c3),
// zeros elsewhere). Applied to the paper's published matrices it returns the
// published c exactly. See `koopq symmetries cartpole`.
package koopman
