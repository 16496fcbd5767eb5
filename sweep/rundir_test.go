package sweep

import (
	"encoding/json"
	"testing"

	"github.com/koopq/koopq/rundir"
)

// TestRunIsReadAsRundirSweepRun: the sweep-run.json a sweep writes
// (Run) reads as rundir.SweepRun, the part `koopq report` labels runs by,
// with every field intact.
func TestRunIsReadAsRundirSweepRun(t *testing.T) {
	for _, r := range []Run{
		{Index: 3, Name: "hopper-medium__kfc__s2", Dataset: "hopper-medium", Method: "KFC", Augment: "kfc", Seed: 2, Steps: 100},
		{Index: 7, Dataset: "walker2d-medium", Method: "no-symmetry", Ablation: true, Base: "KFC++", Seed: 18446744073709551615},
	} {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got rundir.SweepRun
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := rundir.SweepRun{Index: r.Index, Seed: r.Seed, Dataset: r.Dataset, Method: r.Method, Ablation: r.Ablation, Base: r.Base}
		if got != want {
			t.Errorf("%s read as %+v, want %+v", b, got, want)
		}
	}
}
