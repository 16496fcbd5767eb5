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
	// The only complete episode is the first row: the cut keeps that row.
	one := flagged([]float32{1, 2, 3}, []float32{1, 0, 0}, []float32{0, 0, 0})
	if c := CutAfterLastEpisode(&Generated{Data: one}); c.Data.Len() != 1 {
		t.Errorf("a one-row episode then an open one: cut to %d rows, want 1", c.Data.Len())
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

// TestSliceCopiesTheRowsAsked: Slice(d, from, to) holds exactly rows
// [from, to) of every array (checked at from > 0 with 2-D states and
// actions, where an index computed as from/width instead of from·width
// would read other rows), copies rather than aliases, and marks its last
// row a timeout unless that row is terminal.
func TestSliceCopiesTheRowsAsked(t *testing.T) {
	const n, o, a = 6, 2, 3
	d := &dataset.Dataset{ObsDim: o, ActDim: a}
	for i := range n {
		for j := range o {
			d.Observations = append(d.Observations, float32(10*i+j))
			d.NextObservations = append(d.NextObservations, float32(100+10*i+j))
		}
		for j := range a {
			d.Actions = append(d.Actions, float32(-10*i-j))
		}
		d.Rewards = append(d.Rewards, float32(i))
		d.Terminals = append(d.Terminals, 0)
		d.Timeouts = append(d.Timeouts, 0)
	}
	d.Terminals[4] = 1
	s := Slice(d, 2, 4)
	if s.Len() != 2 || s.ObsDim != o || s.ActDim != a {
		t.Fatalf("Slice(2, 4): %d rows, dims %d/%d", s.Len(), s.ObsDim, s.ActDim)
	}
	for r := range 2 {
		i := r + 2
		for j := range o {
			if s.Observations[r*o+j] != float32(10*i+j) || s.NextObservations[r*o+j] != float32(100+10*i+j) {
				t.Errorf("row %d state %d: %v, %v", r, j, s.Observations[r*o+j], s.NextObservations[r*o+j])
			}
		}
		for j := range a {
			if s.Actions[r*a+j] != float32(-10*i-j) {
				t.Errorf("row %d action %d: %v", r, j, s.Actions[r*a+j])
			}
		}
		if s.Rewards[r] != float32(i) {
			t.Errorf("row %d reward %v", r, s.Rewards[r])
		}
	}
	if s.Timeouts[1] != 1 || s.Timeouts[0] != 0 {
		t.Errorf("timeouts %v, want [0 1] (the cut end is a time limit)", s.Timeouts)
	}
	s.Observations[0] = -1
	if d.Observations[2*o] == -1 {
		t.Error("Slice aliases the source")
	}
	if e := Slice(d, 3, 3); e.Len() != 0 {
		t.Errorf("an empty slice has %d rows", e.Len())
	}
	if e := Slice(d, 3, 5); e.Timeouts[1] != 0 || e.Terminals[1] != 1 {
		t.Errorf("a slice ending on a terminal: terminals %v timeouts %v, want no added timeout", e.Terminals, e.Timeouts)
	}
}
