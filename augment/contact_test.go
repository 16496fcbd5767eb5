package augment_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
)

// A contact is a strict sign change of a listed velocity: an exact zero on
// either side does not count, nor does a change in an unlisted dimension.
func TestIsContact(t *testing.T) {
	for _, c := range []struct {
		s, next []float32
		dims    []int
		want    bool
	}{
		{[]float32{0, 1}, []float32{0, -1}, []int{1}, true},
		{[]float32{0, -2}, []float32{0, 0.5}, []int{1}, true},
		{[]float32{0, 1}, []float32{0, 2}, []int{1}, false},
		{[]float32{0, -1}, []float32{0, 0}, []int{1}, false},
		{[]float32{0, 0}, []float32{0, -1}, []int{1}, false},
		{[]float32{1, 1}, []float32{-1, 1}, []int{1}, false},
		{[]float32{1, 1}, []float32{-1, 1}, []int{1, 0}, true},
		{[]float32{1, 1}, []float32{-1, 1}, nil, false},
	} {
		if got := augment.IsContact(c.s, c.next, c.dims); got != c.want {
			t.Errorf("IsContact(%v, %v, %v) = %v, want %v", c.s, c.next, c.dims, got, c.want)
		}
	}
}

// DefaultContactDims knows each environment's velocity block, inclusive at
// both ends, and refuses a state dimension that does not match.
func TestDefaultContactDims(t *testing.T) {
	span := func(lo, hi int) []int {
		var d []int
		for j := lo; j <= hi; j++ {
			d = append(d, j)
		}
		return d
	}
	for _, c := range []struct {
		env  string
		dim  int
		want []int
		ok   bool
	}{
		{"hopper", 11, span(5, 10), true},
		{"hopper", 12, span(5, 10), false},
		{"walker2d", 17, span(8, 16), true},
		{"halfcheetah", 17, span(8, 16), true},
		{"halfcheetah", 11, span(8, 16), false},
		{"ant", 27, span(13, 26), true},
		{"ant", 111, span(13, 26), true},
		{"ant", 26, span(13, 26), false},
		{"pendulum", 3, []int{2}, true},
		{"pendulum", 4, []int{2}, false},
		{"cartpole", 4, []int{1, 3}, true},
		{"cartpole-continuous", 4, []int{1, 3}, true},
		{"cartpole-continuous", 3, []int{1, 3}, false},
		{"mountaincar-continuous", 2, []int{1}, true},
		{"mountaincar-continuous", 3, []int{1}, false},
		{"", 11, span(5, 10), true},
		{"", 17, span(8, 16), true},
		{"", 27, nil, false},
		{"unknown", 11, nil, false},
	} {
		got, ok := augment.DefaultContactDims(c.env, c.dim)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("DefaultContactDims(%q, %d) = %v, %v; want %v, %v", c.env, c.dim, got, ok, c.want, c.ok)
		}
	}
}

// TestContactDimsRange: kfc++-contact accepts every dimension of the state
// (0 and ObsDim−1 included) and refuses one below 0 or at ObsDim, naming
// it, before precomputing anything.
func TestContactDimsRange(t *testing.T) {
	d, m := propData(8, 3), propModel(t)
	for _, c := range []struct {
		dims []int
		want string
	}{
		{[]int{0}, ""},
		{[]int{1}, ""},
		{[]int{0, 1}, ""},
		{[]int{2}, "contact dimension 2 outside [0, 2)"},
		{[]int{1, -1}, "contact dimension -1 outside [0, 2)"},
	} {
		o := propOpts(d, m)
		o.ContactDims = c.dims
		_, err := augment.New("kfc++-contact", o)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("ContactDims %v: error %v, want %q", c.dims, err, c.want)
		}
	}
}
