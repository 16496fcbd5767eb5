package augment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
)

// Adversarial is S4RL-Adv (Sinha et al. 2021): s̃_t = s_t + ε·d(∂Q/∂s),
// with ∂Q/∂s = ∂ min(Q1, Q2)(s_t, a_t)/∂s at the dataset action (the
// QGradient callback CQL passes), and s̃_{t+1} = s_{t+1} (the S4RL code
// perturbs s only). d is chosen by Mode:
//
//   - "l2" (default): the per-sample L2-normalized gradient, so every state
//     moves by exactly ε = 1e-4 — the "fixed magnitude of 1e-4" the KFC paper
//     quotes for S4RL-Adv (appendix "Magnitude of KFC augmentation").
//   - "sign": sign(∂Q/∂s) (FGSM, L∞ step ε).
//   - "raw": the raw gradient, as the GTA reimplementation does (which also
//     divides by the batch size because it differentiates the batch mean;
//     fold that into Eps if wanted).
//
// The step ascends Q, as in those implementations. It is applied to every
// batch. The S4RL paper's averaging over N augmented copies is not done
// here (one copy per batch, like the KFC authors' S4RL-N baseline).
type Adversarial struct {
	Eps  float64 // step size ε in state units, default 1e-4
	Mode string  // "l2", "sign" or "raw"
	grad []float32
}

// NewAdversarial builds S4RL-Adv from opts.AdvEps and opts.AdvMode.
func NewAdversarial(opts Options) (*Adversarial, error) {
	switch opts.AdvMode {
	case "l2", "sign", "raw":
	case "":
		opts.AdvMode = "l2"
	default:
		return nil, fmt.Errorf("augment s4rl-adv: mode %q (want l2, sign or raw)", opts.AdvMode)
	}
	if !(opts.AdvEps >= 0) || math.IsInf(opts.AdvEps, 0) {
		return nil, fmt.Errorf("augment s4rl-adv: eps %v must be finite and >= 0", opts.AdvEps)
	}
	return &Adversarial{Eps: opts.AdvEps, Mode: opts.AdvMode}, nil
}

// Name implements Augmenter.
func (*Adversarial) Name() string { return "s4rl-adv" }

// Augment implements Augmenter; it needs q.
func (a *Adversarial) Augment(b *dataset.Batch, obs, next []float32, _ *rand.Rand, q QGradient) error {
	if q == nil {
		return fmt.Errorf("augment s4rl-adv: needs the critic's state gradient (QGradient), got nil")
	}
	B, S := b.B, b.ObsDim
	if cap(a.grad) < B*S {
		a.grad = make([]float32, B*S)
	}
	g := a.grad[:B*S]
	q(b.Obs[:B*S], b.Act[:B*b.ActDim], B, g)
	eps := float32(a.Eps)
	for i := 0; i < B; i++ {
		gi, si, oi := g[i*S:(i+1)*S], b.Obs[i*S:(i+1)*S], obs[i*S:(i+1)*S]
		switch a.Mode {
		case "sign":
			for j, v := range gi {
				switch {
				case v > 0:
					oi[j] = si[j] + eps
				case v < 0:
					oi[j] = si[j] - eps
				default:
					oi[j] = si[j]
				}
			}
		case "raw":
			for j, v := range gi {
				oi[j] = si[j] + eps*v
			}
		default:
			n := 0.0
			for _, v := range gi {
				n += float64(v) * float64(v)
			}
			f := float32(0)
			if n > 0 && !math.IsInf(n, 0) {
				f = eps / float32(math.Sqrt(n))
			}
			for j, v := range gi {
				oi[j] = si[j] + f*v
			}
		}
	}
	copy(next[:B*S], b.NextObs[:B*S])
	return nil
}
