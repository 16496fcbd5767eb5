package augment_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
)

// AddNoise writes src + σ·z with z the generator's next standard normals,
// in order (so a seed fixes the augmentation).
func TestAddNoiseDraws(t *testing.T) {
	src := []float32{1, -2, 3}
	dst := make([]float32, 3)
	augment.AddNoise(dst, src, 0.1, rand.New(rand.NewPCG(7, 7)))
	ref := rand.New(rand.NewPCG(7, 7))
	for i, v := range src {
		if want := v + float32(0.1*ref.NormFloat64()); dst[i] != want {
			t.Fatalf("dst[%d] = %v, want %v", i, dst[i], want)
		}
	}
}

// DefaultOptions carries the documented defaults (the paper's and the
// authors' values; the cache bound 4 GiB holds ≈ 900k KFC++ transitions at
// N = 32, so the D4RL datasets are cached whole by default).
func TestDefaultOptionsValues(t *testing.T) {
	o := augment.DefaultOptions()
	if o.GaussianSigma != 3e-3 || o.KoopmanProb != 0.8 || o.ShiftSigma != 1 || o.CacheBytes() != 4<<30 || o.CacheGiB != 4 || o.Residual || o.ShiftL2 != 0 ||
		o.LatentSigma != 3e-3 || o.FwdSigma != 6e-3 || o.AdvEps != 1e-4 || o.AdvMode != "l2" {
		t.Fatalf("DefaultOptions() = %+v", o)
	}
}

// New accepts σ = 0 for the Gaussian augmenter (no noise: s̃ = s) and
// rejects a negative σ, naming it.
func TestNewGaussianSigmaEdges(t *testing.T) {
	o := augment.DefaultOptions()
	o.GaussianSigma = 0
	a, err := augment.New("gaussian", o)
	if err != nil {
		t.Fatalf("σ = 0 rejected: %v", err)
	}
	b := dataset.NewBatch(1, 2, 1)
	copy(b.Obs, []float32{1, 2})
	copy(b.NextObs, []float32{3, 4})
	obs, next := make([]float32, 2), make([]float32, 2)
	if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(obs, b.Obs) || !slices.Equal(next, b.NextObs) {
		t.Fatalf("σ = 0 moved the states: %v %v", obs, next)
	}
	o.GaussianSigma = -1e-3
	if _, err := augment.New("gaussian", o); err == nil || !strings.Contains(err.Error(), "gaussian sigma") {
		t.Errorf("σ < 0: error %v, want one naming gaussian sigma", err)
	}
}

// The Koopman augmenters check their numeric options before anything else:
// edge values (p_K 0 and 1, zero σs) pass on to the missing-model error,
// out-of-range or non-finite ones are named.
func TestKoopmanOptionRanges(t *testing.T) {
	for _, c := range []struct {
		f    func(*augment.Options)
		want string
	}{
		{func(o *augment.Options) { o.KoopmanProb = 0 }, "needs a trained Koopman model"},
		{func(o *augment.Options) { o.KoopmanProb = 1 }, "needs a trained Koopman model"},
		{func(o *augment.Options) { o.ShiftSigma, o.LatentSigma, o.FwdSigma = 0, 0, 0 }, "needs a trained Koopman model"},
		{func(o *augment.Options) { o.KoopmanProb = -0.01 }, "koopman probability"},
		{func(o *augment.Options) { o.KoopmanProb = 1.01 }, "koopman probability"},
		{func(o *augment.Options) { o.KoopmanProb = math.NaN() }, "koopman probability"},
		{func(o *augment.Options) { o.ShiftSigma = -1e-9 }, "shift sigma"},
		{func(o *augment.Options) { o.ShiftSigma = math.Inf(1) }, "shift sigma"},
		{func(o *augment.Options) { o.LatentSigma = -1e-9 }, "latent sigma"},
		{func(o *augment.Options) { o.FwdSigma = -1e-9 }, "fwd sigma"},
	} {
		o := augment.DefaultOptions()
		c.f(&o)
		if _, err := augment.NewKoopman("kfc++", o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %+v: error %v, want one containing %q", o, err, c.want)
		}
	}
}

// TestCacheBytesBeyondInt64: a --cache-gib too large for int64 bytes is no
// bound; converting it gave a negative count, which turned the cache off.
func TestCacheBytesBeyondInt64(t *testing.T) {
	for _, gib := range []float64{1e10, 1e300} {
		if b := (augment.Params{CacheGiB: gib}).CacheBytes(); b != math.MaxInt64 {
			t.Errorf("CacheGiB %g: CacheBytes %d, want MaxInt64", gib, b)
		}
	}
	if b := (augment.Params{CacheGiB: 0.5}).CacheBytes(); b != 1<<29 {
		t.Errorf("CacheGiB 0.5: CacheBytes %d", b)
	}
}
