package run

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
)

// TestSplitHoldoutByEpisode: the held-out set is whole episodes (every
// row of a held-out episode, none of a trained one), about the fraction of
// episodes, disjoint from the training set, and the same for the same seed.
func TestSplitHoldoutByEpisode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 2, 0, rng)
	ep := 0
	for ep < 60 {
		n := 5 + rng.IntN(20)
		for k := 0; k < n; k++ {
			// Observation 0 is the episode id, 1 the step within it.
			d.Append([]float64{float64(ep), float64(k), 0}, []float64{0, 0}, 0, []float64{float64(ep), float64(k + 1), 0}, false, k == n-1)
		}
		ep++
	}
	train, held, err := SplitHoldout(d, 0.1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len()+held.Len() != d.Len() {
		t.Fatalf("%d + %d rows, want %d", train.Len(), held.Len(), d.Len())
	}
	rows := func(x *dataset.Dataset) map[int]int {
		m := map[int]int{}
		for i := 0; i < x.Len(); i++ {
			m[int(x.Observations[i*3])]++
		}
		return m
	}
	all, tr, he := rows(d), rows(train), rows(held)
	if len(he) != 6 || len(held.Episodes()) != 6 {
		t.Errorf("%d held-out episodes (%d by flags), want 6 of 60", len(he), len(held.Episodes()))
	}
	for e, n := range he {
		if tr[e] != 0 || n != all[e] {
			t.Errorf("episode %d: %d rows held out, %d trained on, %d in all", e, n, tr[e], all[e])
		}
	}
	_, again, _ := SplitHoldout(d, 0.1, 7)
	_, other, _ := SplitHoldout(d, 0.1, 8)
	if !equalRows(held, again) {
		t.Error("same seed, different split")
	}
	if equalRows(held, other) {
		t.Error("another seed, same split")
	}
	one := dataset.Synthetic(3, 2, 10, rng)
	if _, _, err := SplitHoldout(one, 0.05, 1); err == nil || !strings.Contains(err.Error(), "1 episode") {
		t.Errorf("one episode: err %v", err)
	}
	if _, _, err := SplitHoldout(d, 1, 1); err == nil {
		t.Error("fraction 1 accepted")
	}
}

func equalRows(a, b *dataset.Dataset) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Observations {
		if a.Observations[i] != b.Observations[i] {
			return false
		}
	}
	return true
}
