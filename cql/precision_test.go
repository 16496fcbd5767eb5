package cql

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/blas"
)

// bf16 mixed precision must learn as well as f32: CQL on the same
// Pendulum-medium data with 3 seeds per precision; the mean returns must
// differ by less than the seed noise (3 standard errors of the difference,
// from the seeds' spread), and every run must beat random by a wide margin (250; one run's 20-episode
// mean has a standard error of about 120 here).
func TestCQLBF16LearnsLikeF32(t *testing.T) {
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision) }()
	if blas.Configure("onednn", "bf16") != nil {
		t.Skip("no bf16 GEMM in this build or on this CPU")
	}
	data, info := pendulumData(t)
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
			tr, err := NewTrainer(cfg, data["medium"], augment.None{}, pendulumScale(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Run(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			pol := tr.Policy()
			res, err := eval.Evaluate("pendulum", func() eval.Policy { return pol.Clone() }, 20, 11, 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed %d: %.1f ± %.1f (%.1fs)", prec, seed, res.Mean, res.Std, time.Since(t0).Seconds())
			scores[prec] = append(scores[prec], res.Mean)
			if res.Mean < info.RandomReturn+250 {
				t.Errorf("%s seed %d: return %.1f, want 250 above random (%.1f)", prec, seed, res.Mean, info.RandomReturn)
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
