package mujoco

import (
	"errors"

	mj "github.com/koopq/koopq/internal/mujoco"
)

// ErrBadState is wrapped by Step errors caused by a NaN, infinite or huge
// (>1e10) simulator state, which MuJoCo would otherwise silently reset.
var ErrBadState = mj.ErrBadState

// ErrNoMuJoCo is returned by New and the registered factories in a build
// without MuJoCo (-tags nomujoco or CGO_ENABLED=0).
var ErrNoMuJoCo = errors.New("koopq was built without MuJoCo: install libmujoco-dev and rebuild without -tags nomujoco (cgo must be enabled)")

// Options select variants of the environments. The zero value reproduces
// Gym v3 / D4RL v2 as recorded with mujoco-py.
type Options struct {
	ModelOptions
	// ContactForces runs mj_rnePostConstraint after every env step so the
	// Ant's cfrc_ext observations and contact cost are non-zero, as in
	// Gymnasium v4. Off (D4RL: all 84 entries are zero).
	ContactForces bool
}
