package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
)

// ContentSHA256 against an independent byte layout written out by hand, and
// sensitivity to one changed value in each array.
func TestContentSHA256(t *testing.T) {
	d := &Dataset{ObsDim: 2, ActDim: 1}
	d.Append([]float64{1, 2}, []float64{0.5}, 1, []float64{3, 4}, false, false)
	d.Append([]float64{3, 4}, []float64{-0.5}, 2, []float64{5, 6}, true, false)
	var b []byte
	u64 := func(v int) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	f32s := func(vs ...float32) {
		u64(len(vs))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	u64(2)
	u64(1)
	f32s(1, 2, 3, 4)
	f32s(0.5, -0.5)
	f32s(1, 2)
	f32s(3, 4, 5, 6)
	f32s(0, 1)
	f32s(0, 0)
	want := sha256.Sum256(b)
	if got := d.ContentSHA256(); got != hex.EncodeToString(want[:]) {
		t.Fatalf("ContentSHA256 %s, independent %s", got, hex.EncodeToString(want[:]))
	}
	base := d.ContentSHA256()
	for i, a := range [][]float32{d.Observations, d.Actions, d.Rewards, d.NextObservations, d.Terminals, d.Timeouts} {
		a[1] += 0.25
		if d.ContentSHA256() == base {
			t.Fatalf("array %d changed, hash did not", i)
		}
		a[1] -= 0.25
	}
	if d.ContentSHA256() != base {
		t.Fatal("hash not a function of content")
	}
}
