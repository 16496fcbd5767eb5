package manip

import (
	"strings"
	"testing"
)

// TestEveryTaskHasAScriptedController: each registered task has a scripted
// controller (the behaviour policy its datasets are collected with), and an
// unknown task is an error that lists the known ones.
func TestEveryTaskHasAScriptedController(t *testing.T) {
	for _, name := range Names() {
		if _, err := ScriptedPolicy(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := ScriptedPolicy("metaworld-nope-v2")
	if err == nil || !strings.Contains(err.Error(), PushName) {
		t.Fatalf("unknown task: err = %v, want one naming %s", err, PushName)
	}
}

// TestMoveToClipsAndSteers: the shared controller step points toward the
// target, saturates at ±1 beyond 4 cm and passes the gripper command.
func TestMoveToClipsAndSteers(t *testing.T) {
	a := moveTo([]float64{0, 0.6, 0.2}, [3]float64{0.1, 0.6, 0.19}, 1)
	want := []float64{1, 0, -0.25, 1}
	for i := range want {
		if d := a[i] - want[i]; d > 1e-12 || d < -1e-12 {
			t.Fatalf("moveTo = %v, want %v", a, want)
		}
	}
}
