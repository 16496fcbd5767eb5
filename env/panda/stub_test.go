//go:build !cgo || nomujoco

package panda

import (
	"errors"
	"testing"

	"github.com/koopq/koopq/env"
)

func TestStubRegistersAndFails(t *testing.T) {
	if _, err := env.Make(LiftName); !errors.Is(err, ErrNoMuJoCo) {
		t.Errorf("env.Make(%q) error %v, want ErrNoMuJoCo", LiftName, err)
	}
	if _, err := New(LiftName); !errors.Is(err, ErrNoMuJoCo) {
		t.Errorf("New error %v, want ErrNoMuJoCo", err)
	}
	var e Env
	if _, _, _, _, err := e.Step(make([]float64, ActDim)); !errors.Is(err, ErrNoMuJoCo) {
		t.Errorf("Step error %v, want ErrNoMuJoCo", err)
	}
}
