package augment_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/koopman"
)

// A precompute cache file written by one augmenter is loaded by the next
// on the same model and dataset, and every augmenter (no file, writing it,
// loading it, recomputing over a damaged one) shifts a batch to exactly the
// same states. A file for another model or budget is never used, a damaged
// or truncated one is recomputed and rewritten, and an unwritable CacheDir
// costs only the file.
func TestPrecomputeCacheFile(t *testing.T) {
	d, m := fixture(t)
	b := batchOf(d, []int{0, 7, 99, 1234, 5000, 9999})
	build := func(name string, o augment.Options) (*augment.Koopman, []float32) {
		t.Helper()
		o.KoopmanProb, o.Workers = 1, 2
		a, err := augment.New(name, o)
		if err != nil {
			t.Fatal(err)
		}
		k := a.(*augment.Koopman)
		obs, next := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
		if err := k.Augment(b, obs, next, rand.New(rand.NewPCG(5, 6)), nil); err != nil {
			t.Fatal(err)
		}
		return k, append(obs, next...)
	}
	same := func(what string, x, y []float32) {
		t.Helper()
		if len(x) != len(y) || maxDiff(x, y) != 0 {
			t.Errorf("%s: shifted states differ from the run without a cache file (max |Δ| %g)", what, maxDiff(x, y))
		}
	}
	for _, name := range []string{"kfc++", "kfc", "vae-noise"} {
		dir := t.TempDir()
		_, ref := build(name, opts(d, m))
		o := opts(d, m)
		o.CacheDir = dir
		k1, x1 := build(name, o)
		p1 := k1.Precompute()
		if p1.Loaded || p1.File == "" || p1.FileError != "" || p1.Cached != d.Len() {
			t.Fatalf("%s: first run: %+v, want a computed cache written to a file", name, p1)
		}
		if st, err := os.Stat(p1.File); err != nil || filepath.Dir(p1.File) != dir {
			t.Fatalf("%s: cache file %s: %v", name, p1.File, err)
		} else if st.Mode().Perm() != 0o644 {
			t.Errorf("%s: cache file mode %v, want 0644 (readable by every run of the machine)", name, st.Mode().Perm())
		}
		if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(tmp) != 0 {
			t.Errorf("%s: temporary files left: %v", name, tmp)
		}
		same(name+" writing", ref, x1)
		k2, x2 := build(name, o)
		p2 := k2.Precompute()
		if !p2.Loaded || p2.File != p1.File || p2.FileError != "" || p2.Fallbacks != p1.Fallbacks || p2.Cached != p1.Cached || p2.Bytes != p1.Bytes {
			t.Fatalf("%s: second run: %+v, want the file of %+v loaded", name, p2, p1)
		}
		same(name+" loaded", ref, x2)

		// Damage one payload byte: the checksum rejects the file, the cache
		// is recomputed and the file rewritten whole.
		raw, err := os.ReadFile(p1.File)
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)/2] ^= 0x40
		if err := os.WriteFile(p1.File, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		k3, x3 := build(name, o)
		if p := k3.Precompute(); p.Loaded || !strings.Contains(p.FileError, "checksum") {
			t.Errorf("%s: damaged file: %+v, want it recomputed with a checksum error", name, p)
		}
		same(name+" damaged file", ref, x3)
		if k, _ := build(name, o); !k.Precompute().Loaded {
			t.Errorf("%s: the rewritten file was not loaded: %+v", name, k.Precompute())
		}
		// A truncated file (a copy cut short) is rejected by its size.
		if err := os.Truncate(p1.File, int64(len(raw)-1)); err != nil {
			t.Fatal(err)
		}
		wantSize := fmt.Sprintf("%d bytes, a whole cache of %d rows has %d", len(raw)-1, d.Len(), len(raw))
		if k, x := build(name, o); k.Precompute().Loaded || !strings.Contains(k.Precompute().FileError, wantSize) {
			t.Errorf("%s: truncated file: %+v, want the error to say %q", name, k.Precompute(), wantSize)
		} else {
			same(name+" truncated file", ref, x)
		}
		// A smaller budget caches fewer rows: another file. (Rows beyond the
		// cache take the per-batch float64 path, so the reference is a run
		// with the same budget and no file.)
		small := o
		small.CacheGiB = gib(int64(d.Len()/2) * int64(p1.BytesPerTransition))
		noFile := small
		noFile.CacheDir = ""
		_, refSmall := build(name, noFile)
		if k, x := build(name, small); k.Precompute().Loaded || k.Precompute().File == p1.File || k.Precompute().Cached != d.Len()/2 {
			t.Errorf("%s: half budget: %+v", name, k.Precompute())
		} else {
			same(name+" half budget", refSmall, x)
		}
		if k, x := build(name, small); !k.Precompute().Loaded {
			t.Errorf("%s: half budget, second run: %+v", name, k.Precompute())
		} else {
			same(name+" half budget loaded", refSmall, x)
		}
	}

	// Another model (one encoder weight changed) has another file.
	dir := t.TempDir()
	o := opts(d, m)
	o.CacheDir = dir
	k1, _ := build("kfc++", o)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	m2, _, err := koopman.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	m2.Params()[0].Data[3] += 1e-3
	o2 := opts(d, m2)
	o2.CacheDir = dir
	if k, _ := build("kfc++", o2); k.Precompute().Loaded || k.Precompute().File == k1.Precompute().File {
		t.Errorf("changed model: %+v, first model's file %s", k.Precompute(), k1.Precompute().File)
	}
	// Another dataset row: another file.
	d2 := *d
	d2.Observations = append([]float32(nil), d.Observations...)
	d2.Observations[5] += 1e-3
	o3 := opts(&d2, m)
	o3.CacheDir = dir
	if k, _ := build("kfc++", o3); k.Precompute().Loaded || k.Precompute().File == k1.Precompute().File {
		t.Errorf("changed dataset: %+v", k.Precompute())
	}

	// CacheDir is a regular file: nothing can be written, the run goes on.
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o4 := opts(d, m)
	o4.CacheDir = notDir
	_, ref := build("kfc++", opts(d, m))
	k4, x4 := build("kfc++", o4)
	// Both failures are reported, joined by "; " (the file could not be
	// opened for reading either: the directory is a file).
	if p := k4.Precompute(); p.Loaded || !strings.HasPrefix(p.FileError, "not used: ") || !strings.Contains(p.FileError, "; not written: ") {
		t.Errorf("unwritable cache dir: %+v, want \"not used: …; not written: …\"", p)
	}
	same("unwritable cache dir", ref, x4)
}
