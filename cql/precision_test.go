package cql

import (
	"math"
	"testing"
	"time"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/learntest"
	"github.com/koopq/koopq/sac"
)

// bf16 mixed precision must learn as well as f32: CQL on the same
// cartpole-continuous data as TestCQLLearnsCartPole (real terminal states),
// 3 seeds per precision with oneDNN; every run must beat the behaviour
// policy by 5 of its standard errors, and the precisions' mean returns must
// differ by less than the seed noise (3 standard errors of the difference,
// from the seeds' spread).
func TestCQLBF16LearnsLikeF32(t *testing.T) {
	if testing.Short() {
		t.Skip("learning test")
	}
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision) }()
	if blas.Configure("onednn", "bf16") != nil {
		t.Skip("no bf16 GEMM in this build or on this CPU")
	}
	d, rets, err := learntest.Collect(learntest.Behaviour{Noise: 0.5, Eps: 0.4}, 20000, 1)
	if err != nil {
		t.Fatal(err)
	}
	bm, bse := learntest.MeanSE(rets)
	e, err := env.Make(learntest.Env)
	if err != nil {
		t.Fatal(err)
	}
	scale, err := sac.Scale(e)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 3000
	seeds := []uint64{1, 2, 3}
	scores := map[string][]float64{}
	for _, prec := range []string{"f32", "bf16"} {
		if err := blas.Configure("onednn", prec); err != nil {
			t.Fatal(err)
		}
		for _, seed := range seeds {
			t0 := time.Now()
			cfg := smallConfig(steps)
			cfg.Seed = seed
			_, res := trainAndScore(t, cfg, d, scale)
			t.Logf("%s seed %d: %.1f ± %.1f (%.1fs)", prec, seed, res.Mean, res.Std, time.Since(t0).Seconds())
			scores[prec] = append(scores[prec], res.Mean)
			if res.Mean <= bm+5*bse {
				t.Errorf("%s seed %d: return %.1f, want > behaviour + 5 SE = %.1f", prec, seed, res.Mean, bm+5*bse)
			}
		}
	}
	mf, sf := meanStd(scores["f32"])
	mb, sb := meanStd(scores["bf16"])
	se := math.Sqrt((sf*sf + sb*sb) / float64(len(seeds)))
	t.Logf("f32 %.1f ± %.1f, bf16 %.1f ± %.1f over %d seeds; difference %.1f, 3 SE = %.1f", mf, sf, mb, sb, len(seeds), mb-mf, 3*se)
	if math.Abs(mb-mf) > 3*se {
		t.Errorf("bf16 mean return %.1f vs f32 %.1f: difference %.1f exceeds 3 standard errors (%.1f)", mb, mf, mb-mf, 3*se)
	}
}

// meanStd returns the mean and the sample standard deviation of x.
func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)-1))
}
