// Package stats holds the statistics koopq's reports and studies share, at
// the bottom of the import graph (it imports only the standard library and
// gonum): mean, sample standard deviation, interquartile mean, percentiles,
// the probability of improvement with stratified bootstrap intervals and
// performance profiles as "Deep RL at the Edge of the Statistical
// Precipice" recommends, Welch's t-test and a stratified permutation test.
package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
)

// The statistics below follow "Deep RL at the Edge of the Statistical
// Precipice" (Agarwal et al., 2021) and its rliable library: scores are
// grouped by task (dataset), each task holding one score per seed, and
// confidence intervals come from a stratified bootstrap (seeds resampled with
// replacement within each task) with percentile intervals.

// Tasks holds the scores of one method: one slice per task (dataset), one
// value per seed. Tasks may hold different numbers of seeds.
type Tasks [][]float64

// Flat concatenates all scores, task after task.
func (t Tasks) Flat() []float64 {
	var out []float64
	for _, s := range t {
		out = append(out, s...)
	}
	return out
}

// Mean is the arithmetic mean (NaN for no values). Finite values give a
// finite mean, however large they are: a sum that overflows is redone on
// the values scaled by the largest magnitude.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	if !math.IsInf(s, 0) {
		return s / float64(len(x))
	}
	scale := maxAbs(x, 0)
	if math.IsInf(scale, 0) || scale == 0 {
		return s / float64(len(x)) // an infinite value: the mean is too
	}
	s = 0
	for _, v := range x {
		s += v / scale
	}
	return s / float64(len(x)) * scale
}

// maxAbs is the largest |v − m| over x.
func maxAbs(x []float64, m float64) float64 {
	a := 0.0
	for _, v := range x {
		a = math.Max(a, math.Abs(v-m))
	}
	return a
}

// Std is the sample standard deviation (n−1 in the denominator; 0 for one
// value, NaN for none), the "±" of the paper's tables. Like Mean it does
// not overflow on large finite values whose spread float64 can hold: the
// squares are then summed scaled by the largest deviation.
func Std(x []float64) float64 {
	switch len(x) {
	case 0:
		return math.NaN()
	case 1:
		return 0
	}
	m := Mean(x)
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	if !math.IsInf(s, 0) && !math.IsNaN(s) || math.IsInf(m, 0) || math.IsNaN(m) {
		return math.Sqrt(s / float64(len(x)-1))
	}
	// (v − m)² overflowed; v/scale − m/scale cannot (|v|, |m| ≤ MaxFloat64).
	scale := math.Max(maxAbs(x, 0), math.Abs(m))
	s = 0
	for _, v := range x {
		d := v/scale - m/scale
		s += d * d
	}
	return math.Sqrt(s/float64(len(x)-1)) * scale
}

// IQM is the interquartile mean: the mean of the values left after removing
// ⌊n/4⌋ smallest and ⌊n/4⌋ largest (scipy.stats.trim_mean(x, 0.25), which
// rliable uses). NaN for no values.
func IQM(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	cut := len(s) / 4
	return Mean(s[cut : len(s)-cut])
}

// ProbImprovement is P(X > Y) = mean over tasks of
// (1/(n·m)) Σ_i Σ_j [x_i > y_j] + ½ [x_i = y_j], the probability that a run of
// X beats a run of Y on a randomly chosen task (x and y must have the same
// tasks in the same order; tasks where either is empty are left out).
func ProbImprovement(x, y Tasks) float64 {
	total, n := 0.0, 0
	for t := range x {
		if t >= len(y) || len(x[t]) == 0 || len(y[t]) == 0 {
			continue
		}
		s := 0.0
		for _, a := range x[t] {
			for _, b := range y[t] {
				switch {
				case a > b:
					s++
				case a == b:
					s += 0.5
				}
			}
		}
		total += s / float64(len(x[t])*len(y[t]))
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return total / float64(n)
}

// Profile returns the performance profile of t at the thresholds taus: the
// fraction of all runs with a score above τ.
func Profile(t Tasks, taus []float64) []float64 {
	x := t.Flat()
	out := make([]float64, len(taus))
	for i, tau := range taus {
		c := 0
		for _, v := range x {
			if v > tau {
				c++
			}
		}
		if len(x) > 0 {
			out[i] = float64(c) / float64(len(x))
		} else {
			out[i] = math.NaN()
		}
	}
	return out
}

// Percentile is the q-th percentile (0..100) of x by linear interpolation
// between closest ranks (numpy's default). x need not be sorted.
func Percentile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return percentileSorted(s, q)
}

func percentileSorted(s []float64, q float64) float64 {
	pos := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	f := pos - float64(lo)
	return s[lo] + f*(s[hi]-s[lo])
}

// CI is a point estimate with a confidence interval.
type CI struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// resample draws a stratified bootstrap sample of t into dst (same shape).
func resample(dst, t Tasks, rng *rand.Rand) {
	for i, s := range t {
		for j := range dst[i] {
			dst[i][j] = s[rng.IntN(len(s))]
		}
	}
}

func shapeLike(t Tasks) Tasks {
	out := make(Tasks, len(t))
	for i, s := range t {
		out[i] = make([]float64, len(s))
	}
	return out
}

// Resamplable reports whether a stratified bootstrap of t can vary: some
// task has two or more values. With one value per task every resample is t
// itself, and the "interval" would be the estimate repeated, a certainty
// the data do not give.
func (t Tasks) Resamplable() bool {
	for _, s := range t {
		if len(s) >= 2 {
			return true
		}
	}
	return false
}

// noInterval clears ci's bounds when none of the tasks can vary under
// resampling (Tasks.Resamplable): the bootstrap is still drawn, so the
// generator's state, and every statistic drawn after it, is as before.
func noInterval(ci CI, ts ...Tasks) CI {
	for _, t := range ts {
		if t.Resamplable() {
			return ci
		}
	}
	ci.Lo, ci.Hi = math.NaN(), math.NaN()
	return ci
}

// Bootstrap returns stat(t) with a percentile confidence interval at level
// (e.g. 0.95) from reps stratified bootstrap resamples of t, drawn from rng.
// The bounds are NaN (no interval) when reps ≤ 0, t is empty or every task
// has a single value (Tasks.Resamplable).
func Bootstrap(t Tasks, stat func(Tasks) float64, reps int, level float64, rng *rand.Rand) CI {
	ci := CI{Value: stat(t), Lo: math.NaN(), Hi: math.NaN()}
	if len(t.Flat()) == 0 || reps <= 0 {
		return ci
	}
	buf := shapeLike(t)
	vals := make([]float64, reps)
	for r := range vals {
		resample(buf, t, rng)
		vals[r] = stat(buf)
	}
	sort.Float64s(vals)
	a := (1 - level) / 2 * 100
	ci.Lo, ci.Hi = percentileSorted(vals, a), percentileSorted(vals, 100-a)
	return noInterval(ci, t)
}

// BootstrapIQM is the IQM over all runs of t with its stratified bootstrap CI.
func BootstrapIQM(t Tasks, reps int, level float64, rng *rand.Rand) CI {
	return Bootstrap(t, func(u Tasks) float64 { return IQM(u.Flat()) }, reps, level, rng)
}

// BootstrapPoI is P(X > Y) with a CI from resampling X and Y independently,
// each stratified by task; no interval (NaN bounds) when neither can vary
// (one run per task in both).
func BootstrapPoI(x, y Tasks, reps int, level float64, rng *rand.Rand) CI {
	ci := CI{Value: ProbImprovement(x, y), Lo: math.NaN(), Hi: math.NaN()}
	if math.IsNaN(ci.Value) || reps <= 0 {
		return ci
	}
	bx, by := shapeLike(x), shapeLike(y)
	vals := make([]float64, reps)
	for r := range vals {
		resample(bx, x, rng)
		resample(by, y, rng)
		vals[r] = ProbImprovement(bx, by)
	}
	sort.Float64s(vals)
	a := (1 - level) / 2 * 100
	ci.Lo, ci.Hi = percentileSorted(vals, a), percentileSorted(vals, 100-a)
	return noInterval(ci, x, y)
}

// BootstrapProfile is the performance profile at taus with pointwise
// stratified bootstrap bands (none when every task has one run).
func BootstrapProfile(t Tasks, taus []float64, reps int, level float64, rng *rand.Rand) []CI {
	base := Profile(t, taus)
	out := make([]CI, len(taus))
	for i := range out {
		out[i] = CI{Value: base[i], Lo: math.NaN(), Hi: math.NaN()}
	}
	if len(t.Flat()) == 0 || reps <= 0 {
		return out
	}
	buf := shapeLike(t)
	vals := make([][]float64, len(taus))
	for i := range vals {
		vals[i] = make([]float64, reps)
	}
	for r := 0; r < reps; r++ {
		resample(buf, t, rng)
		p := Profile(buf, taus)
		for i := range p {
			vals[i][r] = p[i]
		}
	}
	a := (1 - level) / 2 * 100
	for i := range out {
		sort.Float64s(vals[i])
		out[i] = noInterval(CI{Value: out[i].Value, Lo: percentileSorted(vals[i], a), Hi: percentileSorted(vals[i], 100-a)}, t)
	}
	return out
}

// BootstrapMean is the mean of x with a percentile bootstrap CI (one task):
// the band of the learning curves; no interval for a single value.
func BootstrapMean(x []float64, reps int, level float64, rng *rand.Rand) CI {
	return Bootstrap(Tasks{x}, func(u Tasks) float64 { return Mean(u[0]) }, reps, level, rng)
}

// MarshalJSON writes NaN bounds as null.
func (c CI) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"value": NullIfNaN(c.Value), "lo": NullIfNaN(c.Lo), "hi": NullIfNaN(c.Hi)})
}

// NullIfNaN returns v, or nil for NaN and ±Inf, so that undefined
// statistics are written as JSON null rather than failing json.Marshal.
func NullIfNaN(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
