package run

import (
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/learntest"
)

// pendulumTransitions is learntest.Pendulum: the real Pendulum rolled with
// random torques, so the simulator reproduces every transition.
func pendulumTransitions(t *testing.T, n int, seed uint64) *dataset.Dataset {
	t.Helper()
	d, err := learntest.Pendulum(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
