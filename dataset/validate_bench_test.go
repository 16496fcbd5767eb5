package dataset

import (
	"math"
	"strings"
	"testing"
)

// BenchmarkValidate measures Validate on a hopper-medium-sized dataset
// (1M rows, 11-D states, 3-D actions): the cost cql.NewTrainer pays to
// re-check data that run.CheckTrain already checked (docs/architecture.md,
// "Choices that differ from a first sketch").
func BenchmarkValidate(b *testing.B) {
	const n, obs, act = 1_000_000, 11, 3
	d := &Dataset{ObsDim: obs, ActDim: act,
		Observations: make([]float32, n*obs), Actions: make([]float32, n*act),
		Rewards: make([]float32, n), NextObservations: make([]float32, n*obs),
		Terminals: make([]float32, n), Timeouts: make([]float32, n)}
	b.SetBytes(int64(4 * n * (2*obs + act + 3)))
	for b.Loop() {
		if err := d.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestValidateRejectsEveryNonFinite: NaN, +Inf and −Inf are rejected in
// every array, and the largest finite float32 values and subnormals pass
// (the bit-mask test must not catch them).
func TestValidateRejectsEveryNonFinite(t *testing.T) {
	mk := func() *Dataset {
		return &Dataset{ObsDim: 2, ActDim: 1,
			Observations: []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0},
			Actions:      []float32{1, -1}, Rewards: []float32{0, 1},
			NextObservations: []float32{1, 2, 3, 4}, Terminals: []float32{0, 1}, Timeouts: []float32{0, 0}}
	}
	if err := mk().Validate(); err != nil {
		t.Fatalf("finite extremes rejected: %v", err)
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		for _, field := range []string{"observations", "actions", "rewards", "next_observations"} {
			d := mk()
			map[string][]float32{"observations": d.Observations, "actions": d.Actions,
				"rewards": d.Rewards, "next_observations": d.NextObservations}[field][1] = bad
			err := d.Validate()
			if err == nil || !strings.Contains(err.Error(), field+" row") {
				t.Errorf("%s = %v: err = %v, want one naming %s", field, bad, err, field)
			}
		}
	}
}
