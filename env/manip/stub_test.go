//go:build !cgo || nomujoco

package manip

import (
	"errors"
	"testing"

	"github.com/koopq/koopq/env"
)

func TestStubRegistersAndFails(t *testing.T) {
	if _, err := env.Make(PushName); !errors.Is(err, ErrNoMuJoCo) {
		t.Errorf("env.Make(%q) error %v, want ErrNoMuJoCo", PushName, err)
	}
	if _, err := New(PushName); !errors.Is(err, ErrNoMuJoCo) {
		t.Errorf("New error %v, want ErrNoMuJoCo", err)
	}
}
