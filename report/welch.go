package report

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Welch is Welch's unequal-variance t-test of the difference of two means,
// mean(x) − mean(y), with its confidence interval: the classical
// companion of the rank test for a reader who wants "by how many points,
// give or take". It assumes roughly normal seed-to-seed scores, which a
// few seeds cannot check; the rank test assumes nothing about their shape.
type Welch struct {
	// N, M are the numbers of scores in x and y (each at least 2).
	N, M int
	// Diff is mean(x) − mean(y), in the scores' units (normalized points).
	Diff float64
	// Lo, Hi bound Diff's two-sided confidence interval at the level asked
	// for: Diff ± t_{(1+level)/2, DF} · SE.
	Lo, Hi float64
	// SE is the standard error √(s_x²/N + s_y²/M) (sample variances).
	SE float64
	// T is Diff / SE; DF the Welch–Satterthwaite degrees of freedom.
	T, DF float64
	// P is the two-sided p-value of "equal means" under Student's t with
	// DF degrees of freedom.
	P float64
}

// WelchTest is Welch's t-test of mean(x) − mean(y) with a two-sided
// interval at level (e.g. 0.95). ok is false when either sample has fewer
// than two scores. When both samples have no spread (SE = 0) only Diff is
// defined: T, DF, P, Lo and Hi are NaN.
func WelchTest(x, y []float64, level float64) (w Welch, ok bool) {
	n, m := len(x), len(y)
	if n < 2 || m < 2 {
		return Welch{}, false
	}
	sx, sy := Std(x), Std(y)
	vx, vy := sx*sx/float64(n), sy*sy/float64(m)
	w = Welch{N: n, M: m, Diff: Mean(x) - Mean(y), SE: math.Sqrt(vx + vy)}
	nan := math.NaN()
	w.Lo, w.Hi, w.T, w.DF, w.P = nan, nan, nan, nan, nan
	if w.SE == 0 {
		return w, true
	}
	w.T = w.Diff / w.SE
	w.DF = (vx + vy) * (vx + vy) / (vx*vx/float64(n-1) + vy*vy/float64(m-1))
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: w.DF}
	q := st.Quantile(0.5 + level/2)
	w.Lo, w.Hi = w.Diff-q*w.SE, w.Diff+q*w.SE
	w.P = math.Min(1, 2*st.CDF(-math.Abs(w.T)))
	return w, true
}

// MarshalJSON writes undefined values as null.
func (w Welch) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"n": w.N, "m": w.M, "diff": jnum(w.Diff), "lo": jnum(w.Lo), "hi": jnum(w.Hi),
		"se": jnum(w.SE), "t": jnum(w.T), "df": jnum(w.DF), "p_two_sided": jnum(w.P)})
}

// MeanDifference is Welch's test of Method's mean score minus Over's on one
// dataset, beside the exact Mann–Whitney U test of the same two groups of
// runs: the shape-free check of the same question on that dataset alone
// (the summary's P(X > Y) tests pool every dataset).
type MeanDifference struct {
	Pair
	Dataset string   `json:"dataset"`
	Welch   Welch    `json:"welch"`
	Rank    RankTest `json:"rank_test"`
}

// meanDifferences tests every method against the baseline, then every
// requested pair not already among those, on each dataset (in order)
// where both have at least two final scores. stream(k) seeds the rank
// test's Monte Carlo draws, used only when its exact count is too large
// (never on one dataset with up to 20 runs each).
func meanDifferences(rs []Result, datasets, methods []string, baseline string, pairs []Pair, level float64,
	stream func(uint64) *rand.Rand) []MeanDifference {
	var todo []Pair
	for _, m := range methods {
		if m != baseline {
			todo = append(todo, Pair{Method: m, Over: baseline})
		}
	}
	for _, p := range pairs {
		if !slices.Contains(todo, p) {
			todo = append(todo, p)
		}
	}
	var out []MeanDifference
	for _, p := range todo {
		x, y := tasks(rs, datasets, p.Method), tasks(rs, datasets, p.Over)
		for k, d := range datasets {
			if w, ok := WelchTest(x[k], y[k], level); ok {
				rank := PermutationPoI(Tasks{x[k]}, Tasks{y[k]}, stream(9000+uint64(len(out))))
				out = append(out, MeanDifference{Pair: p, Dataset: d, Welch: w, Rank: rank})
			}
		}
	}
	return out
}
