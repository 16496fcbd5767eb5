//go:build cgo && !nomujoco

package run

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/manip"
)

// pushLike makes n rows of push-v2 transitions under uniform random actions.
func pushLike(t *testing.T, n int) *dataset.Dataset {
	t.Helper()
	e, err := manip.New(manip.PushName)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	d := &dataset.Dataset{ObsDim: manip.ObsDim, ActDim: manip.ActDim}
	obs := e.Reset(rng)
	act := make([]float64, manip.ActDim)
	for range n {
		for i := range act {
			act[i] = 2*rng.Float64() - 1
		}
		next, r, _, trunc, err := e.Step(act)
		if err != nil {
			t.Fatal(err)
		}
		d.Append(obs, act, r, next, false, trunc)
		obs = next
	}
	return d
}

// A run on a manipulation env records the success rate of every
// evaluation in history.json and the final episodes' successes in
// results.json; a run on an env without a success test records neither.
func TestTrainRecordsSuccessRate(t *testing.T) {
	cfg := tinyConfig()
	cfg.Env = manip.PushName
	cfg.EvalEpisodes = 1
	dir, _ := NewDir(t.TempDir(), "push")
	res, err := Train(context.Background(), cfg, dir, pushLike(t, 300), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Final.Successes) != 1 {
		t.Fatalf("final successes %v, want one episode's", res.Final.Successes)
	}
	var hist []EvalPoint
	b, err := os.ReadFile(dir.File("history.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 {
		t.Fatalf("history has %d points, want 2 (step 20 and the final)", len(hist))
	}
	for _, p := range hist {
		if p.SuccessRate == nil || !(*p.SuccessRate == 0 || *p.SuccessRate == 1) {
			t.Errorf("step %d: success rate %v, want 0 or 1 of one episode", p.Step, p.SuccessRate)
		}
	}
	if last := hist[len(hist)-1]; *last.SuccessRate != res.Final.SuccessRate {
		t.Errorf("final point's success rate %v, final evaluation's %v", *last.SuccessRate, res.Final.SuccessRate)
	}
	results, err := os.ReadFile(dir.File("results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(results), `"successes": [`) {
		t.Error("results.json lacks the final episodes' successes")
	}

	pdir, _ := NewDir(t.TempDir(), "pendulum")
	if _, err := Train(context.Background(), tinyConfig(), pdir, pendulumLike(300, 1), false, nil); err != nil {
		t.Fatal(err)
	}
	// history.json as before success was recorded; results.json's
	// final_eval keeps its success_rate null and has no successes.
	for f, absent := range map[string]string{"history.json": "success", "results.json": "successes"} {
		b, err := os.ReadFile(pdir.File(f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), absent) {
			t.Errorf("pendulum %s mentions %q:\n%s", f, absent, b)
		}
	}
}
