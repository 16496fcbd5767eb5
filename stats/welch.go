package stats

import (
	"encoding/json"
	"math"

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
	return json.Marshal(map[string]any{"n": w.N, "m": w.M, "diff": NullIfNaN(w.Diff), "lo": NullIfNaN(w.Lo), "hi": NullIfNaN(w.Hi),
		"se": NullIfNaN(w.SE), "t": NullIfNaN(w.T), "df": NullIfNaN(w.DF), "p_two_sided": NullIfNaN(w.P)})
}

// TInterval is the two-sided Student-t confidence interval at level (e.g.
// 0.95) of the mean of x: mean ± t_{(1+level)/2, n−1}·s/√n, s the sample
// standard deviation. NaN bounds for fewer than two values.
func TInterval(x []float64, level float64) (lo, hi float64) {
	n := len(x)
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	m := Mean(x)
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.5+level/2) * Std(x) / math.Sqrt(float64(n))
	return m - h, m + h
}
