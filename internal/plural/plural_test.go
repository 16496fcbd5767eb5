package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "run", "0 runs"},
		{1, "run", "1 run"},
		{2, "run", "2 runs"},
		{-1, "step", "-1 step"},
		{11, "seed", "11 seeds"},
		{1, "thread", "1 thread"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestPick(t *testing.T) {
	if got := Pick(1, "was", "were"); got != "was" {
		t.Errorf("Pick(1) = %q", got)
	}
	for _, n := range []int{0, 2, 100} {
		if got := Pick(n, "was", "were"); got != "were" {
			t.Errorf("Pick(%d) = %q", n, got)
		}
	}
}
