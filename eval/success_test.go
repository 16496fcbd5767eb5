//go:build cgo && !nomujoco

package eval

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/manip"
)

// scriptedPolicy drives a manipulation task with its scripted controller.
type scriptedPolicy struct{ p manip.Scripted }

func (s scriptedPolicy) Act(obs, act []float64) { copy(act, s.p(obs)) }

// The success rate of a manipulation env is the fraction of episodes whose
// success test held at some step: the scripted push controller reaches the
// goal in every episode, uniform random actions in none.
func TestEvaluateSuccessRateOnPush(t *testing.T) {
	sp, err := manip.ScriptedPolicy(manip.PushName)
	if err != nil {
		t.Fatal(err)
	}
	const episodes = 3
	res, err := Evaluate(manip.PushName, func() Policy { return scriptedPolicy{sp} }, episodes, 7, 2)
	if err != nil {
		t.Fatal(err)
	}
	if float64(res.SuccessRate) != 1 || len(res.Successes) != episodes {
		t.Fatalf("scripted controller: success rate %v, successes %v; want 1 over %d episodes", res.SuccessRate, res.Successes, episodes)
	}
	if !math.IsNaN(float64(res.Normalized)) {
		t.Errorf("normalized score %v for an env without reference returns", res.Normalized)
	}
	space := manipActionSpace(t)
	var k uint64
	rnd, err := Evaluate(manip.PushName, func() Policy {
		k++
		return &RandomPolicy{Space: space, Rng: rand.New(rand.NewPCG(3, k))}
	}, episodes, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	if float64(rnd.SuccessRate) != 0 || len(rnd.Successes) != episodes {
		t.Fatalf("random actions: success rate %v, successes %v; want 0 over %d episodes", rnd.SuccessRate, rnd.Successes, episodes)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"success_rate":1`) || !strings.Contains(string(b), `"successes":[true,true,true]`) {
		t.Errorf("result JSON lacks the success record: %s", b)
	}
}

func manipActionSpace(t *testing.T) env.Space {
	t.Helper()
	e, err := manip.New(manip.PushName)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.ActionSpace()
}
