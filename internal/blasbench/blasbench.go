// Package blasbench holds what the side-by-side benchmarks of cql and sac
// share: the list of GEMM backend × precision arms this binary can run,
// switching between them, and the median of per-iteration ratios that
// makes those benchmarks robust to load from other processes.
package blasbench

import (
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/internal/blas"
)

// Configs lists the GEMM backend × precision pairs this binary can run,
// e.g. "onednn-bf16", fastest backends first; the pure-Go backend is left
// out (10× slower, it would dominate the run time).
func Configs() []string {
	var out []string
	for _, be := range blas.Available() {
		if be == "gonum" {
			continue
		}
		for _, p := range []blas.Precision{blas.F32, blas.BF16} {
			if blas.Configure(be, p.String()) == nil {
				out = append(out, be+"-"+p.String())
			}
		}
	}
	return out
}

// Use switches the GEMM layer to name ("backend-precision", as Configs
// lists them); the configuration before the first switch is restored when
// the benchmark ends.
func Use(tb testing.TB, name string) {
	tb.Helper()
	old := blas.Describe()
	be, p, _ := strings.Cut(name, "-")
	if err := blas.Configure(be, p); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = blas.Configure(old.Backend, old.Precision) })
}

// Median returns the median of num[i]/den[i] (of num[i] when den is nil):
// ratios of times taken in the same iteration, so load that slows every
// arm alike cancels.
func Median(num, den []float64) float64 {
	r := make([]float64, len(num))
	for i, v := range num {
		r[i] = v
		if den != nil {
			r[i] = v / den[i]
		}
	}
	slices.Sort(r)
	n := len(r)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return r[n/2]
	}
	return (r[n/2-1] + r[n/2]) / 2
}
