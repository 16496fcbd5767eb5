package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"cql", "gaussian", "kfc", "kfc++", "s4rl-adv"}
	for _, c := range []struct{ in, want string }{
		{"kfcpp", "kfc++"}, {"guassian", "gaussian"}, {"KFC", "kfc"}, {"s4rl", "s4rl-adv"}, {"banana", ""}, {"cq", "cql"},
	} {
		if got := Closest(c.in, known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Hint("hoper", []string{"hopper", "walker2d"}); got != `; did you mean "hopper"?` {
		t.Errorf("Hint = %q", got)
	}
}
