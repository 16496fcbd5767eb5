package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// The study's hopper-medium finals: every KFC++ run below every CQL run. Of
// the 20 ways to split six runs into 3 + 3 only the observed one is that
// extreme, so p(<) = 1/20; with a second task ordered the same way, 1/400.
func TestRankTestFullyOrdered(t *testing.T) {
	kfc, cql := []float64{54.8, 73.0, 45.0}, []float64{88.6, 91.8, 75.3}
	r := PermutationPoI(Tasks{kfc}, Tasks{cql}, rand.New(rand.NewPCG(1, 2)))
	if !r.Exact || r.Relabellings != 20 || !near(r.PLess, 0.05, 1e-15) || r.PGreater != 1 {
		t.Errorf("one task: %+v, want exact, 20 relabellings, p(<) 0.05, p(>) 1", r)
	}
	r = PermutationPoI(Tasks{kfc, {1, 2}}, Tasks{cql, {3, 4}}, rand.New(rand.NewPCG(1, 2)))
	if !r.Exact || r.Relabellings != 120 || !near(r.PLess, 1.0/120, 1e-15) {
		t.Errorf("two tasks (3+3, 2+2): %+v, want exact, 20·6 relabellings, p(<) 1/120", r)
	}
	// The reverse comparison mirrors the p-values.
	r = PermutationPoI(Tasks{cql}, Tasks{kfc}, nil)
	if !near(r.PGreater, 0.05, 1e-15) || r.PLess != 1 {
		t.Errorf("reversed: %+v", r)
	}
	// Tasks where one side has no runs are left out; none in common → NaN.
	r = PermutationPoI(Tasks{kfc, {}}, Tasks{cql, {1, 2, 3}}, nil)
	if !near(r.PLess, 0.05, 1e-15) {
		t.Errorf("one-sided second task not left out: %+v", r)
	}
	r = PermutationPoI(Tasks{kfc, {}}, Tasks{{}, {1, 2, 3}}, nil)
	if !math.IsNaN(r.PGreater) || !math.IsNaN(r.PLess) || r.Exact {
		t.Errorf("no common task: %+v, want NaN p-values", r)
	}
}

// bruteForcePoI enumerates every relabelling of every task (bit masks of
// the pooled runs) and evaluates ProbImprovement on each, independently of
// the midrank subset-sum count and the convolution.
func bruteForcePoI(x, y Tasks) (ge, le, total float64) {
	obs := ProbImprovement(x, y)
	bx, by := make(Tasks, len(x)), make(Tasks, len(y))
	var rec func(t int)
	rec = func(t int) {
		if t == len(x) {
			v := ProbImprovement(bx, by)
			total++
			if v >= obs-1e-12 {
				ge++
			}
			if v <= obs+1e-12 {
				le++
			}
			return
		}
		pool := append(append([]float64(nil), x[t]...), y[t]...)
		for mask := uint(0); mask < 1<<len(pool); mask++ {
			if bits.OnesCount(mask) != len(x[t]) {
				continue
			}
			bx[t], by[t] = nil, nil
			for i, v := range pool {
				if mask&(1<<i) != 0 {
					bx[t] = append(bx[t], v)
				} else {
					by[t] = append(by[t], v)
				}
			}
			rec(t + 1)
		}
	}
	rec(0)
	return ge / total, le / total, total
}

// Random tasks of uneven sizes with many ties: the exact count must equal
// the brute-force enumeration.
func TestRankTestMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 40 {
		k := 1 + rng.IntN(3)
		x, y := make(Tasks, k), make(Tasks, k)
		for i := range k {
			for range 1 + rng.IntN(4) {
				x[i] = append(x[i], float64(rng.IntN(5)))
			}
			for range 1 + rng.IntN(4) {
				y[i] = append(y[i], float64(rng.IntN(5))+0.5*float64(rng.IntN(2)))
			}
		}
		got := PermutationPoI(x, y, nil)
		ge, le, total := bruteForcePoI(x, y)
		if !got.Exact || got.Relabellings != total || !near(got.PGreater, ge, 1e-12) || !near(got.PLess, le, 1e-12) {
			t.Fatalf("trial %d x=%v y=%v: got %+v, brute force p(>) %v p(<) %v over %v", trial, x, y, got, ge, le, total)
		}
	}
}

// One task is the Mann–Whitney U test: compare with scipy's exact test
// (no ties) and with scipy's exact permutation test of U (ties).
func TestRankTestMatchesScipy(t *testing.T) {
	cases := [][2][]float64{
		{{1.2, 3.4, 5.1, 0.7, 9.9}, {2.2, 4.4, 6.0, 7.1, 8.3, 10.5}},
		{{1, 2, 2, 3, 5, 5}, {2, 3, 3, 4, 5, 6, 6}},
	}
	script := `
import json, sys
import numpy as np
from scipy import stats
out = []
for x, y in json.loads(sys.argv[1]):
    x, y = np.array(x), np.array(y)
    u = lambda a, b, axis: stats.mannwhitneyu(a, b, axis=axis, method='asymptotic').statistic
    g = stats.permutation_test((x, y), u, permutation_type='independent', n_resamples=np.inf, alternative='greater').pvalue
    l = stats.permutation_test((x, y), u, permutation_type='independent', n_resamples=np.inf, alternative='less').pvalue
    e = [stats.mannwhitneyu(x, y, alternative=a, method='exact').pvalue for a in ('greater', 'less')]
    out.append([g, l] + e)
print(json.dumps(out))
`
	var ref [][4]float64
	scipyJSON(t, script, cases, &ref)
	for i, c := range cases {
		r := PermutationPoI(Tasks{c[0]}, Tasks{c[1]}, nil)
		if !near(r.PGreater, ref[i][0], 1e-12) || !near(r.PLess, ref[i][1], 1e-12) {
			t.Errorf("case %d: p(>) %v p(<) %v, scipy permutation_test %v %v", i, r.PGreater, r.PLess, ref[i][0], ref[i][1])
		}
		if i == 0 && (!near(r.PGreater, ref[i][2], 1e-12) || !near(r.PLess, ref[i][3], 1e-12)) {
			t.Errorf("no ties: p(>) %v p(<) %v, scipy mannwhitneyu exact %v %v", r.PGreater, r.PLess, ref[i][2], ref[i][3])
		}
		t.Logf("case %d: koopq p(>) %.6g p(<) %.6g; scipy %.6g %.6g", i, r.PGreater, r.PLess, ref[i][0], ref[i][1])
	}
}

// When the exact count is too large the test draws relabellings: the
// estimate agrees with the exact p-values to its standard error, is
// reproducible from the seed, and says that it is an estimate.
func TestRankTestMonteCarlo(t *testing.T) {
	x := Tasks{{3, 5, 1, 8, 7}, {2, 2, 9, 4}, {6, 1, 3}}
	y := Tasks{{2, 4, 0, 6, 3, 1}, {1, 3, 2}, {5, 2, 4, 0}}
	exact := PermutationPoI(x, y, nil)
	mc := permutationPoI(x, y, rand.New(rand.NewPCG(3, 4)), 0)
	if !exact.Exact || mc.Exact || mc.Relabellings != RankTestDraws {
		t.Fatalf("exact %+v, monte carlo %+v", exact, mc)
	}
	for _, p := range [][2]float64{{mc.PGreater, exact.PGreater}, {mc.PLess, exact.PLess}} {
		se := math.Sqrt(p[1] * (1 - p[1]) / RankTestDraws)
		if math.Abs(p[0]-p[1]) > 4*se+1.0/RankTestDraws {
			t.Errorf("monte carlo p %v, exact %v (se %.2g)", p[0], p[1], se)
		}
	}
	again := permutationPoI(x, y, rand.New(rand.NewPCG(3, 4)), 0)
	if again != mc {
		t.Errorf("same seed, different estimate: %+v vs %+v", again, mc)
	}
	t.Logf("exact p(>) %.5f p(<) %.5f over %.0f; monte carlo %.5f %.5f", exact.PGreater, exact.PLess, exact.Relabellings, mc.PGreater, mc.PLess)
}
