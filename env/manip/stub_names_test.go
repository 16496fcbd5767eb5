//go:build !cgo || nomujoco

package manip

import (
	"errors"
	"testing"

	"github.com/koopq/koopq/env"
)

// TestStubRegistersEveryTask: without MuJoCo every task name is still
// registered, and building it fails with ErrNoMuJoCo.
func TestStubRegistersEveryTask(t *testing.T) {
	want := []string{DoorCloseName, DrawerCloseName, DrawerOpenName, PushName}
	if got := Names(); len(got) != len(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i, name := range Names() {
		if name != want[i] {
			t.Errorf("Names()[%d] = %q, want %q", i, name, want[i])
		}
		if _, err := env.Make(name); !errors.Is(err, ErrNoMuJoCo) {
			t.Errorf("env.Make(%q) error %v, want ErrNoMuJoCo", name, err)
		}
	}
}
