//go:build !cgo || nomujoco

package panda

import (
	"math/rand/v2"

	"github.com/koopq/koopq/env"
)

func init() {
	for _, name := range Names() {
		env.Register(name, func() (env.Env, error) { return nil, ErrNoMuJoCo })
	}
}

// Env is a placeholder in builds without MuJoCo so that code using the
// concrete type compiles everywhere; New never returns one.
type Env struct{}

var _ env.Env = (*Env)(nil)

// New always fails with ErrNoMuJoCo in this build.
func New(name string) (*Env, error) { return nil, ErrNoMuJoCo }

// Close does nothing in this build.
func (e *Env) Close() {}

// Name returns "" in this build.
func (e *Env) Name() string { return "" }

// ObservationSpace returns an empty space in this build.
func (e *Env) ObservationSpace() env.Space { return env.Space{} }

// ActionSpace returns an empty space in this build.
func (e *Env) ActionSpace() env.Space { return env.Space{} }

// MaxEpisodeSteps is 500.
func (e *Env) MaxEpisodeSteps() int { return MaxEpisodeSteps }

// Dt returns 0 in this build.
func (e *Env) Dt() float64 { return 0 }

// Success returns false in this build.
func (e *Env) Success() bool { return false }

// ElapsedSteps returns 0 in this build.
func (e *Env) ElapsedSteps() int { return 0 }

// EEFPos returns zeros in this build.
func (e *Env) EEFPos() [3]float64 { return [3]float64{} }

// EEFRot returns zeros in this build.
func (e *Env) EEFRot() [9]float64 { return [9]float64{} }

// CubePos returns zeros in this build.
func (e *Env) CubePos() [3]float64 { return [3]float64{} }

// GoalPos returns zeros in this build.
func (e *Env) GoalPos() [3]float64 { return [3]float64{} }

// QPos returns nil in this build.
func (e *Env) QPos() []float64 { return nil }

// Grasped returns false in this build.
func (e *Env) Grasped() bool { return false }

// Reset returns nil in this build.
func (e *Env) Reset(rng *rand.Rand) []float64 { return nil }

// ResetTo fails with ErrNoMuJoCo in this build.
func (e *Env) ResetTo(q [7]float64, cube [3]float64, quat [4]float64) ([]float64, error) {
	return nil, ErrNoMuJoCo
}

// Step fails with ErrNoMuJoCo in this build.
func (e *Env) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	return nil, 0, false, false, ErrNoMuJoCo
}

// State returns nil in this build.
func (e *Env) State() []float64 { return nil }

// SetState fails with ErrNoMuJoCo in this build.
func (e *Env) SetState(state []float64) error { return ErrNoMuJoCo }
