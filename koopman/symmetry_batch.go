package koopman

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Shifter applies KFC / KFC++ symmetry shifts to batches of latent vectors,
// recomputing each transition's eigenbasis from its logged action on the fly.
//
// Why on the fly: the authors precompute and store U, U⁻¹ (complex64, 3×32×32,
// ~25 KB) per transition, ~25 GB for a million transitions. Here nothing is
// stored per transition; each item costs one N×N eigendecomposition
// (≈0.25 ms for N = 32) plus O(N²) per shifted vector, and items are spread
// over Workers goroutines. Results do not depend on Workers.
//
// A Shifter is not safe for concurrent use (it owns per-worker workspaces).
type Shifter struct {
	// N is the latent dimension, M the action dimension.
	N, M int
	// K0 ([N*N]) and Ks (M × [N*N]) define K(a) = K0 + Σ_i a_i Ks[i].
	K0 []float64
	Ks [][]float64
	// Config is passed to every Decomposer.
	Config SymmetryConfig
	// Workers is the number of goroutines per batch (≥ 1).
	Workers int

	ws []*shiftWorker
}

type shiftWorker struct {
	dec *Decomposer
	rb  *RealBasis
	k   []float64 // K(a) [N*N]
	gen []float64 // KFC generator [N*N]
	st  BatchStats
}

// BatchStats reports, for one batch, how many items used the scalar fallback
// generator (see RealBasis.Fallback) and the largest accepted-or-rejected
// eigenbasis condition number seen (+Inf if an inversion failed).
type BatchStats struct {
	Fallbacks int
	MaxCond   float64
}

// NewShifter returns a Shifter for operators K(a) = k0 + Σ a_i ks[i] (each
// [N*N] row-major). k0 and ks are retained, not copied. workers ≤ 0 means
// runtime.GOMAXPROCS(0).
func NewShifter(k0 []float64, ks [][]float64, n int, cfg SymmetryConfig, workers int) *Shifter {
	if len(k0) != n*n {
		panic(fmt.Sprintf("koopman: NewShifter: K0 has %d entries, want %d", len(k0), n*n))
	}
	for i, k := range ks {
		if len(k) != n*n {
			panic(fmt.Sprintf("koopman: NewShifter: Ks[%d] has %d entries, want %d", i, len(k), n*n))
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	s := &Shifter{N: n, M: len(ks), K0: k0, Ks: ks, Config: cfg, Workers: workers}
	for range workers {
		s.ws = append(s.ws, &shiftWorker{
			dec: NewDecomposer(n, cfg), rb: NewRealBasis(n),
			k: make([]float64, n*n), gen: make([]float64, n*n),
		})
	}
	return s
}

// ShiftKFCpp applies the KFC++ shift (paper Eq. symoptions) to a batch:
// dst[b,v,:] = (1 + σ_{a_b}(ε_b)) latents[b,v,:] with σ_a(ε) = Re(U(a) diag(ε) U(a)⁻¹).
//
// Shapes: actions [B, M]; latents and dst [B, V, N] with V = len(latents)/(B·N)
// vectors per transition sharing one σ (V = 2 for (E(s_t), E(s_{t+1})));
// eps [B, N], the same ε_b for all V vectors of transition b. dst may not
// alias latents.
func (s *Shifter) ShiftKFCpp(dst, latents, actions, eps []float64) BatchStats {
	b := s.batchSize(dst, latents, actions)
	if len(eps) != b*s.N {
		panic(fmt.Sprintf("koopman: ShiftKFCpp: eps has %d entries, want B·N = %d", len(eps), b*s.N))
	}
	n := s.N
	v := len(latents) / (b * n)
	return s.run(b, func(w *shiftWorker, i int) {
		e := eps[i*n : (i+1)*n]
		w.rb.prepareShift(e)
		for j := range v {
			off := (i*v + j) * n
			w.rb.applyPrepared(dst[off:off+n], latents[off:off+n], e)
			for r := off; r < off+n; r++ {
				dst[r] += latents[r]
			}
		}
	}, dst, latents, actions)
}

// ShiftKFC applies the KFC shift to a batch: dst[b,v,:] = (1 + ε_b G_{a_b})
// latents[b,v,:] with G the unit-Frobenius-norm generator of
// RealBasis.KFCGenerator and one scalar ε_b per transition. eps is [B]; other
// shapes as in ShiftKFCpp.
func (s *Shifter) ShiftKFC(dst, latents, actions, eps []float64) BatchStats {
	b := s.batchSize(dst, latents, actions)
	if len(eps) != b {
		panic(fmt.Sprintf("koopman: ShiftKFC: eps has %d entries, want B = %d", len(eps), b))
	}
	n := s.N
	return s.run(b, func(w *shiftWorker, i int) {
		gen, _ := w.rb.KFCGenerator(w.gen)
		v := len(latents) / (b * n)
		e := eps[i]
		for j := range v {
			off := (i*v + j) * n
			g := latents[off : off+n]
			out := dst[off : off+n]
			for r := range n {
				acc := 0.0
				for c, x := range gen[r*n : (r+1)*n] {
					acc += x * g[c]
				}
				out[r] = g[r] + e*acc
			}
		}
	}, dst, latents, actions)
}

func (s *Shifter) batchSize(dst, latents, actions []float64) int {
	if s.M == 0 || len(actions)%s.M != 0 {
		panic(fmt.Sprintf("koopman: Shifter: %d action entries for action dimension %d", len(actions), s.M))
	}
	b := len(actions) / s.M
	if b == 0 || len(latents)%(b*s.N) != 0 || len(dst) != len(latents) {
		panic(fmt.Sprintf("koopman: Shifter: latents %d, dst %d entries for B=%d, N=%d", len(latents), len(dst), b, s.N))
	}
	return b
}

// run decomposes K(a_i) for every item and calls apply, splitting items into
// contiguous chunks over the workers.
func (s *Shifter) run(b int, apply func(w *shiftWorker, i int), dst, latents, actions []float64) BatchStats {
	workers := min(s.Workers, b)
	chunk := (b + workers - 1) / workers
	var wg sync.WaitGroup
	for wi := range workers {
		lo, hi := wi*chunk, min((wi+1)*chunk, b)
		if lo >= hi {
			continue
		}
		w := s.ws[wi]
		w.st = BatchStats{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				OperatorAt(w.k, s.K0, s.Ks, actions[i*s.M:(i+1)*s.M])
				if !w.dec.Decompose(w.rb, w.k) {
					w.st.Fallbacks++
				}
				if !(w.rb.Cond <= w.st.MaxCond) {
					w.st.MaxCond = w.rb.Cond
				}
				apply(w, i)
			}
		}()
	}
	wg.Wait()
	var st BatchStats
	for wi := range workers {
		st.Fallbacks += s.ws[wi].st.Fallbacks
		st.MaxCond = math.Max(st.MaxCond, s.ws[wi].st.MaxCond)
	}
	return st
}
