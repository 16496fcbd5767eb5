package cql

import (
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
)

// QGradient is the critic's state gradient that CQL hands to a StateShift:
// it writes ∂ min(Q1,Q2)(s, a)/∂s for rows of states s [rows, S] and actions
// a [rows, A] into grad [rows, S]. States are in raw (unnormalized) units.
//
// It is an alias of the unnamed func type, not a defined type, so that a
// shift declared in another package with its own alias of the same func
// type (augment.QGradient) has an Augment method of exactly StateShift's
// signature and satisfies StateShift without either package importing the
// other.
type QGradient = func(s, a []float32, rows int, grad []float32)

// StateShift is what CQL consumes of an augmenter (Step 3 of the paper, Eq.
// policystepKFC): the shifted states (s̃_t, s̃_{t+1}) of a batch, which the
// Bellman update trains on (see the package comment for where each is
// used). It is declared here, by the algorithm, rather than imported from
// package augment, so that cql depends on no plug-in (nor, through the
// Koopman augmenters, on package koopman); every augment.Augmenter is a
// StateShift, the two interfaces having the same methods.
type StateShift interface {
	// Name identifies the shift, e.g. "gaussian" (the --augment value);
	// NoShift's is "cql".
	Name() string
	// Augment writes the shifted s̃_t into obs [B, S] and the shifted
	// s̃_{t+1} into next [B, S] for the B transitions in b, in raw
	// (unnormalized) units. rng is the trainer's augmentation stream (its
	// own in the paired layout, so its draws never move the minibatches or
	// the policy noise). q is the critic's state gradient, for shifts that
	// need it (S4RL-Adv); shifts that do not ignore it. A non-nil error
	// aborts the update before any parameter changes.
	Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, q QGradient) error
}

// NoShift is plain CQL's identity shift, s̃ = s: the StateShift that Step,
// StepStreams and NewTrainer use when given nil. It makes the same copies
// as augment.None and draws nothing from rng.
type NoShift struct{}

// Name implements StateShift: "cql", the --augment value of plain CQL.
func (NoShift) Name() string { return "cql" }

// Augment implements StateShift by copying the batch's states unchanged.
func (NoShift) Augment(b *dataset.Batch, obs, next []float32, _ *rand.Rand, _ QGradient) error {
	copy(obs, b.Obs)
	copy(next, b.NextObs)
	return nil
}
