package mujoco

import "errors"

// ErrBadState marks an error caused by a NaN, infinite or huge (>1e10) state,
// whether MuJoCo detected it (and silently reset the data) or this package did.
// Test with errors.Is. It exists in every build so callers need no build tags.
var ErrBadState = errors.New("mujoco: bad simulation state")
