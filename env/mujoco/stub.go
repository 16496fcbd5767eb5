//go:build !cgo || nomujoco

package mujoco

import (
	"errors"

	"github.com/koopq/koopq/env"
)

// ErrNoMuJoCo is returned by the factories of a build without MuJoCo.
var ErrNoMuJoCo = errors.New("koopq was built without MuJoCo: install libmujoco-dev and rebuild without -tags nomujoco (cgo must be enabled)")

func init() {
	for _, name := range Names() {
		env.Register(name, func() (env.Env, error) { return nil, ErrNoMuJoCo })
	}
}
