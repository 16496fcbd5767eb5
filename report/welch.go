package report

import (
	"math/rand/v2"

	"github.com/koopq/koopq/stats"
)

// MeanDifference is Welch's test of Method's mean score minus Over's on one
// dataset, beside the exact Mann–Whitney U test of the same two groups of
// runs: the shape-free check of the same question on that dataset alone
// (the summary's P(X > Y) tests pool every dataset).
type MeanDifference struct {
	Pair
	Dataset string         `json:"dataset"`
	Welch   stats.Welch    `json:"welch"`
	Rank    stats.RankTest `json:"rank_test"`
}

// meanDifferences tests every method against the baseline, then every
// requested pair not already among those, on each dataset (in order)
// where both have at least two final scores. stream(k) seeds the rank
// test's Monte Carlo draws, used only when its exact count is too large
// (never on one dataset with up to 20 runs each).
func meanDifferences(rs []Result, datasets, methods []string, baseline string, pairs []Pair, level float64,
	stream func(uint64) *rand.Rand) []MeanDifference {
	var out []MeanDifference
	for _, p := range comparisons(methods, baseline, pairs) {
		x, y := tasks(rs, datasets, p.Method), tasks(rs, datasets, p.Over)
		for k, d := range datasets {
			if w, ok := stats.WelchTest(x[k], y[k], level); ok {
				rank := stats.PermutationPoI(stats.Tasks{x[k]}, stats.Tasks{y[k]}, stream(9000+uint64(len(out))))
				out = append(out, MeanDifference{Pair: p, Dataset: d, Welch: w, Rank: rank})
			}
		}
	}
	return out
}
