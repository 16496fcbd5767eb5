package cql

import (
	"go/build"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
)

// Every augmenter is a StateShift: the two interfaces have the same
// methods, their QGradient being aliases of one func type. (This test file
// may import augment; cql's non-test files may not, TestNoPluginImports.)
var _ StateShift = augment.Augmenter(nil)

// TestNoPluginImports guards issue 68's rule that the algorithm does not
// import its plug-ins: package cql (its non-test files, for this GOOS and
// GOARCH) must depend, directly or through other packages of this module,
// on neither augment nor koopman; it declares StateShift instead. It walks
// the module's import graph with go/build, as `go list -deps ./cql` would.
func TestNoPluginImports(t *testing.T) {
	const module = "github.com/koopq/koopq"
	forbidden := []string{module + "/augment", module + "/koopman"}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	// via[p] is the package that first imported p, to print the chain.
	via := map[string]string{module + "/cql": ""}
	queue := []string{module + "/cql"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if slices.Contains(forbidden, p) {
			chain := []string{p}
			for q := via[p]; q != ""; q = via[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			t.Fatalf("cql imports %s: %s", p, strings.Join(chain, " → "))
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		pkg, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, imp := range pkg.Imports { // non-test imports only
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue // the standard library and other modules cannot import this one
			}
			if _, seen := via[imp]; !seen {
				via[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	if len(via) < 3 {
		t.Fatalf("walked only %d packages from cql (%v): the walk is broken", len(via), via)
	}
}

// TestNoShiftIsNone checks that cql's default shift is plain CQL exactly as
// augment.None was: same name, same copies, no draws from rng.
func TestNoShiftIsNone(t *testing.T) {
	d := dataset.Synthetic(5, 2, 64, rand.New(rand.NewPCG(3, 4)))
	b := dataset.NewBatch(16, d.ObsDim, d.ActDim)
	dataset.NewSampler(d, rand.New(rand.NewPCG(5, 6))).Sample(b)
	n := b.B * b.ObsDim
	run := func(s StateShift) (obs, next []float32, draw uint64) {
		obs, next = make([]float32, n), make([]float32, n)
		rng := rand.New(rand.NewPCG(7, 8))
		if err := s.Augment(b, obs, next, rng, nil); err != nil {
			t.Fatal(err)
		}
		return obs, next, rng.Uint64()
	}
	o1, n1, r1 := run(NoShift{})
	o2, n2, r2 := run(augment.None{})
	if (NoShift{}).Name() != (augment.None{}).Name() || !slices.Equal(o1, o2) || !slices.Equal(n1, n2) || r1 != r2 {
		t.Fatal("NoShift differs from augment.None")
	}
	if !slices.Equal(o1, b.Obs[:n]) || !slices.Equal(n1, b.NextObs[:n]) {
		t.Fatal("NoShift shifted the states")
	}
}
