//go:build !cgo || nomujoco

package mujoco

import (
	"errors"
	"strings"
	"testing"

	"github.com/koopq/koopq/env"
)

func TestStubFactoriesFail(t *testing.T) {
	for _, name := range Names() {
		e, err := env.Make(name)
		if e != nil || !errors.Is(err, ErrNoMuJoCo) || !strings.Contains(err.Error(), "install libmujoco-dev") {
			t.Errorf("Make(%q) = %v, %v; want ErrNoMuJoCo", name, e, err)
		}
	}
}

func TestStubNew(t *testing.T) {
	if e, err := New("hopper", Options{}); e != nil || !errors.Is(err, ErrNoMuJoCo) {
		t.Errorf("New = %v, %v; want ErrNoMuJoCo", e, err)
	}
}
