//go:build !cgo || nomujoco

package mujoco

import (
	"math/rand/v2"

	"github.com/koopq/koopq/env"
)

func init() {
	for _, name := range append(append(Names(), AntMazeNames()...), AntGoalName) {
		env.Register(name, func() (env.Env, error) { return nil, ErrNoMuJoCo })
	}
}

// Env is a placeholder in builds without MuJoCo so that code using the
// concrete type compiles everywhere; New never returns one.
type Env struct{}

var _ env.Env = (*Env)(nil)

// New always fails with ErrNoMuJoCo in this build.
func New(name string, opt Options) (*Env, error) { return nil, ErrNoMuJoCo }

// Close does nothing in this build.
func (e *Env) Close() {}

// Name returns "" in this build.
func (e *Env) Name() string { return "" }

// ObservationSpace returns an empty space in this build.
func (e *Env) ObservationSpace() env.Space { return env.Space{} }

// ActionSpace returns an empty space in this build.
func (e *Env) ActionSpace() env.Space { return env.Space{} }

// MaxEpisodeSteps is 1000.
func (e *Env) MaxEpisodeSteps() int { return MaxEpisodeSteps }

// Robot returns the zero Robot in this build.
func (e *Env) Robot() Robot { return Robot{} }

// Maze returns nil in this build.
func (e *Env) Maze() *Maze { return nil }

// Goal returns zeros in this build.
func (e *Env) Goal() (x, y float64) { return 0, 0 }

// SetGoal returns ErrNoMuJoCo.
func (e *Env) SetGoal(x, y float64) error { return ErrNoMuJoCo }

// Dt returns 0 in this build.
func (e *Env) Dt() float64 { return 0 }

// X returns 0 in this build.
func (e *Env) X() float64 { return 0 }

// ElapsedSteps returns 0 in this build.
func (e *Env) ElapsedSteps() int { return 0 }

// QPos returns nil in this build.
func (e *Env) QPos() []float64 { return nil }

// QVel returns nil in this build.
func (e *Env) QVel() []float64 { return nil }

// Reset returns nil in this build.
func (e *Env) Reset(rng *rand.Rand) []float64 { return nil }

// Step fails with ErrNoMuJoCo in this build.
func (e *Env) Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error) {
	return nil, 0, false, false, ErrNoMuJoCo
}

// State returns nil in this build.
func (e *Env) State() []float64 { return nil }

// SetState fails with ErrNoMuJoCo in this build.
func (e *Env) SetState(state []float64) error { return ErrNoMuJoCo }

// SetStateFromObservation fails with ErrNoMuJoCo in this build.
func (e *Env) SetStateFromObservation(obs []float64, x float64) error { return ErrNoMuJoCo }
