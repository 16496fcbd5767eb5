package dataset

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func tiny(n int) *Dataset {
	d := &Dataset{ObsDim: 2, ActDim: 1}
	for i := 0; i < n; i++ {
		d.Observations = append(d.Observations, float32(i), float32(2*i))
		d.NextObservations = append(d.NextObservations, float32(i+1), float32(2*i+2))
		d.Actions = append(d.Actions, float32(-i))
		d.Rewards = append(d.Rewards, float32(10*i))
		d.Terminals = append(d.Terminals, float32(i%2))
		d.Timeouts = append(d.Timeouts, 0)
	}
	return d
}

// TestSamplerCopiesWideRows samples from a dataset whose actions are 3-D,
// so every copy's row offset is checked on more than one column.
func TestSamplerCopiesWideRows(t *testing.T) {
	d := &Dataset{ObsDim: 2, ActDim: 3}
	for i := 0; i < 20; i++ {
		d.Observations = append(d.Observations, float32(i), float32(-i))
		d.NextObservations = append(d.NextObservations, float32(i)+0.5, float32(-i)-0.5)
		d.Actions = append(d.Actions, float32(100+i), float32(200+i), float32(300+i))
		d.Rewards = append(d.Rewards, float32(i))
		d.Terminals = append(d.Terminals, 0)
	}
	b := NewBatch(32, 2, 3)
	NewSampler(d, rand.New(rand.NewPCG(3, 4))).Sample(b)
	for i := 0; i < b.B; i++ {
		j := float32(b.Idx[i])
		if b.Obs[2*i] != j || b.Obs[2*i+1] != -j || b.NextObs[2*i] != j+0.5 || b.NextObs[2*i+1] != -j-0.5 ||
			b.Act[3*i] != 100+j || b.Act[3*i+1] != 200+j || b.Act[3*i+2] != 300+j || b.Rew[i] != j {
			t.Fatalf("batch row %d does not hold dataset row %v: obs %v next %v act %v", i, j,
				b.Obs[2*i:2*i+2], b.NextObs[2*i:2*i+2], b.Act[3*i:3*i+3])
		}
	}
}

func TestSamplerConsistentAndSeeded(t *testing.T) {
	d := tiny(50)
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	b1, b2 := NewBatch(64, 2, 1), NewBatch(64, 2, 1)
	NewSampler(d, rand.New(rand.NewPCG(1, 2))).Sample(b1)
	NewSampler(d, rand.New(rand.NewPCG(1, 2))).Sample(b2)
	for i := 0; i < 64; i++ {
		j := b1.Idx[i]
		if b1.Obs[2*i] != float32(j) || b1.NextObs[2*i+1] != float32(2*j+2) || b1.Act[i] != float32(-j) ||
			b1.Rew[i] != float32(10*j) || b1.Done[i] != float32(j%2) {
			t.Fatalf("row %d does not match dataset row %d", i, j)
		}
		if b2.Idx[i] != j {
			t.Fatal("same seed gave different batches")
		}
	}
	if a := testing.AllocsPerRun(10, func() { NewSampler(d, rand.New(rand.NewPCG(1, 2))).Sample(b1) }); a > 3 {
		t.Fatalf("sampling allocates %v times", a)
	}
}

func TestNormalizer(t *testing.T) {
	d := tiny(4) // obs dim0 = 0..3, dim1 = 0,2,4,6
	nm := FitNormalizer(d, 1e-3)
	// Population std: dim0 √1.25, dim1 √5. The checks are written so that
	// NaN fails them.
	want := [2][2]float64{{1.5, math.Sqrt(1.25)}, {3, math.Sqrt(5)}}
	for j, w := range want {
		if !(math.Abs(float64(nm.Mean[j])-w[0]) <= 1e-6) || !(math.Abs(float64(nm.Std[j])-w[1]) <= 1e-5) {
			t.Fatalf("mean %v std %v, want %v", nm.Mean, nm.Std, want)
		}
	}
	// A constant dimension gets the floor, not 0.
	c := &Dataset{ObsDim: 1, ActDim: 1, Observations: []float32{2, 2, 2}, Rewards: make([]float32, 3)}
	if nm := FitNormalizer(c, 1e-3); nm.Std[0] != 1e-3 || nm.Mean[0] != 2 {
		t.Fatalf("constant dimension: mean %v std %v, want 2 and the floor 1e-3", nm.Mean, nm.Std)
	}
	x := []float32{1.5, 3}
	nm.Apply(x)
	if math.Abs(float64(x[0])) > 1e-6 || math.Abs(float64(x[1])) > 1e-6 {
		t.Fatalf("normalized mean row = %v", x)
	}
	// Rows one std above and two below the mean, two rows in one call.
	y := []float32{float32(1.5 + math.Sqrt(1.25)), float32(3 - 2*math.Sqrt(5)), 1.5, 3}
	nm.Apply(y)
	for i, w := range []float64{1, -2, 0, 0} {
		if !(math.Abs(float64(y[i])-w) <= 1e-5) {
			t.Fatalf("normalized rows = %v, want [1 -2 0 0]", y)
		}
	}
	if err := nm.Validate(3); err == nil {
		t.Fatal("wrong dimension accepted")
	}
}

func TestValidateErrors(t *testing.T) {
	d := tiny(5)
	d.Observations[3] = float32(math.NaN())
	if err := d.Validate(); err == nil {
		t.Fatal("NaN accepted")
	}
	d = tiny(5)
	d.Actions = d.Actions[:4]
	if err := d.Validate(); err == nil {
		t.Fatal("short actions accepted")
	}
	d = tiny(5)
	d.Terminals[0] = 0.5
	if err := d.Validate(); err == nil {
		t.Fatal("terminal 0.5 accepted")
	}
}

// TestNormalizerValidateValues: a normalizer from FitNormalizer or Identity
// is valid; a zero, negative, infinite or NaN std, or a NaN mean, is refused
// naming the dimension.
func TestNormalizerValidateValues(t *testing.T) {
	if err := Identity(3).Validate(3); err != nil {
		t.Errorf("Identity(3): %v", err)
	}
	if err := FitNormalizer(tiny(4), 1e-3).Validate(2); err != nil {
		t.Errorf("fitted: %v", err)
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct{ mean, std float32 }{{0, 0}, {0, -1}, {0, inf}, {0, nan}, {nan, 1}} {
		nm := Identity(2)
		nm.Mean[1], nm.Std[1] = c.mean, c.std
		if err := nm.Validate(2); err == nil || !strings.Contains(err.Error(), "dimension 1") {
			t.Errorf("mean %v std %v: got %v, want an error naming dimension 1", c.mean, c.std, err)
		}
	}
}
