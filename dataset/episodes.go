package dataset

import "math"

// Episode is a run of consecutive rows [Start, Start+Len) that ends in a
// terminal state, a time-limit cut, or the end of the data.
type Episode struct {
	Start    int     `json:"start"`    // first row
	Len      int     `json:"len"`      // number of rows (steps)
	Return   float64 `json:"return"`   // undiscounted sum of the finite rewards over the rows
	Terminal bool    `json:"terminal"` // ended in a true terminal state
	Timeout  bool    `json:"timeout"`  // cut by the time limit (and not terminal)
}

// Complete reports whether the episode ended by termination or time limit
// rather than by the data running out.
func (e Episode) Complete() bool { return e.Terminal || e.Timeout }

// SplitEpisodes splits rows into episodes: an episode ends after row i when
// terminals[i] or timeouts[i] is nonzero (terminals win when both are set),
// and the last episode ends with the data. timeouts may be nil.
// rewards, terminals: [N]; timeouts: [N] or nil.
func SplitEpisodes(rewards, terminals, timeouts []float32) []Episode {
	return SplitEpisodesBy(rewards, terminals, timeouts, EpisodeRule{})
}

// EpisodeRule adds to SplitEpisodesBy's ends at terminal and timeout flags.
// The zero rule adds nothing.
type EpisodeRule struct {
	// MaxLen also ends an episode after MaxLen rows, as a time-limit cut
	// (Timeout set); 0 means no limit.
	MaxLen int
	// TerminalContinues, when set, is asked at each terminal row i: when it
	// reports true the trajectory goes on (see (*Dataset).Continues) and
	// the terminal does not end the episode (a timeout on the row still
	// does, as does the end of the data).
	TerminalContinues func(i int) bool
}

// SplitEpisodesBy is the one episode splitter of the module: an episode
// ends after row i when terminals[i] is nonzero (unless
// rule.TerminalContinues(i)), when timeouts[i] is nonzero, or when it has
// rule.MaxLen rows; the last episode ends with the data. Terminal wins
// over Timeout when both end a row; the trailing episode has neither set.
// Empty rewards give no episodes. timeouts may be nil. A NaN or infinite
// reward (a row that ReadOptions.DropInvalid drops) adds nothing to Return.
func SplitEpisodesBy(rewards, terminals, timeouts []float32, rule EpisodeRule) []Episode {
	var eps []Episode
	cur := Episode{}
	for i, r := range rewards {
		cur.Len++
		if !math.IsNaN(float64(r)) && !math.IsInf(float64(r), 0) {
			cur.Return += float64(r)
		}
		term := i < len(terminals) && terminals[i] != 0
		if term && rule.TerminalContinues != nil && rule.TerminalContinues(i) {
			term = false
		}
		to := timeouts != nil && i < len(timeouts) && timeouts[i] != 0
		to = to || (rule.MaxLen > 0 && cur.Len == rule.MaxLen)
		if term || to {
			cur.Terminal, cur.Timeout = term, to && !term
			eps = append(eps, cur)
			cur = Episode{Start: i + 1}
		}
	}
	if cur.Len > 0 {
		eps = append(eps, cur)
	}
	return eps
}

// Episodes splits the stored rows into episodes (see SplitEpisodes). These
// are the true environment episodes: time-limit steps are included, so
// Return is the episode return an evaluator would report.
func (r *Raw) Episodes() []Episode {
	return SplitEpisodes(r.Rewards, r.Terminals, r.Timeouts)
}

// EpisodesFor splits the stored rows into episodes as the conversion under
// opts sees them: by the stored timeouts, or, in d4rl mode for a file
// without timeouts, by d4rl's episode_step fallback with
// opts.MaxEpisodeSteps. Time-limit steps are included, as in Episodes.
func (r *Raw) EpisodesFor(opts ReadOptions) []Episode {
	to := r.Timeouts
	if !opts.UseNextObservations {
		to = r.timeLimitRows(opts)
	}
	return SplitEpisodes(r.Rewards, r.Terminals, to)
}

// Episodes splits the dataset's transitions into episodes by its Terminals
// and Timeouts flags (see SplitEpisodes). After a d4rl-mode conversion the
// dropped time-limit steps are missing from the returns.
func (d *Dataset) Episodes() []Episode {
	return SplitEpisodes(d.Rewards, d.Terminals, d.Timeouts)
}

// EpisodesBy splits the dataset's transitions into episodes by its flags
// and rule (see SplitEpisodesBy).
func (d *Dataset) EpisodesBy(rule EpisodeRule) []Episode {
	return SplitEpisodesBy(d.Rewards, d.Terminals, d.Timeouts, rule)
}

// Continues reports whether row k+1 starts where row k ended: its
// observation equals row k's next observation. It is false for the last
// row. D4RL's AntMaze data marks every step near the goal terminal while
// the ant walks on; this tells such terminals from true episode ends.
func (d *Dataset) Continues(k int) bool {
	if k+1 >= d.Len() {
		return false
	}
	n := d.ObsDim
	for i := range n {
		if d.Observations[(k+1)*n+i] != d.NextObservations[k*n+i] {
			return false
		}
	}
	return true
}

// CompleteReturns is the returns of the complete episodes in eps (those
// ending by termination or time limit), in order.
func CompleteReturns(eps []Episode) []float64 {
	var out []float64
	for _, e := range eps {
		if e.Complete() {
			out = append(out, e.Return)
		}
	}
	return out
}
