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

// A contact is a strict sign change of a listed velocity: an exact zero on
// either side does not count, nor does a change in an unlisted dimension.
func TestIsContact(t *testing.T) {
	for _, c := range []struct {
		s, next []float32
		dims    []int
		want    bool
	}{
		{[]float32{0, 1}, []float32{0, -1}, []int{1}, true},
		{[]float32{0, -2}, []float32{0, 0.5}, []int{1}, true},
		{[]float32{0, 1}, []float32{0, 2}, []int{1}, false},
		{[]float32{0, -1}, []float32{0, 0}, []int{1}, false},
		{[]float32{0, 0}, []float32{0, -1}, []int{1}, false},
		{[]float32{1, 1}, []float32{-1, 1}, []int{1}, false},
		{[]float32{1, 1}, []float32{-1, 1}, []int{1, 0}, true},
		{[]float32{1, 1}, []float32{-1, 1}, nil, false},
	} {
		if got := augment.IsContact(c.s, c.next, c.dims); got != c.want {
			t.Errorf("IsContact(%v, %v, %v) = %v, want %v", c.s, c.next, c.dims, got, c.want)
		}
	}
}

// DefaultContactDims knows each environment's velocity block, inclusive at
// both ends, and refuses a state dimension that does not match.
func TestDefaultContactDims(t *testing.T) {
	span := func(lo, hi int) []int {
		var d []int
		for j := lo; j <= hi; j++ {
			d = append(d, j)
		}
		return d
	}
	for _, c := range []struct {
		env  string
		dim  int
		want []int
		ok   bool
	}{
		{"hopper", 11, span(5, 10), true},
		{"hopper", 12, span(5, 10), false},
		{"walker2d", 17, span(8, 16), true},
		{"halfcheetah", 17, span(8, 16), true},
		{"halfcheetah", 11, span(8, 16), false},
		{"ant", 27, span(13, 26), true},
		{"ant", 111, span(13, 26), true},
		{"ant", 26, span(13, 26), false},
		{"pendulum", 3, []int{2}, true},
		{"pendulum", 4, []int{2}, false},
		{"cartpole", 4, []int{1, 3}, true},
		{"cartpole-continuous", 4, []int{1, 3}, true},
		{"cartpole-continuous", 3, []int{1, 3}, false},
		{"mountaincar-continuous", 2, []int{1}, true},
		{"mountaincar-continuous", 3, []int{1}, false},
		{"", 11, span(5, 10), true},
		{"", 17, span(8, 16), true},
		{"", 27, nil, false},
		{"unknown", 11, nil, false},
	} {
		got, ok := augment.DefaultContactDims(c.env, c.dim)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("DefaultContactDims(%q, %d) = %v, %v; want %v, %v", c.env, c.dim, got, ok, c.want, c.ok)
		}
	}
}

// NewAdversarial accepts ε = 0 (no shift) and the empty mode (l2), and
// rejects negative or non-finite ε and unknown modes, naming them.
func TestNewAdversarialEdges(t *testing.T) {
	a, err := augment.NewAdversarial(augment.Options{AdvEps: 0})
	if err != nil || a.Mode != "l2" || a.Eps != 0 {
		t.Fatalf("ε = 0, mode \"\": %+v, %v; want l2 with ε 0", a, err)
	}
	for _, eps := range []float64{-1e-9, math.NaN(), math.Inf(1)} {
		if _, err := augment.NewAdversarial(augment.Options{AdvEps: eps, AdvMode: "sign"}); err == nil || !strings.Contains(err.Error(), "eps") {
			t.Errorf("ε = %v: error %v, want one naming eps", eps, err)
		}
	}
	if _, err := augment.NewAdversarial(augment.Options{AdvEps: 1e-4, AdvMode: "fgsm"}); err == nil || !strings.Contains(err.Error(), "fgsm") {
		t.Errorf("mode fgsm: error %v, want one naming it", err)
	}
}

// S4RL-Adv hands the critic's gradient callback exactly the batch's states
// and dataset actions ([B, S] and [B, A], B rows), and keeps working when a
// later batch is larger than the first (its gradient buffer grows).
func TestAdversarialGradientCall(t *testing.T) {
	a, err := augment.NewAdversarial(augment.Options{AdvEps: 0.5, AdvMode: "raw"})
	if err != nil {
		t.Fatal(err)
	}
	for _, B := range []int{3, 5} {
		const S, A = 2, 2
		b := dataset.NewBatch(B, S, A)
		for i := range b.Obs {
			b.Obs[i], b.NextObs[i] = float32(i), float32(-i)
		}
		for i := range b.Act {
			b.Act[i] = float32(i) / 10
		}
		calls := 0
		q := func(s, act []float32, rows int, g []float32) {
			calls++
			if rows != B || !slices.Equal(s, b.Obs) || !slices.Equal(act, b.Act) || len(g) != B*S {
				t.Fatalf("QGradient got rows %d, %d states, %d actions, %d gradient slots; want %d, %v, %v, %d",
					rows, len(s), len(act), len(g), B, b.Obs, b.Act, B*S)
			}
			for i := range g {
				g[i] = 1
			}
		}
		obs, next := make([]float32, B*S), make([]float32, B*S)
		if err := a.Augment(b, obs, next, nil, q); err != nil {
			t.Fatal(err)
		}
		for i := range obs {
			if obs[i] != b.Obs[i]+0.5 || next[i] != b.NextObs[i] {
				t.Fatalf("B=%d row value %d: s̃ %v, s̃' %v; want %v, %v", B, i, obs[i], next[i], b.Obs[i]+0.5, b.NextObs[i])
			}
		}
		if calls != 1 {
			t.Fatalf("QGradient called %d times for one batch", calls)
		}
	}
}

// In l2 mode a state whose Q-gradient is zero stays where it is (no
// division by the zero norm), while the other rows move by exactly ε.
func TestAdversarialZeroGradientRow(t *testing.T) {
	a, err := augment.NewAdversarial(augment.Options{AdvEps: 0.5, AdvMode: "l2"})
	if err != nil {
		t.Fatal(err)
	}
	b := dataset.NewBatch(2, 2, 1)
	copy(b.Obs, []float32{1, 2, 3, 4})
	q := func(_, _ []float32, _ int, g []float32) { copy(g, []float32{0, 0, 3, 4}) }
	obs, next := make([]float32, 4), make([]float32, 4)
	if err := a.Augment(b, obs, next, nil, q); err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 3.3, 4.4}
	for i := range want {
		if !(math.Abs(float64(obs[i]-want[i])) <= 1e-6) { // also fails on NaN
			t.Fatalf("s̃ = %v, want %v", obs, want)
		}
	}
}

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
	if o.GaussianSigma != 3e-3 || o.KoopmanProb != 0.8 || o.ShiftSigma != 1 || o.CacheBytes != 4<<30 ||
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
