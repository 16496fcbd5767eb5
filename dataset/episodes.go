package dataset

// Episode is a run of consecutive rows [Start, Start+Len) that ends in a
// terminal state, a time-limit cut, or the end of the data.
type Episode struct {
	Start    int     `json:"start"`    // first row
	Len      int     `json:"len"`      // number of rows (steps)
	Return   float64 `json:"return"`   // undiscounted sum of rewards over the rows
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
	var eps []Episode
	cur := Episode{}
	for i, r := range rewards {
		cur.Len++
		cur.Return += float64(r)
		term := i < len(terminals) && terminals[i] != 0
		to := timeouts != nil && i < len(timeouts) && timeouts[i] != 0
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

// Episodes splits the dataset's transitions into episodes by its Terminals
// and Timeouts flags (see SplitEpisodes). After a d4rl-mode conversion the
// dropped time-limit steps are missing from the returns.
func (d *Dataset) Episodes() []Episode {
	return SplitEpisodes(d.Rewards, d.Terminals, d.Timeouts)
}
