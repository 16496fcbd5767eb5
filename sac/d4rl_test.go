package sac

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/koopq/koopq/env"
)

func TestParseD4RLName(t *testing.T) {
	for in, want := range map[string][2]string{
		"hopper-medium-v2": {"hopper", "medium"}, "hopper-medium-expert-v2": {"hopper", "medium-expert"},
		"walker2d-medium-replay-v2": {"walker2d", "medium-replay"}, "halfcheetah-expert": {"halfcheetah", "expert"},
		"HOPPER-FULL-REPLAY-V2": {"hopper", "full-replay"}, "ant-random-v2": {"ant", "random"},
	} {
		e, k, err := ParseD4RLName(in)
		if err != nil || e != want[0] || k != want[1] {
			t.Errorf("%s: %q %q %v, want %v", in, e, k, err, want)
		}
	}
	for _, bad := range []string{"hopper-medium-v0", "hopper", "medium-v2", "hopper-mediocre-v2", "-medium-v2"} {
		if _, _, err := ParseD4RLName(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// Generate gives the same rows for the same seed (its two streams run
// concurrently), other rows for another seed, n rows ending an episode,
// and progress reaches n.
func TestGenerateDeterministic(t *testing.T) {
	e, err := env.Make("hopper")
	if err != nil {
		t.Fatal(err)
	}
	p, err := RandomPolicy(e, NetConfig{Hidden: []int{16}, Init: "xavier"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	gen := func(seed uint64) *Generated {
		g, err := Generate(context.Background(), "hopper", p, 2001, seed, func(done, total int, _ string) { last = done })
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b, c := gen(7), gen(7), gen(8)
	if a.Data.Len() != 2001 || last != 2001 {
		t.Fatalf("%d rows, progress %d; want 2001", a.Data.Len(), last)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different rows")
	}
	if reflect.DeepEqual(a.Data.Observations, c.Data.Observations) {
		t.Fatal("seeds 7 and 8 gave the same rows")
	}
	n := a.Data.Len()
	if a.Data.Terminals[n-1]+a.Data.Timeouts[n-1] != 1 {
		t.Fatal("last row does not end an episode")
	}
	if a.Infos["qpos"].Shape[0] != n || a.Infos["qvel"].Shape[1] != 6 || len(a.Infos["action_log_probs"].Data) != n {
		t.Fatalf("infos shapes %v %v", a.Infos["qpos"].Shape, a.Infos["qvel"].Shape)
	}
}

// TestGenerateRejectsEmptyAndReportsSparsely: zero rows is an error, not
// an empty dataset, and progress is reported per 10,000 rows of a stream
// (plus the final count), not per row: 2001 rows make two to four calls;
// a cancellation is noticed within 10,000 rows.
func TestGenerateRejectsEmptyAndReportsSparsely(t *testing.T) {
	e, err := env.Make("pendulum")
	if err != nil {
		t.Fatal(err)
	}
	p, err := RandomPolicy(e, NetConfig{Hidden: []int{8}, Init: "xavier"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), "pendulum", p, 0, 1, nil); err == nil {
		t.Error("Generate of 0 rows succeeded")
	}
	var calls atomic.Int64
	if _, err := Generate(context.Background(), "pendulum", p, 2001, 1, func(int, int, string) { calls.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n < 2 || n > 4 {
		t.Errorf("progress called %d times for 2001 rows, want 2 to 4 (the start of stream 0 and the end)", n)
	}
	// A context cancelled at stream 0's row 10,000 stops it at its row
	// 20,000 check (each stream makes 30,000 rows).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Generate(ctx, "pendulum", p, 60000, 1, func(done, _ int, _ string) {
		if done >= 10000 {
			cancel()
		}
	}); err == nil {
		t.Error("Generate ignored a cancelled context")
	}
}
