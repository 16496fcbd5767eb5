//go:build !cgo || nomujoco

package manip

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

// Task returns the zero Task in this build.
func (e *Env) Task() Task { return Task{} }

// ObservationSpace returns an empty space in this build.
func (e *Env) ObservationSpace() env.Space { return env.Space{} }

// ActionSpace returns an empty space in this build.
func (e *Env) ActionSpace() env.Space { return env.Space{} }

// MaxEpisodeSteps is 500.
func (e *Env) MaxEpisodeSteps() int { return MaxEpisodeSteps }

// Goal returns zeros in this build.
func (e *Env) Goal() [3]float64 { return [3]float64{} }

// ObjInit returns zeros in this build.
func (e *Env) ObjInit() [3]float64 { return [3]float64{} }

// Success returns false in this build.
func (e *Env) Success() bool { return false }

// ElapsedSteps returns 0 in this build.
func (e *Env) ElapsedSteps() int { return 0 }

// Dt returns 0 in this build.
func (e *Env) Dt() float64 { return 0 }

// MocapPos returns zeros in this build.
func (e *Env) MocapPos() [3]float64 { return [3]float64{} }

// HandPos returns zeros in this build.
func (e *Env) HandPos() [3]float64 { return [3]float64{} }

// PuckPos returns zeros in this build.
func (e *Env) PuckPos() [3]float64 { return [3]float64{} }

// ObjPos returns zeros in this build.
func (e *Env) ObjPos() [3]float64 { return [3]float64{} }

// TCP returns zeros in this build.
func (e *Env) TCP() [3]float64 { return [3]float64{} }

// QPos returns nil in this build.
func (e *Env) QPos() []float64 { return nil }

// Reset returns nil in this build.
func (e *Env) Reset(rng *rand.Rand) []float64 { return nil }

// ResetTo fails with ErrNoMuJoCo in this build.
func (e *Env) ResetTo(obj, goal [3]float64) ([]float64, error) { return nil, ErrNoMuJoCo }

// Step fails with ErrNoMuJoCo in this build.
func (e *Env) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	return nil, 0, false, false, ErrNoMuJoCo
}

// State returns nil in this build.
func (e *Env) State() []float64 { return nil }

// SetState fails with ErrNoMuJoCo in this build.
func (e *Env) SetState(state []float64) error { return ErrNoMuJoCo }
