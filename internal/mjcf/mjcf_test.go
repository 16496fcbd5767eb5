package mjcf

import (
	"strconv"
	"strings"
	"testing"
)

// TestNumsRoundTrip: every value formatted parses back to itself exactly,
// values are separated by single spaces, and no values give "".
func TestNumsRoundTrip(t *testing.T) {
	vs := []float64{0, -0.1, 0.6, 1.0 / 3, 1e-10, -2.5e7, 0.707107}
	got := strings.Split(Nums(vs...), " ")
	if len(got) != len(vs) {
		t.Fatalf("Nums = %q", Nums(vs...))
	}
	for i, s := range got {
		if v, err := strconv.ParseFloat(s, 64); err != nil || v != vs[i] {
			t.Errorf("%v formatted as %q", vs[i], s)
		}
	}
	if Nums() != "" || Num(0.5) != "0.5" {
		t.Errorf("Nums() = %q, Num(0.5) = %q", Nums(), Num(0.5))
	}
}
