package cql

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
)

// recordingAug runs an augmenter and keeps a copy of what it returned.
type recordingAug struct {
	inner     StateShift
	obs, next [][]float32
	gotQ      bool // Step handed it a QGradient
}

func (r *recordingAug) Name() string { return r.inner.Name() }

func (r *recordingAug) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, q QGradient) error {
	if err := r.inner.Augment(b, obs, next, rng, q); err != nil {
		return err
	}
	r.gotQ = r.gotQ || q != nil
	n := b.B * b.ObsDim
	r.obs = append(r.obs, slices.Clone(obs[:n]))
	r.next = append(r.next, slices.Clone(next[:n]))
	return nil
}

// sameShiftOnEqualStates says, per augmenter, whether a transition with
// s_{t+1} = s_t must come out with s̃_{t+1} = s̃_t: true when one draw (σ and
// ε, or the latent δ) shifts both states, false when s_t and s_{t+1} get
// independent noise or s̃_{t+1} is a prediction. Every augment.Names() entry
// must be listed, so a new augmenter cannot skip the wiring test.
var sameShiftOnEqualStates = map[string]bool{
	"cql": true, "kfc": true, "kfc++": true, "kfc++-contact": true, "vae-noise": true,
	"gaussian": false, "s4rl-adv": false, "kfc++-prediction": false, "kfc++-latent-prediction": false, "fwd-prediction": false,
}

// wiringData is a small dataset whose even rows have s_{t+1} = s_t, with
// terminal rows, and an untrained Koopman model for it.
func wiringData(t *testing.T, S, A int) (*dataset.Dataset, *koopman.Model) {
	t.Helper()
	rng := rand.New(rand.NewPCG(8, 8))
	d := dataset.Synthetic(S, A, 64, rng)
	for i := 0; i < d.Len(); i++ {
		if i%2 == 0 {
			copy(d.NextObservations[i*S:(i+1)*S], d.Observations[i*S:(i+1)*S])
		}
		if i%5 == 3 {
			d.Terminals[i] = 1
		}
	}
	mc := koopman.DefaultModelConfig(S, A)
	mc.Hidden, mc.Latent, mc.Seed = []int{16}, 6, 3
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	return d, m
}

// For every augmenter: the critic's data rows are exactly [s̃_t, a_t] and
// its target rows [s̃_{t+1}, a'] with the augmenter's s̃ (after the state
// normalizer); the logsumexp rows, the actor (SAC step and BC warm-up) and
// the a' sample see the clean s_t, s_{t+1}; the whole update equals the
// independent reference fed with the recorded s̃, s̃'. Transitions with
// s_{t+1} = s_t check that the Koopman shifts move s_t and s_{t+1} with one
// draw (σ_{a_t} and ε).
func TestAugmenterWiring(t *testing.T) {
	const S, A = 3, 2
	d, model := wiringData(t, S, A)
	for _, name := range augment.Names() {
		t.Run(name, func(t *testing.T) {
			same, listed := sameShiftOnEqualStates[name]
			if !listed {
				t.Fatalf("augmenter %q is not classified in sameShiftOnEqualStates", name)
			}
			o := augment.DefaultOptions()
			o.Dataset, o.Model, o.KoopmanProb, o.ShiftSigma, o.ContactDims = d, model, 1, 30, []int{1}
			o.LatentSigma, o.AdvEps = 0.05, 0.05
			inner, err := augment.New(name, o)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingAug{inner: inner}
			cfg := DefaultConfig()
			cfg.Net.Hidden, cfg.Batch, cfg.NumActions, cfg.BCSteps = []int{16, 16}, 12, 3, 1
			norm := &dataset.Normalizer{Mean: []float32{0.1, -0.3, 0.2}, Std: []float32{1.5, 0.7, 2}}
			rng := rand.New(rand.NewPCG(2, 7))
			l := NewLearner(cfg, S, A, norm, rng)
			ref := newRef(l)
			var noise refNoise
			l.noiseHook = func(n *stepNoise) {
				noise = refNoise{pi: slices.Clone(n.pi), next: slices.Clone(n.next), ood: slices.Clone(n.ood), unif: slices.Clone(n.unif)}
			}
			sampler := dataset.NewSampler(d, rng)
			normed := func(x []float32) []float32 { y := slices.Clone(x); norm.Apply(y); return y }
			B, N, W := cfg.Batch, cfg.NumActions, S+A
			for st := 0; st < 2; st++ { // a BC step, then a SAC step
				b := dataset.NewBatch(B, S, A)
				sampler.Sample(b)
				// The actor's outputs at clean s_t and s_{t+1} before the update.
				var c nn.Cache
				wantS := slices.Clone(l.Actor.Forward(&c, normed(b.Obs), B))
				wantN := slices.Clone(l.Actor.Forward(&c, normed(b.NextObs), B))
				if _, err := l.Step(b, rec, rng); err != nil {
					t.Fatal(err)
				}
				w := &l.ws
				obsAug, nextAug := normed(rec.obs[st]), normed(rec.next[st])
				clean := normed(b.Obs)
				for i := 0; i < B; i++ {
					if !slices.Equal(w.xBig[i*W:i*W+S], obsAug[i*S:(i+1)*S]) || !slices.Equal(w.xBig[i*W+S:(i+1)*W], b.Act[i*A:(i+1)*A]) {
						t.Fatalf("step %d: critic data row %d is %v, want [s̃_t, a_t] = %v, %v", st+1, i, w.xBig[i*W:(i+1)*W], obsAug[i*S:(i+1)*S], b.Act[i*A:(i+1)*A])
					}
					if !slices.Equal(w.saNext[i*W:i*W+S], nextAug[i*S:(i+1)*S]) {
						t.Fatalf("step %d: target row %d state is %v, want s̃_{t+1} = %v", st+1, i, w.saNext[i*W:i*W+S], nextAug[i*S:(i+1)*S])
					}
				}
				for r := B; r < B*(1+3*N); r++ {
					i := (r - B) % (B * N) / N // the state a logsumexp row belongs to
					if !slices.Equal(w.xBig[r*W:r*W+S], clean[i*S:(i+1)*S]) {
						t.Fatalf("step %d: logsumexp row %d state is %v, want clean s_%d = %v", st+1, r, w.xBig[r*W:r*W+S], i, clean[i*S:(i+1)*S])
					}
				}
				if !slices.Equal(w.cS.Output()[:B*2*A], wantS) || !slices.Equal(w.cN.Output()[:B*2*A], wantN) {
					t.Fatalf("step %d: the actor did not run on the clean s_t and s_{t+1}", st+1)
				}
				ref.step(b, rec.obs[st], rec.next[st], noise)
			}
			compareTensors(t, "after 2 steps:", l.Actor.Params(), ref.actor.params(), false, refParamTol)
			for k := 0; k < 2; k++ {
				compareTensors(t, "after 2 steps:", l.Q[k].Params(), ref.q[k].params(), false, refParamTol)
				compareTensors(t, "after 2 steps: target", l.QT[k].Params(), ref.qt[k].params(), false, refParamTol)
			}
			if name == "s4rl-adv" && !rec.gotQ {
				t.Error("s4rl-adv was not given the critic's state gradient")
			}

			// s_{t+1} = s_t rows.
			var equal, moved int
			chk := dataset.NewBatch(B, S, A)
			for i := range chk.Idx {
				j := 2 * i // even dataset rows
				chk.Idx[i] = j
				copy(chk.Obs[i*S:(i+1)*S], d.Observations[j*S:(j+1)*S])
				copy(chk.NextObs[i*S:(i+1)*S], d.NextObservations[j*S:(j+1)*S])
				copy(chk.Act[i*A:(i+1)*A], d.Actions[j*A:(j+1)*A])
			}
			obs, next := make([]float32, B*S), make([]float32, B*S)
			if err := inner.Augment(chk, obs, next, rng, l.stateGradient); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < B*S; i++ {
				if obs[i] == next[i] {
					equal++
				}
				if obs[i] != chk.Obs[i] {
					moved++
				}
			}
			if same && equal != B*S {
				t.Errorf("s_{t+1} = s_t but s̃_{t+1} ≠ s̃_t in %d of %d entries: s_t and s_{t+1} were not shifted by the same draw", B*S-equal, B*S)
			}
			if !same && equal == B*S {
				t.Errorf("s_{t+1} = s_t gave s̃_{t+1} = s̃_t everywhere; %s should shift them differently", name)
			}
			if name != "cql" && moved == 0 {
				t.Errorf("%s left every state unchanged", name)
			}
		})
	}
}
