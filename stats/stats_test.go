package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMeanStdIQMHandComputed(t *testing.T) {
	x := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	if got := Mean(x); got != 5 {
		t.Errorf("Mean = %v, want 5", got)
	}
	// Σ(x−5)² = 9+1+1+1+0+0+4+16 = 32, sample std = √(32/7).
	if got, want := Std(x), math.Sqrt(32.0/7); !near(got, want, 1e-12) {
		t.Errorf("Std = %v, want %v", got, want)
	}
	if Std([]float64{3}) != 0 || !math.IsNaN(Std(nil)) || !math.IsNaN(Mean(nil)) {
		t.Error("Std/Mean of one or no values")
	}
	cases := []struct {
		x    []float64
		want float64
	}{
		{[]float64{8, 1, 7, 2, 6, 3, 5, 4}, 4.5},  // n=8: drop 1,2 and 7,8 → mean(3,4,5,6)
		{[]float64{10, 1, 2, 3}, 2.5},             // n=4: drop 1 and 10
		{[]float64{100, 1, 2, 3, -50}, 2},         // n=5: ⌊5/4⌋=1 each side → mean(1,2,3)
		{[]float64{1, 2, 3}, 2},                   // n=3: nothing dropped
		{[]float64{0, 0, 0, 0, 0, 0, 0, 1000}, 0}, // the outlier is trimmed
	}
	for _, c := range cases {
		if got := IQM(c.x); !near(got, c.want, 1e-12) {
			t.Errorf("IQM(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestProbImprovementHandComputed(t *testing.T) {
	if got := ProbImprovement(Tasks{{1, 3}}, Tasks{{2}}); got != 0.5 {
		t.Errorf("one task = %v, want 0.5", got)
	}
	if got := ProbImprovement(Tasks{{2}}, Tasks{{2}}); got != 0.5 {
		t.Errorf("tie = %v, want 0.5", got)
	}
	// Task 1: 3 > 1 → 1. Task 2: pairs (1,2) (1,3) (2,2) (2,3) → 0+0+½+0 = ½ of 4 → 0.125.
	if got := ProbImprovement(Tasks{{3}, {1, 2}}, Tasks{{1}, {2, 3}}); got != 0.5625 {
		t.Errorf("two tasks = %v, want 0.5625", got)
	}
	// P(X>Y) + P(Y>X) = 1 with ties counted half.
	x, y := Tasks{{1, 5, 2}, {7, 7}}, Tasks{{2, 2}, {7, 1, 9}}
	if s := ProbImprovement(x, y) + ProbImprovement(y, x); !near(s, 1, 1e-12) {
		t.Errorf("P(X>Y)+P(Y>X) = %v, want 1", s)
	}
	// Tasks where one side has no runs are left out.
	if got := ProbImprovement(Tasks{{3}, {}}, Tasks{{1}, {5}}); got != 1 {
		t.Errorf("with an empty task = %v, want 1", got)
	}
}

func TestProfileAndPercentile(t *testing.T) {
	p := Profile(Tasks{{1, 2}, {3, 4}}, []float64{0, 1, 2.5, 4})
	want := []float64{1, 0.75, 0.5, 0} // strictly above τ
	for i := range want {
		if p[i] != want[i] {
			t.Errorf("profile = %v, want %v", p, want)
			break
		}
	}
	// numpy.percentile([1,2,3,4], 25) = 1.75, 90 → 3.7.
	if got := Percentile([]float64{4, 1, 3, 2}, 25); !near(got, 1.75, 1e-12) {
		t.Errorf("25th percentile %v, want 1.75", got)
	}
	if got := Percentile([]float64{4, 1, 3, 2}, 90); !near(got, 3.7, 1e-12) {
		t.Errorf("90th percentile %v, want 3.7", got)
	}
}

// The bootstrap distribution of the mean of {0, 1} is 0, ½, 1 with
// probabilities ¼, ½, ¼: its 2.5% and 97.5% percentiles are 0 and 1.
func TestBootstrapEnumerableCase(t *testing.T) {
	ci := BootstrapMean([]float64{0, 1}, 20000, 0.95, rand.New(rand.NewPCG(7, 7)))
	if ci.Value != 0.5 || ci.Lo != 0 || ci.Hi != 1 {
		t.Errorf("CI = %+v, want 0.5 [0, 1]", ci)
	}
	// At 40%: the 30th and 70th percentiles fall inside the ½ mass.
	ci = BootstrapMean([]float64{0, 1}, 20000, 0.40, rand.New(rand.NewPCG(7, 7)))
	if ci.Lo != 0.5 || ci.Hi != 0.5 {
		t.Errorf("40%% CI = %+v, want [0.5, 0.5]", ci)
	}
}

// Stratification: resampling stays within each task, so two tasks whose
// seeds agree give a zero-width interval (a pooled bootstrap would not).
func TestBootstrapIsStratified(t *testing.T) {
	ci := BootstrapIQM(Tasks{{0, 0}, {10, 10}}, 2000, 0.95, rand.New(rand.NewPCG(1, 2)))
	if ci.Value != 5 || ci.Lo != 5 || ci.Hi != 5 {
		t.Errorf("CI = %+v, want 5 [5, 5]", ci)
	}
	ci = BootstrapPoI(Tasks{{3, 3}, {1, 1}}, Tasks{{1, 1}, {3, 3}}, 2000, 0.95, rand.New(rand.NewPCG(1, 2)))
	if ci.Value != 0.5 || ci.Lo != 0.5 || ci.Hi != 0.5 {
		t.Errorf("PoI CI = %+v, want 0.5 [0.5, 0.5]", ci)
	}
}

func TestBootstrapReproducible(t *testing.T) {
	x := Tasks{{1, 4, 2, 8}, {5, 7, 3}}
	a := BootstrapIQM(x, 500, 0.95, rand.New(rand.NewPCG(3, 9)))
	b := BootstrapIQM(x, 500, 0.95, rand.New(rand.NewPCG(3, 9)))
	c := BootstrapIQM(x, 500, 0.95, rand.New(rand.NewPCG(4, 9)))
	if a != b {
		t.Errorf("same seed, different CIs: %+v %+v", a, b)
	}
	if a == c {
		t.Errorf("different seeds gave identical CIs %+v (the seed is not used)", a)
	}
	if !(a.Lo <= a.Value && a.Value <= a.Hi) {
		t.Errorf("estimate outside its interval: %+v", a)
	}
}

// One task makes the stratified bootstrap an ordinary one: compare the IQM
// interval with scipy.stats.bootstrap (percentile method) on the same data.
// Both are Monte Carlo estimates from different generators, so the bounds
// agree to the resampling noise (≈0.05 here between two scipy seeds).
func TestBootstrapIQMMatchesScipy(t *testing.T) {
	x := []float64{3.1, -2.0, 7.5, 12.0, 0.4, 5.5, 9.9, -4.2, 15.3, 6.6, 2.2, 8.8, 1.0, 11.1, 4.4, -0.7, 13.5, 7.0, 3.3, 10.2}
	script := `
import json, sys
import numpy as np
from scipy import stats
x = np.array(json.loads(sys.argv[1]))
r = stats.bootstrap((x,), lambda a, axis: stats.trim_mean(a, 0.25, axis=axis), n_resamples=40000,
                    method='percentile', confidence_level=0.95, random_state=1)
print(json.dumps([stats.trim_mean(x, 0.25), r.confidence_interval.low, r.confidence_interval.high]))
`
	var ref [3]float64
	scipyJSON(t, script, x, &ref)
	ci := BootstrapIQM(Tasks{x}, 40000, 0.95, rand.New(rand.NewPCG(11, 12)))
	if !near(ci.Value, ref[0], 1e-12) {
		t.Errorf("IQM %v, scipy trim_mean %v", ci.Value, ref[0])
	}
	if !near(ci.Lo, ref[1], 0.2) || !near(ci.Hi, ref[2], 0.2) {
		t.Errorf("CI [%v, %v], scipy [%v, %v]", ci.Lo, ci.Hi, ref[1], ref[2])
	}
	t.Logf("koopq IQM %.4f [%.4f, %.4f], scipy %.4f [%.4f, %.4f]", ci.Value, ci.Lo, ci.Hi, ref[0], ref[1], ref[2])
}

// scipyJSON runs script under Debian's /usr/bin/python3 (numpy and scipy,
// installed by make deps) with in, JSON-encoded, as sys.argv[1], and
// decodes the JSON the script prints into out: the independent reference
// the statistics tests compare with.
func scipyJSON(t *testing.T, script string, in, out any) {
	t.Helper()
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command("/usr/bin/python3", "-c", script, string(js)).CombinedOutput()
	if err != nil {
		t.Fatalf("scipy reference (Debian python3-scipy under /usr/bin/python3, installed by make deps): %v\n%s", err, b)
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(b))), out); err != nil {
		t.Fatalf("scipy output %q: %v", b, err)
	}
}

// Large finite scores give finite statistics: sums and squares that
// overflow are redone on scaled values.
func TestMeanStdDoNotOverflow(t *testing.T) {
	if m := Mean([]float64{1e308, 1e308}); m != 1e308 {
		t.Errorf("Mean(1e308, 1e308) = %g", m)
	}
	if m := Mean([]float64{1e308, 1e308, -1e308}); !near(m, 1e308/3, 1e294) {
		t.Errorf("Mean(1e308, 1e308, -1e308) = %g", m)
	}
	if s := Std([]float64{1e308, -1e308}); !near(s, math.Sqrt2*1e308, 1e294) {
		t.Errorf("Std(1e308, -1e308) = %g, want %g", s, math.Sqrt2*1e308)
	}
	if s := Std([]float64{1e308, 50}); !near(s, (1e308-50)/math.Sqrt2, 1e294) {
		t.Errorf("Std(1e308, 50) = %g", s)
	}
	// Ordinary values take the plain path: the same numbers as before.
	if m, s := Mean([]float64{50, 54}), Std([]float64{50, 54}); m != 52 || s != math.Sqrt(8) {
		t.Errorf("Mean, Std of 50, 54: %v, %v", m, s)
	}
}

// One run per task: every stratified resample is the data themselves, so
// there is no interval to give (a zero-width one would claim certainty),
// whereas one task with two runs gives the bootstrap something to vary.
func TestBootstrapSingletonsGiveNoInterval(t *testing.T) {
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(5, 6)) }
	one := Tasks{{10}, {20}, {40}}
	for name, ci := range map[string]CI{
		"IQM":  BootstrapIQM(one, 500, 0.95, rng()),
		"mean": BootstrapMean([]float64{3}, 500, 0.95, rng()),
		"PoI":  BootstrapPoI(one, Tasks{{15}, {5}, {50}}, 500, 0.95, rng()),
	} {
		if math.IsNaN(ci.Value) || !math.IsNaN(ci.Lo) || !math.IsNaN(ci.Hi) {
			t.Errorf("%s: %+v, want a value and NaN bounds", name, ci)
		}
	}
	for i, ci := range BootstrapProfile(one, []float64{5, 15, 30}, 500, 0.95, rng()) {
		if !math.IsNaN(ci.Lo) || !math.IsNaN(ci.Hi) {
			t.Errorf("profile point %d: %+v, want NaN bounds", i, ci)
		}
	}
	mixed := Tasks{{10}, {20, 30}, {40}}
	if ci := BootstrapIQM(mixed, 500, 0.95, rng()); math.IsNaN(ci.Lo) || ci.Lo >= ci.Hi {
		t.Errorf("a task with two runs: %+v, want a proper interval", ci)
	}
	// The other side of a PoI can vary alone.
	if ci := BootstrapPoI(one, Tasks{{15, 0}, {5}, {50}}, 500, 0.95, rng()); math.IsNaN(ci.Lo) || ci.Lo >= ci.Hi {
		t.Errorf("PoI with a two-run task on one side: %+v, want a proper interval", ci)
	}
}
