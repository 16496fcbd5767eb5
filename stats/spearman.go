package stats

import (
	"fmt"
	"math"
	"slices"
)

// Spearman returns the Spearman rank correlation of x and y (average ranks
// for ties).
func Spearman(x, y []float64) (float64, error) {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN(), fmt.Errorf("spearman: need two equal-length series of at least 2 values (got %d and %d)", len(x), len(y))
	}
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN(), fmt.Errorf("spearman: a series is constant")
	}
	return sxy / math.Sqrt(sxx*syy), nil
}

// ranks returns the ranks of x from 1, ties sharing their average rank.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}
