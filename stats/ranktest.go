package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
)

// RankTest is a stratified permutation test of the probability of
// improvement P(X > Y): under the null hypothesis that on every task the
// runs of X and Y come from the same distribution, the method labels are
// exchangeable within each task, so the p-value is the fraction of all
// relabellings (the runs of a task split into groups of the observed sizes,
// independently per task) whose P(X > Y) is at least as extreme as the
// observed one. On one task it is the exact Mann–Whitney U test (ties scored
// ½, as in ProbImprovement).
//
// It complements the bootstrap interval of P(X > Y), which is degenerate
// when every run of one method beats every run of the other: each resample
// of fully ordered runs stays fully ordered, so the interval is [0, 0] or
// [1, 1] whatever the number of seeds. The test's p-value then says how
// unlikely that ordering is by chance (1/20 for 3 + 3 runs on one task).
type RankTest struct {
	// PGreater is the one-sided p-value for "X beats Y": the null
	// probability of a P(X > Y) at least as large as the observed one.
	PGreater float64
	// PLess is the one-sided p-value for "Y beats X": the null probability
	// of a P(X > Y) at most as large as the observed one.
	PLess float64
	// Relabellings is the number of relabellings behind the p-values: all
	// of them when Exact, else the number of Monte Carlo draws.
	Relabellings float64
	// Exact is true when the null distribution was counted in full (the
	// p-values are exact), false for a Monte Carlo estimate ((1+c)/(1+R)).
	Exact bool
}

// RankTestDraws is the number of random relabellings drawn when the exact
// null distribution is too large to count (many runs on many tasks): the
// Monte Carlo p-value then has a standard error below 0.0036.
const RankTestDraws = 20000

// rankTestCells bounds the work of the exact count (table cells of the
// subset-sum count per task, and of the distribution of the total).
const rankTestCells = 50_000_000

// PermutationPoI runs the stratified permutation test of P(X > Y) over the
// tasks where both x and y have runs (x and y must list the same tasks in
// the same order). It counts the null distribution exactly when that takes
// at most rankTestCells table cells, which covers every study of a few
// datasets × ≤ 20 seeds; otherwise it draws RankTestDraws relabellings from
// rng. With no task in common the p-values are NaN.
func PermutationPoI(x, y Tasks, rng *rand.Rand) RankTest {
	return permutationPoI(x, y, rng, rankTestCells)
}

// stratum is one task's pooled runs: the first n are X's.
type stratum struct {
	v    []float64
	n    int
	w    int64 // weight of 2U in the integer statistic: L/(n·m)
	twoU int64 // observed 2U (2 per pair X wins, 1 per tie)
}

func permutationPoI(x, y Tasks, rng *rand.Rand, cells int) RankTest {
	nan := RankTest{PGreater: math.NaN(), PLess: math.NaN()}
	var st []stratum
	l, uneven := int64(1), false
	for t := range x {
		if t >= len(y) || len(x[t]) == 0 || len(y[t]) == 0 {
			continue
		}
		s := stratum{v: append(append([]float64(nil), x[t]...), y[t]...), n: len(x[t])}
		s.twoU = twoU(s.v, s.n)
		st = append(st, s)
		if nm := int64(len(x[t]) * len(y[t])); !uneven {
			l = l / gcd(l, nm) * nm
			uneven = l > 1<<40 // too many different group sizes for an integer statistic
		}
	}
	if len(st) == 0 {
		return nan
	}
	if uneven {
		return monteCarloPoI(st, rng)
	}
	// The statistic T = Σ_t 2U_t · L/(n_t m_t) = 2·L·(number of tasks)·P(X > Y)
	// is an integer, so "at least as large" is decided without rounding.
	var obs int64
	for i := range st {
		st[i].w = l / int64(st[i].n*(len(st[i].v)-st[i].n))
		obs += st[i].w * st[i].twoU
	}
	dist, ok := exactNull(st, cells)
	if !ok {
		return monteCarloPoI(st, rng)
	}
	var total, ge, le float64
	for v, c := range dist {
		total += c
		if int64(v) >= obs {
			ge += c
		}
		if int64(v) <= obs {
			le += c
		}
	}
	return RankTest{PGreater: ge / total, PLess: le / total, Relabellings: total, Exact: true}
}

// twoU is 2·U of the first n values against the rest: 2 per pair the first
// group wins, 1 per tie.
func twoU(v []float64, n int) int64 {
	var u int64
	for _, a := range v[:n] {
		for _, b := range v[n:] {
			switch {
			case a > b:
				u += 2
			case a == b:
				u++
			}
		}
	}
	return u
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// exactNull counts the null distribution of T: index = value of T, entry =
// number of relabellings. Per task, 2U = 2R − n(n+1) where R is the sum of
// the n chosen runs' midranks (ties share the mean of their ranks, so 2R
// is an integer), and the number of n-subsets with each 2R is a subset-sum
// count; the tasks' distributions are then convolved. ok is false when the
// tables would exceed cells entries.
func exactNull(st []stratum, cells int) (dist []float64, ok bool) {
	dist = []float64{1}
	for _, s := range st {
		k := len(s.v)
		r2 := midranks2(s.v)
		maxR := int64(0)
		for _, r := range r2 {
			maxR += r
		}
		if int64(s.n+1)*(maxR+1)*int64(k) > int64(cells) {
			return nil, false
		}
		// count[j][r] = number of j-subsets of the runs seen so far whose
		// doubled midranks sum to r.
		count := make([][]float64, s.n+1)
		for j := range count {
			count[j] = make([]float64, maxR+1)
		}
		count[0][0] = 1
		for _, r := range r2 {
			for j := s.n; j >= 1; j-- {
				for sum := maxR; sum >= r; sum-- {
					count[j][sum] += count[j-1][sum-r]
				}
			}
		}
		m := int64(k - s.n)
		task := make([]float64, 2*int64(s.n)*m+1) // index 2U
		off := int64(s.n * (s.n + 1))
		for sum, c := range count[s.n] {
			if c == 0 {
				continue
			}
			task[int64(sum)-off] += c
		}
		span := int64(len(dist)-1) + s.w*(int64(len(task))-1) + 1
		if span*int64(len(task)) > int64(cells) {
			return nil, false
		}
		next := make([]float64, span)
		for a, ca := range dist {
			if ca == 0 {
				continue
			}
			for u, cu := range task {
				if cu != 0 {
					next[int64(a)+s.w*int64(u)] += ca * cu
				}
			}
		}
		dist = next
	}
	return dist, true
}

// midranks2 returns twice the midrank of each value among v (ranks 1…len(v);
// tied values share the mean of their ranks).
func midranks2(v []float64) []int64 {
	r := make([]int64, len(v))
	for i, a := range v {
		less, equal := 0, 0
		for _, b := range v {
			switch {
			case b < a:
				less++
			case b == a:
				equal++
			}
		}
		// Ranks less+1 … less+equal, mean less + (equal+1)/2.
		r[i] = int64(2*less + equal + 1)
	}
	return r
}

// monteCarloPoI estimates the test's p-values from RankTestDraws random
// relabellings (each task's runs shuffled independently), with the
// add-one estimate (1+c)/(1+R), which never reports p = 0.
func monteCarloPoI(st []stratum, rng *rand.Rand) RankTest {
	var obs float64
	for _, s := range st {
		obs += float64(s.twoU) / float64(s.n*(len(s.v)-s.n))
	}
	// Compare with a relative tolerance: the float sum of a relabelling
	// equal to the observed one may differ from it in the last bits.
	tol := 1e-9 * math.Max(1, float64(len(st)))
	pool := make([][]float64, len(st))
	for i, s := range st {
		pool[i] = append([]float64(nil), s.v...)
	}
	var ge, le float64
	for range RankTestDraws {
		var t float64
		for i, s := range st {
			p := pool[i]
			rng.Shuffle(len(p), func(a, b int) { p[a], p[b] = p[b], p[a] })
			t += float64(twoU(p, s.n)) / float64(s.n*(len(p)-s.n))
		}
		if t >= obs-tol {
			ge++
		}
		if t <= obs+tol {
			le++
		}
	}
	return RankTest{PGreater: (1 + ge) / (1 + RankTestDraws), PLess: (1 + le) / (1 + RankTestDraws), Relabellings: RankTestDraws}
}

// MarshalJSON writes the p-values as numbers, or null when no task is
// shared (NaN is not JSON).
func (r RankTest) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"p_greater": NullIfNaN(r.PGreater), "p_less": NullIfNaN(r.PLess),
		"relabellings": r.Relabellings, "exact": r.Exact})
}
