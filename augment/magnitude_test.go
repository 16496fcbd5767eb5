package augment_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/augment"
)

// The histogram's mean is exact, its median and p95 within 1.2% of the
// sample's; its JSON state restores it exactly, and it is independent of
// the order of the values (what makes a resumed run's numbers equal).
func TestShiftHistogram(t *testing.T) {
	const n = 10000
	var h augment.ShiftHistogram
	sum := 0.0
	for i := 1; i <= n; i++ { // values 1e-4·i/n … 1e-4: median 5e-5, p95 9.5e-5
		v := 1e-4 * float64(i) / n
		sum += v
		h.Add(v)
	}
	if math.Abs(h.Mean()-sum/n) > 1e-15 || h.N() != n {
		t.Errorf("mean %v over %d, want %v over %d", h.Mean(), h.N(), sum/n, n)
	}
	for _, c := range []struct{ p, want float64 }{{0.5, 5e-5}, {0.95, 9.5e-5}} {
		if got := h.Quantile(c.p); math.Abs(got-c.want) > 0.012*c.want {
			t.Errorf("quantile %.2f = %.5g, want %.5g within 1.2%%", c.p, got, c.want)
		}
	}
	b, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	var back augment.ShiftHistogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary() != h.Summary() {
		t.Errorf("restored %+v, want %+v", back.Summary(), h.Summary())
	}
	if err := json.Unmarshal([]byte(`{"n":3,"sum":1,"bins":[[5,2]]}`), &back); err == nil {
		t.Error("inconsistent state accepted")
	}
	var zero augment.ShiftHistogram
	zero.Add(0)
	if zero.Quantile(0.5) != 0 || zero.Mean() != 0 {
		t.Errorf("zeros: %+v", zero.Summary())
	}
}

// A Meter changes neither the shifted states nor the rng stream.
func TestMeterIsTransparent(t *testing.T) {
	d, m := fixture(t)
	b := batchOf(d, []int{1, 2, 3, 500})
	for _, name := range []string{"gaussian", "kfc++"} {
		a1, _ := augment.New(name, opts(d, m))
		a2, _ := augment.New(name, opts(d, m))
		meter := augment.NewMeter(a2)
		r1, r2 := rand.New(rand.NewPCG(5, 5)), rand.New(rand.NewPCG(5, 5))
		o1, n1 := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
		o2, n2 := make([]float32, len(b.Obs)), make([]float32, len(b.Obs))
		if a1.Augment(b, o1, n1, r1, nil) != nil || meter.Augment(b, o2, n2, r2, nil) != nil {
			t.Fatal("augment failed")
		}
		if maxDiff(o1, o2) != 0 || maxDiff(n1, n2) != 0 || r1.Uint64() != r2.Uint64() {
			t.Errorf("%s: the meter changed the shift or the stream", name)
		}
		if meter.Obs.N() != 4 || meter.Next.N() != 4 || !(meter.Obs.Mean() > 0) || meter.Name() != name {
			t.Errorf("%s: meter %+v", name, meter.Obs.Summary())
		}
		// The recorded distances are the rows' own ‖s̃ − s‖₂, for s_t and s_{t+1}.
		S := b.ObsDim
		for _, c := range []struct {
			what       string
			got        float64
			shifted, s []float32
		}{{"s_t", meter.Obs.Mean(), o1, b.Obs}, {"s_t+1", meter.Next.Mean(), n1, b.NextObs}} {
			want := 0.0
			for i := range b.B {
				sq := 0.0
				for j := i * S; j < (i+1)*S; j++ {
					dv := float64(c.shifted[j]) - float64(c.s[j])
					sq += dv * dv
				}
				want += math.Sqrt(sq) / float64(b.B)
			}
			if !(math.Abs(c.got-want) <= 1e-12*want) {
				t.Errorf("%s: mean recorded shift of %s %v, want %v", name, c.what, c.got, want)
			}
		}
	}
}
