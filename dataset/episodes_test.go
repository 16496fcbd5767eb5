package dataset

import (
	"reflect"
	"testing"
)

// TestSplitEpisodesEdges pins the one episode splitter's edge cases: empty
// data, a last episode without an end flag, terminal and timeout on one row,
// nil and short timeouts, the MaxLen cut and terminals that continue.
func TestSplitEpisodesEdges(t *testing.T) {
	f := func(x ...float32) []float32 { return x }
	cases := []struct {
		name            string
		rew, term, tout []float32
		rule            EpisodeRule
		want            []Episode
	}{
		{name: "empty"},
		{name: "empty with flags", term: f(1), tout: f(1)},
		{name: "no end flag", rew: f(1, 2, 3), term: f(0, 0, 0), tout: f(0, 0, 0),
			want: []Episode{{Start: 0, Len: 3, Return: 6}}},
		{name: "trailing rows", rew: f(1, 2, 3, 4), term: f(0, 1, 0, 0), tout: nil,
			want: []Episode{{Start: 0, Len: 2, Return: 3, Terminal: true}, {Start: 2, Len: 2, Return: 7}}},
		{name: "terminal wins", rew: f(1, 2, 3), term: f(1, 0, 0), tout: f(1, 0, 1),
			want: []Episode{{Len: 1, Return: 1, Terminal: true}, {Start: 1, Len: 2, Return: 5, Timeout: true}}},
		{name: "short timeouts", rew: f(1, 1, 1), term: f(0, 0, 0), tout: f(1),
			want: []Episode{{Len: 1, Return: 1, Timeout: true}, {Start: 1, Len: 2, Return: 2}}},
		{name: "max len", rew: f(1, 1, 1, 1, 1), term: f(0, 1, 0, 0, 0), tout: f(0, 0, 0, 0, 0), rule: EpisodeRule{MaxLen: 2},
			want: []Episode{{Len: 2, Return: 2, Terminal: true}, {Start: 2, Len: 2, Return: 2, Timeout: true}, {Start: 4, Len: 1, Return: 1}}},
		{name: "max len on last row", rew: f(1, 1), term: f(0, 0), tout: f(0, 0), rule: EpisodeRule{MaxLen: 2},
			want: []Episode{{Len: 2, Return: 2, Timeout: true}}},
		{name: "terminal continues", rew: f(1, 1, 1, 1), term: f(1, 1, 0, 1), tout: f(0, 1, 0, 0),
			rule: EpisodeRule{TerminalContinues: func(i int) bool { return i < 2 }},
			want: []Episode{{Len: 2, Return: 2, Timeout: true}, {Start: 2, Len: 2, Return: 2, Terminal: true}}},
	}
	for _, c := range cases {
		got := SplitEpisodesBy(c.rew, c.term, c.tout, c.rule)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		if c.rule.MaxLen == 0 && c.rule.TerminalContinues == nil {
			if got := SplitEpisodes(c.rew, c.term, c.tout); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: SplitEpisodes got %+v, want %+v", c.name, got, c.want)
			}
		}
	}
	if got := CompleteReturns([]Episode{{Return: 1, Terminal: true}, {Return: 2}, {Return: 3, Timeout: true}}); !reflect.DeepEqual(got, []float64{1, 3}) {
		t.Errorf("CompleteReturns = %v, want [1 3]", got)
	}
}

// TestContinues: a row continues when the next row's observation is its
// next observation; the last row never does.
func TestContinues(t *testing.T) {
	d := &Dataset{ObsDim: 2, ActDim: 1,
		Observations:     []float32{0, 0, 1, 1, 5, 5},
		NextObservations: []float32{1, 1, 2, 2, 6, 6},
		Actions:          []float32{0, 0, 0}, Rewards: []float32{0, 0, 0},
		Terminals: []float32{1, 1, 1}, Timeouts: []float32{0, 0, 0}}
	for k, want := range []bool{true, false, false} {
		if got := d.Continues(k); got != want {
			t.Errorf("Continues(%d) = %v, want %v", k, got, want)
		}
	}
	if got := len(d.EpisodesBy(EpisodeRule{TerminalContinues: d.Continues})); got != 2 {
		t.Errorf("%d episodes, want 2", got)
	}
}
