package augment

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// TestShiftHistogramEdges: values above the binned range (1e4 = histMin·10^14),
// +Inf and NaN land in the top bin, values below histMin and zero in the
// bottom one; a restored state accepts exactly the bin indices 0 …
// histBins−1 (the top bin included) and refuses the others without
// panicking.
func TestShiftHistogramEdges(t *testing.T) {
	if histMax != histMin*math.Pow(10, histDecades) {
		t.Fatalf("histMax %v is not histMin·10^%d", histMax, histDecades)
	}
	var h ShiftHistogram
	for _, v := range []float64{0, 1e-12, 2e-10, 1e5, math.MaxFloat64, math.Inf(1), math.NaN()} {
		h.Add(v)
	}
	top := histMin * math.Pow(10, (float64(histBins-2)+0.5)/histPerDecade)
	if h.counts[0] != 2 || h.counts[histBins-1] != 4 || h.counts[1+int(math.Log10(2)*histPerDecade)] != 1 {
		t.Errorf("bottom %d, top %d values; want 2 and 4 (and 2e-10 in bin %d)", h.counts[0], h.counts[histBins-1],
			1+int(math.Log10(2)*histPerDecade))
	}
	if q := h.Quantile(2.0 / 7); q != 0 {
		t.Errorf("2/7-quantile %v, want 0 (the bottom bin)", q)
	}
	if q := h.Quantile(1); !(math.Abs(q/top-1) < 1e-12) || !(q > 1e4) {
		t.Errorf("maximum %v, want the top bin's centre %v", q, top)
	}
	for _, c := range []struct {
		bin int
		ok  bool
	}{{-1, false}, {0, true}, {histBins - 1, true}, {histBins, false}, {histBins + 1, false}} {
		var back ShiftHistogram
		err := json.Unmarshal(fmt.Appendf(nil, `{"n":2,"sum":1,"bins":[[%d,2]]}`, c.bin), &back)
		if (err == nil) != c.ok {
			t.Errorf("bin %d: error %v, want accepted %v", c.bin, err, c.ok)
		}
		if c.ok && (back.N() != 2 || back.counts[c.bin] != 2) {
			t.Errorf("bin %d: restored %d values, %v in it", c.bin, back.N(), back.counts)
		}
	}
	var empty ShiftHistogram
	if err := json.Unmarshal([]byte(`{"n":0,"sum":0,"bins":[[3,0]]}`), &empty); err != nil || empty.N() != 0 {
		t.Errorf("an empty bin refused: %v", err)
	}
	var back ShiftHistogram
	if err := json.Unmarshal([]byte(`{"n":-1,"sum":0,"bins":[[3,-1]]}`), &back); err == nil {
		t.Error("a negative count accepted")
	}
}
