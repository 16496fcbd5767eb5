package augment_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/koopman"
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
	for i := range obs {
		if math.IsNaN(float64(obs[i])) || math.IsNaN(float64(next[i])) {
			t.Fatalf("NaN in the shifted states at %d", i)
		}
	}
}
