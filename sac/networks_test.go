package sac

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNetConfigValidate: a zero width, no hidden layer and an unknown
// initialization are refused; the two known ones pass.
func TestNetConfigValidate(t *testing.T) {
	for _, c := range []NetConfig{{Hidden: []int{8}, Init: "xavier"}, {Hidden: []int{1, 4}, Init: "orthogonal"}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v refused: %v", c, err)
		}
	}
	for _, c := range []NetConfig{{Hidden: []int{8, 0}, Init: "xavier"}, {Hidden: []int{-1}, Init: "xavier"},
		{Init: "xavier"}, {Hidden: []int{8}, Init: "kaiming"}, {Hidden: []int{8}}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// gram returns W·Wᵀ of a [rows, cols] row-major matrix.
func gram(w []float32, rows, cols int) [][]float64 {
	g := make([][]float64, rows)
	for i := range rows {
		g[i] = make([]float64, rows)
		for j := range rows {
			for k := range cols {
				g[i][j] += float64(w[i*cols+k]) * float64(w[j*cols+k])
			}
		}
	}
	return g
}

// TestNetworkShapesAndInit: the actor maps obsDim to 2·actDim (μ and
// log σ per action dimension) and a critic obsDim+actDim to 1, checked at
// actDim 3 where 2·actDim differs from 2/actDim and 2+actDim; with
// "orthogonal" a hidden layer's [in, out] weights (in ≤ out) have
// orthogonal rows of norm √2 (W·Wᵀ = 2I) and the output layer columns of
// norm 1e-2, while "xavier" weights are not orthogonal.
func TestNetworkShapesAndInit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const obs, act = 5, 3
	for _, init := range []string{"xavier", "orthogonal"} {
		cfg := NetConfig{Hidden: []int{16}, Init: init}
		a := NewActor(cfg, obs, act, rng)
		q := NewCritic("q", cfg, obs, act, rng)
		if a.Sizes[0] != obs || a.Out() != 2*act || q.Sizes[0] != obs+act || q.Out() != 1 {
			t.Fatalf("%s: actor %v, critic %v", init, a.Sizes, q.Sizes)
		}
		l := q.Layers[0] // [8, 16]
		g := gram(l.W.Data, l.In, l.Out)
		offOrth := 0.0
		for i := range g {
			for j := range g {
				want := 0.0
				if i == j {
					want = 2
				}
				offOrth = math.Max(offOrth, math.Abs(g[i][j]-want))
			}
		}
		out := q.Layers[len(q.Layers)-1] // [16, 1]
		norm := math.Sqrt(gram(out.W.Data, 1, out.In)[0][0])
		switch init {
		case "orthogonal":
			if offOrth > 1e-5 || math.Abs(norm-1e-2) > 1e-7 {
				t.Errorf("orthogonal: max |W·Wᵀ − 2I| = %g, output norm %g (want 1e-2)", offOrth, norm)
			}
		case "xavier":
			if offOrth < 0.1 {
				t.Errorf("xavier weights look orthogonal (max |W·Wᵀ − 2I| = %g)", offOrth)
			}
		}
	}
}

// TestActionScaleMapsTheBox: on an asymmetric box, ToEnv sends −1, 0, 1 to
// the low bound, the middle and the high bound; FromEnv inverts it on
// several rows at once (indices modulo the action size) and clips values
// outside the box to ±1.
func TestActionScaleMapsTheBox(t *testing.T) {
	s := ActionScale{Low: []float32{0, -2}, High: []float32{4, 1}}
	out := make([]float64, 2)
	for _, c := range []struct{ a, want []float64 }{
		{[]float64{-1, -1}, []float64{0, -2}}, {[]float64{1, 1}, []float64{4, 1}},
		{[]float64{0, 0}, []float64{2, -0.5}}, {[]float64{0.5, -0.5}, []float64{3, -1.25}},
	} {
		s.ToEnv([]float32{float32(c.a[0]), float32(c.a[1])}, out)
		if math.Abs(out[0]-c.want[0]) > 1e-6 || math.Abs(out[1]-c.want[1]) > 1e-6 {
			t.Errorf("ToEnv(%v) = %v, want %v", c.a, out, c.want)
		}
	}
	rows := []float32{0, -2, 4, 1, 3, -1.25, 9, -7}
	want := []float32{-1, -1, 1, 1, 0.5, -0.5, 1, -1}
	s.FromEnv(rows)
	for i := range rows {
		if math.Abs(float64(rows[i]-want[i])) > 1e-6 {
			t.Fatalf("FromEnv = %v, want %v", rows, want)
		}
	}
}
