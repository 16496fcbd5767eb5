package sac

import (
	"math"
	"testing"

	"github.com/koopq/koopq/dataset"
)

func flagged(rew, term, tout []float32) *dataset.Dataset {
	n := len(rew)
	return &dataset.Dataset{ObsDim: 1, ActDim: 1, Observations: make([]float32, n), NextObservations: make([]float32, n),
		Actions: make([]float32, n), Rewards: rew, Terminals: term, Timeouts: tout}
}

// TestEpisodeReturnsAndCut pins EpisodeReturns (complete episodes only) and
// CutAfterLastEpisode (rows after the last end dropped) on the edge cases.
func TestEpisodeReturnsAndCut(t *testing.T) {
	d := flagged([]float32{1, 2, 3, 4, 5}, []float32{0, 1, 0, 0, 0}, []float32{0, 0, 0, 1, 0})
	if m, n := EpisodeReturns(d); m != 5 || n != 2 {
		t.Errorf("EpisodeReturns = %v, %d; want 5, 2", m, n)
	}
	if m, n := EpisodeReturns(flagged([]float32{1}, []float32{0}, []float32{0})); !math.IsNaN(m) || n != 0 {
		t.Errorf("EpisodeReturns without an end = %v, %d; want NaN, 0", m, n)
	}
	g := &Generated{Data: d, Infos: map[string]dataset.Array{"x": {Data: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape: []int{5, 2}}}}
	c := CutAfterLastEpisode(g)
	if c.Data.Len() != 4 || c.Infos["x"].Shape[0] != 4 || len(c.Infos["x"].Data) != 8 {
		t.Errorf("cut to %d rows (infos %v), want 4", c.Data.Len(), c.Infos["x"].Shape)
	}
	for _, tc := range []*dataset.Dataset{
		flagged([]float32{1, 2}, []float32{0, 1}, []float32{0, 0}), // ends on the last row
		flagged([]float32{1, 2}, []float32{0, 0}, []float32{0, 0}), // never ends
		flagged(nil, nil, nil),
	} {
		g := &Generated{Data: tc}
		if CutAfterLastEpisode(g) != g {
			t.Errorf("CutAfterLastEpisode changed %v", tc.Terminals)
		}
	}
}
