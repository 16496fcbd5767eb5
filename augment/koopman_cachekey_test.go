package augment

import (
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
)

// TestCacheKeyCoversEveryRow: a cache file's key hashes every one of the
// first n rows' states, next states and actions (2-D here), so a dataset
// that differs only in its last cached row gets another file, and one that
// differs only beyond the cached rows keeps its key.
func TestCacheKeyCoversEveryRow(t *testing.T) {
	mc := koopman.DefaultModelConfig(3, 2)
	mc.Hidden, mc.Latent = []int{4}, 2
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	base := dataset.Synthetic(3, 2, 10, rand.New(rand.NewPCG(1, 1)))
	sym := koopman.DefaultSymmetryConfig()
	key := func(d *dataset.Dataset, n int) [32]byte { return cacheKey(m, d, cacheKFCpp, n, sym) }
	ref := key(base, 10)
	if key(base, 10) != ref {
		t.Fatal("the same inputs gave two keys")
	}
	for _, c := range []struct {
		what string
		edit func(d *dataset.Dataset)
	}{
		{"last observation", func(d *dataset.Dataset) { d.Observations[29] += 1 }},
		{"last next observation", func(d *dataset.Dataset) { d.NextObservations[29] += 1 }},
		{"last action", func(d *dataset.Dataset) { d.Actions[19] += 1 }},
	} {
		d := *base
		d.Observations = append([]float32(nil), base.Observations...)
		d.NextObservations = append([]float32(nil), base.NextObservations...)
		d.Actions = append([]float32(nil), base.Actions...)
		c.edit(&d)
		if key(&d, 10) == ref {
			t.Errorf("%s changed, key unchanged", c.what)
		}
		if key(&d, 9) != key(base, 9) {
			t.Errorf("%s changed beyond the 9 cached rows, key changed", c.what)
		}
	}
}
