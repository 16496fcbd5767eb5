package allocs

import "testing"

var sink []byte

// TestMin: a function that allocates on every call is measured as
// allocating (the minimum cannot hide it), one that never allocates as 0.
func TestMin(t *testing.T) {
	if n := Min(10, func() { sink = make([]byte, 64) }); n < 1 {
		t.Errorf("a call that allocates every time measured %v allocations per call", n)
	}
	buf := make([]byte, 64)
	if n := Min(10, func() { buf[0]++ }); n != 0 {
		t.Errorf("a call that allocates nothing measured %v allocations per call", n)
	}
}
