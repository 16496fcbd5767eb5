package panda

import "github.com/koopq/koopq/env/mujoco"

// ErrNoMuJoCo is returned by New and the registered factories in a build
// without MuJoCo (-tags nomujoco or CGO_ENABLED=0). It is env/mujoco's
// error, so callers can test for either package's with one errors.Is.
var ErrNoMuJoCo = mujoco.ErrNoMuJoCo
