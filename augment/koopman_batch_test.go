package augment_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
)

// TestKoopmanRefusesBadBatches: state buffers shorter than the batch, and
// row indices outside the dataset (−1 and exactly its length), are errors
// that name the problem, for every Koopman augmenter.
func TestKoopmanRefusesBadBatches(t *testing.T) {
	d, m := propData(16, 4), propModel(t)
	for _, n := range augment.Names() {
		if !augment.NeedsKoopman(n) {
			continue
		}
		a, err := augment.New(n, propOpts(d, m))
		if err != nil {
			t.Fatal(err)
		}
		b := rowsBatch(d, 0, 4)
		rng := rand.New(rand.NewPCG(1, 2))
		full, short := make([]float32, 8), make([]float32, 7)
		for _, c := range []struct {
			what      string
			obs, next []float32
		}{{"short s_t buffer", short, full}, {"short s_{t+1} buffer", full, short}} {
			if err := a.Augment(b, c.obs, c.next, rng, nil); err == nil || !strings.Contains(err.Error(), "dimension") {
				t.Errorf("%s, %s: got %v", n, c.what, err)
			}
		}
		for _, j := range []int{-1, 16} {
			b := rowsBatch(d, 0, 4)
			b.Idx[2] = j
			err := a.Augment(b, make([]float32, 8), make([]float32, 8), rng, nil)
			if want := "outside [0, 16)"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, index %d: got %v, want %q", n, j, err, want)
			}
		}
	}
}

// TestKoopmanMeanShiftL2: Stats().MeanShiftL2 is the mean of ‖s̃_t − s_t‖₂
// over every model-branch row so far, recomputed here from the states the
// augmenter returned (two batches of different sizes).
func TestKoopmanMeanShiftL2(t *testing.T) {
	d, m := propData(64, 5), propModel(t)
	for _, n := range augment.Names() {
		if !augment.NeedsKoopman(n) {
			continue
		}
		o := propOpts(d, m)
		o.ShiftSigma, o.LatentSigma, o.FwdSigma = 5, 0.05, 0.05
		a, err := augment.New(n, o)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		rows := 0
		for i, r := range [][2]int{{0, 24}, {24, 64}} {
			b := rowsBatch(d, r[0], r[1])
			obs, _ := runAug(t, a, b, uint64(i+1), nil)
			for row := 0; row < b.B; row++ {
				dx, dy := float64(obs[2*row]-b.Obs[2*row]), float64(obs[2*row+1]-b.Obs[2*row+1])
				sum += math.Hypot(dx, dy)
				rows++
			}
		}
		want := sum / float64(rows)
		got := a.(*augment.Koopman).Stats().MeanShiftL2
		if !(want > 0) || !(math.Abs(got-want) <= 1e-9*want) {
			t.Errorf("%s: MeanShiftL2 = %v, want %v (mean over %d rows)", n, got, want, rows)
		}
	}
}

// TestKFCOneDimensionalLatent runs kfc with a one-dimensional latent space
// (N = 1, where the scalar draw per row fills the whole draw buffer) and
// checks s̃ = D((1 + ε G) E(s)) moves each row.
func TestKFCOneDimensionalLatent(t *testing.T) {
	m, err := koopman.NewModel(koopman.ModelConfig{ObsDim: 2, ActDim: 1, Latent: 1,
		EncoderHidden: "tanh", EncoderOutput: "identity", DecoderHidden: "tanh"})
	if err != nil {
		t.Fatal(err)
	}
	d := propData(32, 8)
	o := propOpts(d, m)
	o.ShiftSigma = 10
	a, err := augment.New("kfc", o)
	if err != nil {
		t.Fatalf("kfc with N = 1: %v", err)
	}
	b := rowsBatch(d, 0, 32)
	obs, next := runAug(t, a, b, 3, nil)
	var ce, cd nn.Cache
	rec := m.Decode(&cd, m.Encode(&ce, b.Obs, 32), 32) // D(E(s)): where ε = 0 would land
	for i := 0; i < 32; i++ {
		moved := 0.0
		for j := 0; j < 2; j++ {
			if math.IsNaN(float64(obs[2*i+j])) || math.IsNaN(float64(next[2*i+j])) {
				t.Fatalf("row %d: NaN in the shifted states", i)
			}
			moved = math.Max(moved, math.Abs(float64(obs[2*i+j]-rec[2*i+j])))
		}
		if !(moved > 1e-6) {
			t.Errorf("row %d: s̃_t = %v is D(E(s)) = %v: not shifted", i, obs[2*i:2*i+2], rec[2*i:2*i+2])
		}
	}
}

// TestPredictionsWithTwoActions checks the prediction ablations on a model
// with a 2-D action (the property tests' model has one, where a row's
// action slice cannot be told from a wrong stride) against Model.Predict,
// D(K(a)E(s)), computed independently for the batch:
//   - fwd-prediction and kfc++-prediction: s̃_{t+1} = D(K(a)E(s̃_t)), or
//     with residual decoding s_{t+1} + D(K(a)E(s̃_t)) − D(K(a)E(s_t));
//   - kfc++-latent-prediction with σ = 0: s̃_{t+1} = D(K(a)E(s_t)), or
//     s_{t+1} exactly with residual decoding.
func TestPredictionsWithTwoActions(t *testing.T) {
	const S, A, B = 3, 2, 8
	rng := rand.New(rand.NewPCG(21, 2))
	d := dataset.Synthetic(S, A, 30, rng)
	m := smallModel(t, S, A, 8, 4, 5)
	b := rowsBatch(d, 5, 5+B)
	for _, c := range []struct {
		name     string
		residual bool
	}{
		{"fwd-prediction", false}, {"fwd-prediction", true},
		{"kfc++-prediction", false}, {"kfc++-prediction", true},
		{"kfc++-latent-prediction", false}, {"kfc++-latent-prediction", true},
	} {
		o := augment.DefaultOptions()
		o.Dataset, o.Model, o.KoopmanProb, o.Residual = d, m, 1, c.residual
		o.FwdSigma, o.ShiftSigma = 0.05, 3
		if c.name == "kfc++-latent-prediction" {
			o.ShiftSigma = 0
		}
		a, err := augment.New(c.name, o)
		if err != nil {
			t.Fatal(err)
		}
		obs, next := runAug(t, a, b, 4, nil)
		var want []float32
		switch {
		case c.name == "kfc++-latent-prediction" && c.residual:
			want = b.NextObs
		case c.name == "kfc++-latent-prediction":
			want = m.Predict(b.Obs, b.Act, B)
		case c.residual:
			p, p0 := m.Predict(obs, b.Act, B), m.Predict(b.Obs, b.Act, B)
			want = make([]float32, B*S)
			for j := range want {
				want[j] = b.NextObs[j] + p[j] - p0[j]
			}
		default:
			want = m.Predict(obs, b.Act, B)
		}
		for j := range want {
			if !near(next[j], float64(want[j]), 1e-4) {
				t.Fatalf("%s residual=%v: s̃_{t+1}[%d] = %v, want %v", c.name, c.residual, j, next[j], want[j])
			}
		}
	}
}

// TestKoopmanRowCounters: a model-branch batch of B rows adds B to
// CachedRows when the precompute cache holds the dataset and to SlowRows
// when there is no cache (fwd-prediction computes every row per batch).
func TestKoopmanRowCounters(t *testing.T) {
	d, m := propData(40, 9), propModel(t)
	for _, n := range augment.Names() {
		if !augment.NeedsKoopman(n) {
			continue
		}
		for _, cacheGiB := range []float64{1, 0} {
			o := propOpts(d, m)
			o.CacheGiB = cacheGiB
			a, err := augment.New(n, o)
			if err != nil {
				t.Fatal(err)
			}
			runAug(t, a, rowsBatch(d, 3, 13), 1, nil)
			runAug(t, a, rowsBatch(d, 20, 26), 2, nil)
			st := a.(*augment.Koopman).Stats()
			cached, slow := 16, 0
			if cacheGiB == 0 || n == "fwd-prediction" {
				cached, slow = 0, 16
			}
			if st.CachedRows != cached || st.SlowRows != slow {
				t.Errorf("%s, cache %v GiB: cached %d slow %d rows, want %d and %d", n, cacheGiB, st.CachedRows, st.SlowRows, cached, slow)
			}
		}
	}
}

// TestContactRowsCounted: kfc++-contact's ContactRows counts the rows whose
// velocity dimension (here 1) strictly changes sign, recounted here.
func TestContactRowsCounted(t *testing.T) {
	d, m := propData(60, 10), propModel(t)
	o := propOpts(d, m)
	o.ContactDims = []int{1}
	a, err := augment.New("kfc++-contact", o)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range [][2]int{{0, 30}, {30, 60}} {
		b := rowsBatch(d, r[0], r[1])
		runAug(t, a, b, 7, nil)
		for i := 0; i < b.B; i++ {
			if float64(b.Obs[2*i+1])*float64(b.NextObs[2*i+1]) < 0 {
				want++
			}
		}
	}
	if got := a.(*augment.Koopman).Stats().ContactRows; got != want || want == 0 {
		t.Errorf("ContactRows = %d, want %d (of 60 rows)", got, want)
	}
}

// TestPrecomputeChunkEdges: datasets one row short of, exactly at and one
// past the precompute's 256-row chunk give a cache that serves every row
// as the per-batch path computes it, and the progress callback ends at
// (n, n) for every cached kind (vae-noise caches latents only).
func TestPrecomputeChunkEdges(t *testing.T) {
	m := propModel(t)
	for _, n := range []int{255, 256, 257} {
		d := propData(n, uint64(n))
		b := rowsBatch(d, n-8, n)
		for _, name := range []string{"kfc++", "kfc", "vae-noise"} {
			var outs [][]float32
			for _, cache := range []float64{1, 0} {
				o := propOpts(d, m)
				o.CacheGiB, o.LatentSigma = cache, 0.01
				var last [2]int
				calls := 0
				o.Progress = func(done, total int, _ string) { last, calls = [2]int{done, total}, calls+1 }
				a, err := augment.New(name, o)
				if err != nil {
					t.Fatal(err)
				}
				if cache > 0 && (calls == 0 || last != [2]int{n, n}) {
					t.Errorf("%s, %d rows: progress ended at %v after %d calls, want (%d, %d)", name, n, last, calls, n, n)
				}
				obs, next := runAug(t, a, b, 3, nil)
				outs = append(outs, obs, next)
			}
			for k := 0; k < 2; k++ {
				if d := maxDiff(outs[k], outs[2+k]); !(d <= 1e-5) {
					t.Errorf("%s, %d rows: cached and per-batch states differ by %.3g", name, n, d)
				}
			}
		}
	}
}
