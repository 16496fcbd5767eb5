package augment

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/koopman"
)

// keyFixture is an untrained Koopman model (one hidden layer of the given
// width, latent 2) for S-D states and A-D actions, and n synthetic rows.
func keyFixture(t *testing.T, S, A, hidden, n int) (*koopman.Model, *dataset.Dataset) {
	t.Helper()
	mc := koopman.DefaultModelConfig(S, A)
	mc.Hidden, mc.Latent = []int{hidden}, 2
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	return m, dataset.Synthetic(S, A, n, rand.New(rand.NewPCG(uint64(S), uint64(A))))
}

// TestCacheKeyCoversEveryRow: a cache file's key hashes every one of the
// first n rows' states, next states and actions (2-D here), so a dataset
// that differs only in its last cached row gets another file, and one that
// differs only beyond the cached rows keeps its key.
func TestCacheKeyCoversEveryRow(t *testing.T) {
	m, base := keyFixture(t, 3, 2, 4, 10)
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

// TestCacheKeyFormat pins the key's byte stream, because cache files are
// found by their key: a header line of magic, kind and row count, the model
// and symmetry configurations, the GEMM description, a subnormals line only
// when subnormals are flushed, the code identity, then every
// parameter's name, shape and float32 bits and the cached rows' states,
// next states and actions, little-endian.
func TestCacheKeyFormat(t *testing.T) {
	m, d := keyFixture(t, 2, 1, 3, 5)
	sym := koopman.DefaultSymmetryConfig()
	want := func(subnormals string) [32]byte {
		var b bytes.Buffer
		g := blas.Describe()
		fmt.Fprintf(&b, "%s kind=%d rows=%d\nmodel=%+v\nsym=%+v\ngemm=%s %s %s %s\n", cacheMagic, cacheKFC, 4, m.Cfg, sym,
			g.Backend, g.Precision, g.ISA, g.Kernel)
		if subnormals != "" {
			fmt.Fprintf(&b, "subnormals=%s\n", subnormals)
		}
		fmt.Fprintf(&b, "code=%s\n", codeIdentity())
		f32 := func(v []float32) {
			for _, x := range v {
				binary.Write(&b, binary.LittleEndian, math.Float32bits(x))
			}
		}
		for _, p := range m.Params() {
			fmt.Fprintf(&b, "%s %v\n", p.Name, p.Shape)
			f32(p.Data)
		}
		f32(d.Observations[:4*2])
		f32(d.NextObservations[:4*2])
		f32(d.Actions[:4])
		return sha256.Sum256(b.Bytes())
	}
	defer blas.SetFlushSubnormals(blas.FlushSubnormals())
	blas.SetFlushSubnormals(false)
	if got := cacheKey(m, d, cacheKFC, 4, sym); got != want("") {
		t.Errorf("subnormals kept: key %x, want %x (the format of files written before the setting)", got, want(""))
	}
	blas.SetFlushSubnormals(true)
	if blas.Subnormals() == "flushed" {
		if got := cacheKey(m, d, cacheKFC, 4, sym); got != want("flushed") {
			t.Errorf("subnormals flushed: key %x, want %x", got, want("flushed"))
		}
	}
}

// A cache file written by other code was loaded as this code's precompute
// (an adversarial review changed the KFC++ precompute, committed and
// rebuilt: the new binary reported the old code's numbers under its own
// commit). The key now names the code: a test binary (unstamped) by the
// sha256 of its executable, and keys of two code identities differ.
func TestCacheKeyNamesTheCode(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := codeIdentity(), fmt.Sprintf("binary %x", sha256.Sum256(b)); got != want {
		t.Errorf("code identity of a test binary: %q, want %q", got, want)
	}
	m, d := keyFixture(t, 2, 1, 3, 5)
	sym := koopman.DefaultSymmetryConfig()
	defer func(f func() string) { codeIdentity = f }(codeIdentity)
	codeIdentity = func() string { return "commit aaaa" }
	a := cacheKey(m, d, cacheKFCpp, 4, sym)
	codeIdentity = func() string { return "commit bbbb" }
	if cacheKey(m, d, cacheKFCpp, 4, sym) == a {
		t.Error("the cache key does not depend on the code that computes the precompute")
	}
}
