package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Welch's test against scipy (stats.ttest_ind with equal_var=False, and
// the interval from stats.t.ppf with the Welch–Satterthwaite df), on
// samples of the study's sizes and on unequal ones.
func TestWelchMatchesScipy(t *testing.T) {
	cases := [][2][]float64{
		{{54.8, 73.0, 45.0}, {88.6, 91.8, 75.3}}, // the study's KFC++ and CQL final scores on hopper-medium
		{{50.8, 36.0}, {46.7, 66.2, 12.5}},
		{{1.5, 2.25, 3.0, 10.0, 0.5}, {4.0, 4.5}},
	}
	script := `
import json, sys
import numpy as np
from scipy import stats
out = []
for x, y in json.loads(sys.argv[1]):
    x, y = np.array(x), np.array(y)
    r = stats.ttest_ind(x, y, equal_var=False)
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    df = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1))
    d, se = x.mean() - y.mean(), np.sqrt(vx + vy)
    q = stats.t.ppf(0.975, df)
    out.append([d, r.statistic, df, r.pvalue, d - q * se, d + q * se])
print(json.dumps(out))
`
	var ref [][6]float64
	scipyJSON(t, script, cases, &ref)
	rel := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for i, c := range cases {
		w, ok := WelchTest(c[0], c[1], 0.95)
		want := ref[i]
		if !ok || w.N != len(c[0]) || w.M != len(c[1]) || !rel(w.Diff, want[0]) || !rel(w.T, want[1]) || !rel(w.DF, want[2]) ||
			!rel(w.P, want[3]) || !rel(w.Lo, want[4]) || !rel(w.Hi, want[5]) {
			t.Errorf("case %d: %+v; scipy diff %v t %v df %v p %v CI [%v, %v]", i, w, want[0], want[1], want[2], want[3], want[4], want[5])
		}
	}
}

func TestWelchEdgeCases(t *testing.T) {
	if _, ok := WelchTest([]float64{1}, []float64{1, 2}, 0.95); ok {
		t.Error("one score in x: want no test")
	}
	if _, ok := WelchTest([]float64{1, 2}, nil, 0.95); ok {
		t.Error("no scores in y: want no test")
	}
	// No spread in either sample: the difference is defined, the test is not.
	w, ok := WelchTest([]float64{3, 3}, []float64{1, 1, 1}, 0.95)
	if !ok || w.Diff != 2 || w.SE != 0 || !math.IsNaN(w.T) || !math.IsNaN(w.P) || !math.IsNaN(w.Lo) || !math.IsNaN(w.Hi) {
		t.Errorf("no spread: %+v", w)
	}
	b, err := json.Marshal(w)
	if err != nil || !strings.Contains(string(b), `"p_two_sided":null`) || !strings.Contains(string(b), `"diff":2`) {
		t.Errorf("JSON %s (%v)", b, err)
	}
	// A wider level gives a wider interval around the same difference.
	x, y := []float64{1, 4, 2, 8}, []float64{3, 5, 9}
	w90, _ := WelchTest(x, y, 0.90)
	w99, _ := WelchTest(x, y, 0.99)
	if !(w99.Lo < w90.Lo && w90.Hi < w99.Hi) || w90.Diff != w99.Diff || w90.P != w99.P {
		t.Errorf("90%% %+v, 99%% %+v", w90, w99)
	}
}
