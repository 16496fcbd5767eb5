package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/koopq/koopq/stats"
)

// The verdicts of a paired comparison (results/study-magnitude's reading
// rule): the t-interval of the mean per-seed difference excludes 0 with a
// positive mean (VerdictBeats) or a negative one (VerdictLoses), or it
// does not (VerdictNoDifference); VerdictTooFew when fewer than two seeds
// are paired, so that there is no interval.
const (
	VerdictBeats        = "beats"
	VerdictLoses        = "loses"
	VerdictNoDifference = "no difference detected"
	VerdictTooFew       = "too few paired seeds"
)

// DefaultEquivalenceMargin is the ±margin, in normalized points, within
// which a paired interval counts as equivalent when Options gives none (the
// study's pre-registered 5 points).
const DefaultEquivalenceMargin = 5.0

// PairedMeasure is the per-seed differences A − B of one measure of the
// paired runs of one comparison on one dataset, with their mean's
// Student-t interval and the verdict it gives.
type PairedMeasure struct {
	// Seeds are the seeds both runs have (ascending); Differences the
	// per-seed A − B in normalized points (success-rate points for runs
	// scored by success), aligned with Seeds.
	Seeds       []uint64  `json:"seeds"`
	Differences []float64 `json:"differences"`
	// Mean and Std are the differences' mean and sample std (n − 1); Lo
	// and Hi bound the mean's two-sided Student-t interval at the report's
	// level, t_{(1+level)/2, n−1}·Std/√n either side (NaN for n < 2).
	Mean, Std, Lo, Hi float64
	// Boot is the mean's percentile bootstrap interval at the report's
	// level, resampling the pairs (nil for n < 2): the interval the
	// manipulation study reads for its pooled comparison.
	Boot *stats.CI
	// Datasets, for a pooled row only, names each pair's dataset
	// (aligned with Seeds).
	Datasets []string
	// Verdict is one of the Verdict constants.
	Verdict string
	// Equivalent says the whole interval lies within ±the equivalence
	// margin (it can hold beside any verdict but VerdictTooFew: a gain
	// smaller than the margin is still a gain).
	Equivalent bool
}

// N is the number of paired seeds.
func (m PairedMeasure) N() int { return len(m.Differences) }

// MarshalJSON writes undefined numbers as null.
func (m PairedMeasure) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"seeds": nonNilSeeds(m.Seeds), "differences": nonNil(m.Differences), "n": m.N(),
		"mean": stats.NullIfNaN(m.Mean), "std": stats.NullIfNaN(m.Std), "lo": stats.NullIfNaN(m.Lo), "hi": stats.NullIfNaN(m.Hi),
		"verdict": m.Verdict, "equivalent": m.Equivalent, "bootstrap": m.Boot, "datasets": m.Datasets})
}

func nonNilSeeds(s []uint64) []uint64 {
	if s == nil {
		return []uint64{}
	}
	return s
}

// PairedDifference compares two methods seed by seed on one dataset: runs
// of different methods with the same seed start from the same weights,
// see the same minibatches and are evaluated from the same initial states,
// so the per-seed difference removes the seed's own luck from the
// comparison.
type PairedDifference struct {
	Pair
	Dataset string `json:"dataset"`
	// UnpairedMethod and UnpairedOver are the seeds only Method, or only
	// Over, has on the dataset: listed, never used.
	UnpairedMethod []uint64 `json:"unpaired_method_seeds"`
	UnpairedOver   []uint64 `json:"unpaired_over_seeds"`
	// Score is the measure every table uses: each run's final evaluation,
	// or the mean of its last K evaluations under Options.Last.
	Score PairedMeasure `json:"score"`
	// Reevaluated is the re-evaluation of the runs' final policies
	// (Options.Reevaluations); nil when none was given. NotReevaluated
	// are the paired seeds it leaves out because a run of the seed has no
	// re-evaluation.
	Reevaluated    *PairedMeasure `json:"reevaluated,omitempty"`
	NotReevaluated []uint64       `json:"not_reevaluated_seeds,omitempty"`
	// Verdict and Equivalent combine the measures: beats or loses only
	// when every measure says so, equivalent only when every measure's
	// interval lies within the margin; too few paired seeds when a
	// measure has no interval and none of that applies.
	Verdict    string `json:"verdict"`
	Equivalent bool   `json:"equivalent"`
	// Mismatches are the paired seeds whose two runs were trained by
	// different builds, GEMM precisions or machines (a pooled row has every
	// dataset's); their differences are in every measure, flagged here.
	Mismatches []PairMismatch `json:"provenance_mismatches,omitempty"`
}

// measure is the per-seed differences of value(a) − value(b) over the
// seeds both maps have, with their interval and verdict at level and
// margin.
func measure(seeds []uint64, a, b map[uint64]float64, level, margin float64) PairedMeasure {
	m := PairedMeasure{}
	for _, s := range seeds {
		m.Seeds, m.Differences = append(m.Seeds, s), append(m.Differences, a[s]-b[s])
	}
	m.settle(level, margin)
	return m
}

// settle sets m's mean, std, t-interval and verdict from its differences.
func (m *PairedMeasure) settle(level, margin float64) {
	m.Mean, m.Std = stats.Mean(m.Differences), stats.Std(m.Differences)
	m.Lo, m.Hi = stats.TInterval(m.Differences, level)
	m.Verdict, m.Equivalent = verdict(m.Mean, m.Lo, m.Hi, margin)
}

// withBoot adds the percentile bootstrap interval of m's mean (reps
// resamples of the pairs drawn from rng) when m has two or more pairs.
func (m PairedMeasure) withBoot(reps int, level float64, rng *rand.Rand) PairedMeasure {
	if m.N() >= 2 {
		ci := stats.BootstrapMean(m.Differences, reps, level, rng)
		m.Boot = &ci
	}
	return m
}

// PooledDataset is the Dataset of a comparison's pooled row: the pairs of
// every dataset together (dataset × seed), when two or more datasets have
// the comparison.
const PooledDataset = "pooled"

// pooled is the pooled row of the per-dataset rows rows of one comparison:
// every pair of every dataset, per measure, with its t and bootstrap
// intervals and the verdicts they give (by the t-interval, as per dataset).
func pooled(rows []PairedDifference, level, margin float64, reps int, stream func(uint64) *rand.Rand, k uint64) PairedDifference {
	pool := func(get func(PairedDifference) *PairedMeasure, k uint64) PairedMeasure {
		var p PairedMeasure
		for _, r := range rows {
			m := get(r)
			for i, s := range m.Seeds {
				p.Seeds, p.Differences = append(p.Seeds, s), append(p.Differences, m.Differences[i])
				p.Datasets = append(p.Datasets, r.Dataset)
			}
		}
		p.settle(level, margin)
		return p.withBoot(reps, level, stream(k))
	}
	pd := PairedDifference{Pair: rows[0].Pair, Dataset: PooledDataset}
	for _, r := range rows {
		pd.UnpairedMethod = append(pd.UnpairedMethod, r.UnpairedMethod...)
		pd.UnpairedOver = append(pd.UnpairedOver, r.UnpairedOver...)
		pd.NotReevaluated = append(pd.NotReevaluated, r.NotReevaluated...)
		pd.Mismatches = append(pd.Mismatches, r.Mismatches...)
	}
	pd.Score = pool(func(r PairedDifference) *PairedMeasure { return &r.Score }, k)
	pd.Verdict, pd.Equivalent = pd.Score.Verdict, pd.Score.Equivalent
	if rows[0].Reevaluated != nil {
		m := pool(func(r PairedDifference) *PairedMeasure { return r.Reevaluated }, k+1)
		pd.Reevaluated = &m
		pd.Verdict, pd.Equivalent = combine(pd.Score, m)
	}
	return pd
}

// verdict reads an interval [lo, hi] of a mean difference by the
// pre-registered rule: beats or loses when it excludes 0 (by the sign of
// mean), else no difference detected; equivalent when it lies within
// ±margin. A NaN bound (fewer than two seeds) is VerdictTooFew.
func verdict(mean, lo, hi, margin float64) (string, bool) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return VerdictTooFew, false
	}
	eq := lo >= -margin && hi <= margin
	switch {
	case lo > 0 && mean > 0:
		return VerdictBeats, eq
	case hi < 0 && mean < 0:
		return VerdictLoses, eq
	}
	return VerdictNoDifference, eq
}

// combine is the verdict over both measures (the study's rule: a
// conclusion needs both to agree).
func combine(a, b PairedMeasure) (string, bool) {
	eq := a.Equivalent && b.Equivalent
	switch {
	case a.Verdict == b.Verdict && (a.Verdict == VerdictBeats || a.Verdict == VerdictLoses):
		return a.Verdict, eq
	case a.Verdict == VerdictTooFew || b.Verdict == VerdictTooFew:
		return VerdictTooFew, eq
	}
	return VerdictNoDifference, eq
}

// comparisons are every method against the baseline, then every requested
// pair not already among those.
func comparisons(methods []string, baseline string, pairs []Pair) []Pair {
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
	return todo
}

// pairedDifferences compares every method with the baseline and every
// requested pair, seed by seed, on each dataset (in order) where both have
// a run; reevaluated says whether runs carry re-evaluations (then every
// comparison has that measure too, over the seeds whose two runs have one).
func pairedDifferences(rs []Result, datasets []string, todo []Pair, level, margin float64, reevaluated bool,
	reps int, stream func(uint64) *rand.Rand) []PairedDifference {
	var out []PairedDifference
	for pi, p := range todo {
		var rows []PairedDifference
		for di, d := range datasets {
			a, b := runsOf(rs, d, p.Method), runsOf(rs, d, p.Over)
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			pd := pairedOn(p, d, a, b, level, margin, reevaluated)
			k := 10000 + 1000*uint64(pi) + 4*uint64(di)
			pd.Score = pd.Score.withBoot(reps, level, stream(k))
			if pd.Reevaluated != nil {
				m := pd.Reevaluated.withBoot(reps, level, stream(k+1))
				pd.Reevaluated = &m
			}
			rows = append(rows, pd)
		}
		out = append(out, rows...)
		if len(rows) >= 2 {
			out = append(out, pooled(rows, level, margin, reps, stream, 10000+1000*uint64(pi)+998))
		}
	}
	return out
}

// pairedOn compares runs a of p.Method with runs b of p.Over on dataset d.
func pairedOn(p Pair, d string, a, b []Result, level, margin float64, reevaluated bool) PairedDifference {
	pd := PairedDifference{Pair: p, Dataset: d}
	bySeed := func(rs []Result) (score, re map[uint64]float64) {
		score, re = map[uint64]float64{}, map[uint64]float64{}
		for _, r := range rs {
			score[r.Seed] = r.Score
			if r.Reevaluated != nil {
				re[r.Seed] = *r.Reevaluated
			}
		}
		return score, re
	}
	sa, ra := bySeed(a)
	sb, rb := bySeed(b)
	var both, reBoth []uint64
	for _, r := range a { // a is sorted by seed
		if _, ok := sb[r.Seed]; !ok {
			pd.UnpairedMethod = append(pd.UnpairedMethod, r.Seed)
			continue
		}
		both = append(both, r.Seed)
		if i := slices.IndexFunc(b, func(o Result) bool { return o.Seed == r.Seed }); i >= 0 {
			if diff := pairDiffers(r, b[i]); len(diff) > 0 {
				pd.Mismatches = append(pd.Mismatches, PairMismatch{Dataset: d, Seed: r.Seed, Differs: diff})
			}
		}
		_, ia := ra[r.Seed]
		_, ib := rb[r.Seed]
		if ia && ib {
			reBoth = append(reBoth, r.Seed)
		} else {
			pd.NotReevaluated = append(pd.NotReevaluated, r.Seed)
		}
	}
	for _, r := range b {
		if _, ok := sa[r.Seed]; !ok {
			pd.UnpairedOver = append(pd.UnpairedOver, r.Seed)
		}
	}
	pd.Score = measure(both, sa, sb, level, margin)
	pd.Verdict, pd.Equivalent = pd.Score.Verdict, pd.Score.Equivalent
	if reevaluated {
		m := measure(reBoth, ra, rb, level, margin)
		pd.Reevaluated = &m
		pd.Verdict, pd.Equivalent = combine(pd.Score, m)
	} else {
		pd.NotReevaluated = nil
	}
	return pd
}

// seedList writes seeds as "0, 1, 2", or "–" for none.
func seedList(seeds []uint64) string {
	if len(seeds) == 0 {
		return "–"
	}
	s := make([]string, len(seeds))
	for i, v := range seeds {
		s[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(s, ", ")
}

// unpaired writes a comparison's unpaired seeds as "A: 3; B: 4", "–" for none.
func unpaired(d PairedDifference) string {
	var parts []string
	if len(d.UnpairedMethod) > 0 {
		parts = append(parts, fmt.Sprintf("only %s: %s", d.Method, seedList(d.UnpairedMethod)))
	}
	if len(d.UnpairedOver) > 0 {
		parts = append(parts, fmt.Sprintf("only %s: %s", d.Over, seedList(d.UnpairedOver)))
	}
	if len(d.NotReevaluated) > 0 {
		parts = append(parts, "not re-evaluated: "+seedList(d.NotReevaluated))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, "; ")
}

// measureCells writes a measure as its n, mean ± std, interval and verdict.
func measureCells(m PairedMeasure) string {
	ms := "–"
	switch {
	case m.N() == 1:
		ms = fmt.Sprintf("%+.1f", m.Mean)
	case m.N() > 1:
		ms = fmt.Sprintf("%+.1f ± %.1f", m.Mean, m.Std)
	}
	v := m.Verdict
	if m.Equivalent {
		v += ", equivalent"
	}
	boot := "–"
	if m.Boot != nil {
		boot = interval(m.Boot.Lo, m.Boot.Hi)
	}
	return fmt.Sprintf("%d | %s | %s | %s | %s", m.N(), ms, interval(m.Lo, m.Hi), boot, v)
}

// combined writes a comparison's combined verdict.
func combined(d PairedDifference) string {
	if d.Equivalent {
		return d.Verdict + ", equivalent"
	}
	return d.Verdict
}

// PairedMarkdown renders the paired differences with a line on how to
// read them; "" when there are none.
func (r *Report) PairedMarkdown() string {
	if len(r.Paired) == 0 {
		return ""
	}
	var b strings.Builder
	level := fmt.Sprintf("%.0f%%", 100*r.Settings.Level)
	margin := r.Settings.EquivalenceMargin
	fmt.Fprintf(&b, "Paired by seed (runs with the same seed share initial weights, minibatches and evaluation states): per "+
		"dataset, the differences A − B seed by seed, their n, mean ± sample std and the %s Student-t interval of the mean. "+
		"A *beats* B when the interval excludes 0 with a positive mean, *loses* when it excludes 0 with a negative mean, "+
		"otherwise *no difference detected*; *equivalent* when the whole interval lies within ±%g points. ", level, margin)
	if r.Settings.ReevaluationEpisodes != "" {
		fmt.Fprintf(&b, "Two measures: score (%s) and re-evaluated (the final policy's re-evaluation, %s); the verdict "+
			"says beats or loses only when both do, equivalent only when both intervals lie within ±%g.\n\n",
			r.Settings.Score, r.Settings.ReevaluationEpisodes, margin)
		b.WriteString("| comparison | dataset | score: n | mean ± std | " + level + " t-CI | bootstrap CI | verdict | re-evaluated: n | mean ± std | " +
			level + " t-CI | bootstrap CI | verdict | verdict, both measures | unpaired seeds |\n|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|---|\n")
	} else {
		fmt.Fprintf(&b, "One measure: score (%s); no re-evaluations were given (--reevaluations), so the study's second "+
			"measure is missing.\n\n", r.Settings.Score)
		b.WriteString("| comparison | dataset | n | mean ± std | " + level + " t-CI | bootstrap CI | verdict | unpaired seeds |\n|---|---|---:|---:|---:|---:|---|---|\n")
	}
	for _, d := range r.Paired {
		fmt.Fprintf(&b, "| %s − %s | %s | %s |", d.Method, d.Over, d.Dataset, measureCells(d.Score))
		if d.Reevaluated != nil {
			fmt.Fprintf(&b, " %s | %s |", measureCells(*d.Reevaluated), combined(d))
		}
		fmt.Fprintf(&b, " %s |\n", unpaired(d))
	}
	b.WriteString(pairMismatchNote(r.Paired))
	return b.String()
}

// PairedCSV renders the paired differences in long form: one line per
// comparison × dataset × measure (score, reevaluated, and "both" for the
// combined verdict when there are re-evaluations), seeds and differences
// space-separated.
func (r *Report) PairedCSV() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"method", "over", "dataset", "measure", "n", "seeds", "differences", "mean", "std", "lo", "hi",
		"verdict", "equivalent", "unpaired_method_seeds", "unpaired_over_seeds", "not_reevaluated_seeds"})
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	seeds := func(s []uint64) string { return strings.ReplaceAll(seedList(s), ", ", " ") }
	for _, d := range r.Paired {
		tail := []string{strings.Trim(seeds(d.UnpairedMethod), "–"), strings.Trim(seeds(d.UnpairedOver), "–"), strings.Trim(seeds(d.NotReevaluated), "–")}
		row := func(name string, m PairedMeasure) {
			diffs := make([]string, len(m.Differences))
			for i, v := range m.Differences {
				diffs[i] = f(v)
			}
			_ = w.Write(append([]string{d.Method, d.Over, d.Dataset, name, strconv.Itoa(m.N()), strings.Trim(seeds(m.Seeds), "–"),
				strings.Join(diffs, " "), f(m.Mean), f(m.Std), f(m.Lo), f(m.Hi), m.Verdict, strconv.FormatBool(m.Equivalent)}, tail...))
		}
		row("score", d.Score)
		if d.Reevaluated != nil {
			row("reevaluated", *d.Reevaluated)
			_ = w.Write(append([]string{d.Method, d.Over, d.Dataset, "both", "", "", "", "", "", "", "", d.Verdict,
				strconv.FormatBool(d.Equivalent)}, tail...))
		}
	}
	w.Flush()
	return b.String()
}
