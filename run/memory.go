package run

import (
	"fmt"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/memcheck"
)

// mlpParams is the parameter count of a fully connected network in →
// widths… → out (weights and biases), as a float64 so that huge widths
// cannot wrap.
func mlpParams(in int, widths []int, out int) float64 {
	p, prev := 0.0, float64(in)
	for _, w := range append(append([]int(nil), widths...), out) {
		p += (prev + 1) * float64(w)
		prev = float64(w)
	}
	return p
}

func sumWidths(ws []int) float64 {
	s := 0.0
	for _, w := range ws {
		s += float64(w)
	}
	return s
}

// MemoryEstimate is a rough upper estimate in bytes of what training cfg
// on obsDim/actDim data allocates besides the dataset: the actor and both
// critics with gradients and Adam moments (4 copies each) plus the target
// critics; the critics' activations on the CQL batch of batch·(1 + 3·
// num_actions) rows (forward and backward); a Koopman model trained for
// the run; the evaluation's per-episode results.
func (c TrainConfig) MemoryEstimate(obsDim, actDim int) float64 {
	S, A := obsDim, actDim
	h := c.CQL.Net.Hidden
	q1, q2 := h, h
	if len(c.CQL.Q1Hidden) > 0 {
		q1 = c.CQL.Q1Hidden
	}
	if len(c.CQL.Q2Hidden) > 0 {
		q2 = c.CQL.Q2Hidden
	}
	actor, c1, c2 := mlpParams(S, h, 2*A), mlpParams(S+A, q1, 1), mlpParams(S+A, q2, 1)
	params := 4*(actor+c1+c2) + c1 + c2
	rows := float64(c.CQL.Batch) * (2 + 3*float64(max(c.CQL.NumActions, 1)))
	acts := 4 * rows * (float64(S+A) + sumWidths(q1) + sumWidths(q2) + 2)
	acts += 4 * 2 * float64(c.CQL.Batch) * (float64(S) + sumWidths(h) + float64(2*A))
	koop := 0.0
	if c.KoopmanModel == "" && augment.NeedsKoopman(c.Augment) {
		kh, n := c.KoopmanHidden, float64(c.KoopmanLatent)
		if len(kh) == 0 {
			kh = []int{512, 512}
		}
		if n == 0 {
			n = 32
		}
		kp := mlpParams(S, kh, int(min(n, 1<<30))) + mlpParams(int(min(n, 1<<30)), kh, S) + float64(A+1)*n*n
		koop = 4*4*kp + 4*4*float64(c.KoopmanTrain.Batch)*(2*sumWidths(kh)+2*n+float64(2*S))
	}
	eval := 16 * float64(c.EvalEpisodes)
	return 4*params + acts + koop + eval
}

// checkSize refuses settings that cannot fit in memory, and a minibatch
// larger than the dataset (--batch 1000000000 hung: every step samples far
// more rows than the data has).
func (c TrainConfig) checkSize(obsDim, actDim, transitions int) error {
	if c.CQL.Batch > transitions {
		return fmt.Errorf("--batch (cql.batch) %d is larger than the dataset's %d transitions", c.CQL.Batch, transitions)
	}
	return memcheck.Check(fmt.Sprintf("training with --hidden %v, --batch %d, --num-actions %d, --eval-episodes %d",
		c.CQL.Net.Hidden, c.CQL.Batch, c.CQL.NumActions, c.EvalEpisodes), c.MemoryEstimate(obsDim, actDim))
}

// CheckCollectMemory refuses a collection whose rows transitions of env
// envName (replay buffer with qpos/qvel, then the dataset's own arrays)
// cannot fit in memory; what names the flags in the error.
// (--transitions 9223372036854775807 was a makeslice panic, 1e12 a fatal
// out-of-memory dump.)
func CheckCollectMemory(what, envName string, rows float64) error {
	e, err := env.Make(envName)
	if err != nil {
		return err
	}
	S, A := float64(e.ObservationSpace().Dim()), float64(e.ActionSpace().Dim())
	// float32 s, s', a, r, terminal, timeout, log-prob and about 2S of
	// qpos/qvel per row, held twice (buffer, then the written arrays).
	return memcheck.Check(what, 2*4*(4*S+A+4)*rows)
}
