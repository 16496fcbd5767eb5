package memcheck

import (
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	if _, ok := Available(); !ok {
		t.Log("no MemAvailable here: the 1 TiB bound applies")
	}
	if err := Check("small", 1<<20); err != nil {
		t.Errorf("1 MiB refused: %v", err)
	}
	for _, b := range []float64{1e18, math.Inf(1), math.NaN(), 9223372036854775807 * 164.0} {
		err := Check("--transitions 9223372036854775807", b)
		if err == nil || !strings.Contains(err.Error(), "--transitions 9223372036854775807 needs about") {
			t.Errorf("%g bytes: %v", b, err)
		}
	}
	if got := Format(1.5 * (1 << 30)); got != "1.5 GiB" {
		t.Errorf("Format = %q", got)
	}
}
