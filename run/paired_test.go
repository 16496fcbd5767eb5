package run

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/koopq/koopq/cql"
	"github.com/koopq/koopq/nn"
)

// sameTensors fails unless two checkpoints hold bit-identical tensors.
func sameTensors(t *testing.T, a, b string) {
	t.Helper()
	ta, _, err1 := nn.LoadSafetensors(a)
	tb, _, err2 := nn.LoadSafetensors(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("checkpoints: %v, %v", err1, err2)
	}
	if len(ta) != len(tb) {
		t.Fatalf("%d vs %d tensors", len(ta), len(tb))
	}
	for name, x := range ta {
		y, ok := tb[name]
		if !ok || !reflect.DeepEqual(x.Data, y.Data) {
			t.Fatalf("tensor %s differs", name)
		}
	}
}

// sameNumbers reports whether two runs' results.json numbers (final
// evaluation, history, last statistics, steps) are identical; %v prints
// every float64 exactly and NaN (a success rate off AntMaze) as itself.
func sameNumbers(a, b *TrainResult) bool {
	f := func(r *TrainResult) string {
		return fmt.Sprintf("%v %v %v %d %v", r.Final, r.History, r.LastStats, r.Steps, r.Phases)
	}
	return f(a) == f(b)
}

// Issue 67, paired comparisons: with one seed, --augment gaussian
// --gaussian-sigma 0 is the run of --augment none: same weights, same
// evaluations (same initial states), same results.json numbers.
func TestGaussianZeroRunIsNoneRun(t *testing.T) {
	d := pendulumLike(300, 1)
	run := func(augment string) (*TrainResult, *Dir) {
		cfg := tinyConfig()
		cfg.Augment, cfg.GaussianSigma = augment, 0
		dir, _ := NewDir(t.TempDir(), augment)
		res, err := Train(context.Background(), cfg, dir, d, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res, dir
	}
	rn, dn := run("none")
	rg, dg := run("gaussian")
	if rn.Config.CQL.RNGStreams != cql.RNGPaired {
		t.Fatalf("a new run records rng_streams %q, want %q", rn.Config.CQL.RNGStreams, cql.RNGPaired)
	}
	if !sameNumbers(rn, rg) {
		t.Fatalf("gaussian σ=0 differs from none:\nfinal %+v vs %+v\nhistory %+v vs %+v\nlast %+v vs %+v",
			rn.Final, rg.Final, rn.History, rg.History, rn.LastStats, rg.LastStats)
	}
	sameTensors(t, dn.File("checkpoints/latest.safetensors"), dg.File("checkpoints/latest.safetensors"))
}

// A run whose config.json has no rng_streams (written before the paired
// layout) keeps the legacy single stream: killed and resumed, it ends with
// the numbers of its uninterrupted run, and those are not the paired
// layout's.
func TestLegacyRunResumesWithLegacyStream(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	cfg.CQL.RNGStreams = cql.RNGLegacy
	dirA, _ := NewDir(t.TempDir(), "a")
	resA, err := Train(context.Background(), cfg, dirA, d, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dirA.File("config.json")); strings.Contains(string(b), "rng_streams") {
		t.Fatalf("a legacy config.json names rng_streams:\n%s", b)
	}
	dirB, _ := NewDir(t.TempDir(), "b")
	trainInterrupted(t, cfg, dirB, d, 17)
	// As `koopq train --resume` does: the settings are config.json's.
	var recorded TrainConfig
	if err := dirB.ReadJSON("config.json", &recorded); err != nil {
		t.Fatal(err)
	}
	if recorded.CQL.RNGStreams != cql.RNGLegacy {
		t.Fatalf("recorded rng_streams %q", recorded.CQL.RNGStreams)
	}
	_, meta, err := nn.LoadSafetensors(dirB.File("checkpoints/latest.safetensors"))
	if err != nil || meta["rng"] == "" || meta["rng_streams"] != "" {
		t.Fatalf("legacy checkpoint: rng %q, rng_streams %q (%v)", meta["rng"], meta["rng_streams"], err)
	}
	resB, err := Train(context.Background(), recorded, dirB, d, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameNumbers(resA, resB) {
		t.Fatalf("resumed legacy run differs: %+v vs %+v", resA.LastStats, resB.LastStats)
	}
	sameTensors(t, dirA.File("checkpoints/latest.safetensors"), dirB.File("checkpoints/latest.safetensors"))

	cfg.CQL.RNGStreams = cql.RNGPaired
	dirP, _ := NewDir(t.TempDir(), "p")
	resP, err := Train(context.Background(), cfg, dirP, d, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resP.LastStats == resA.LastStats {
		t.Fatal("the paired layout gave the legacy layout's numbers: the setting is not used")
	}
	// Resuming with the other layout is refused as a settings change.
	if _, err := Train(context.Background(), cfg, dirB, d, true, nil); err == nil || !strings.Contains(err.Error(), "rng_streams") {
		t.Fatalf("resume of a legacy run with paired streams: %v", err)
	}
}
