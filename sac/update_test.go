package sac

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/allocs"
	"github.com/koopq/koopq/nn"
)

// serialUpdate is SAC's update written once, top to bottom, on one
// goroutine with full-batch passes: the reference the two-goroutine
// Agent.Update (critics on separate goroutines, actor rows split in
// halves) must reproduce. It draws randomness in the same order. It returns
// the statistics the update reports, computed here: the critics' mean
// Bellman loss, the mean Q1 at the policy's actions and α; the entropy
// target is −|A| unless the config sets one.
func serialUpdate(a *Agent, b *dataset.Batch, rng *rand.Rand) Stats {
	B, S, A := b.B, a.ObsDim, a.ActDim
	f := func(n int) []float32 { return make([]float32, n) }
	alpha := float32(math.Exp(a.LogAlpha))
	noiseN, noiseS := f(B*A), f(B*A)
	FillNormal(rng, noiseN)
	FillNormal(rng, noiseS)
	var cN, cS nn.Cache
	actN, logpN, actS, logpS := f(B*A), f(B), f(B*A), f(B)
	nn.TanhGaussianSample(a.Actor.Forward(&cN, b.NextObs, B), B, A, noiseN, actN, logpN)
	outS := a.Actor.Forward(&cS, b.Obs, B)
	nn.TanhGaussianSample(outS, B, A, noiseS, actS, logpS)
	saN, saP, saD := f(B*(S+A)), f(B*(S+A)), f(B*(S+A))
	ConcatSA(b.NextObs, S, actN, A, B, saN)
	ConcatSA(b.Obs, S, actS, A, B, saP)
	ConcatSA(b.Obs, S, b.Act, A, B, saD)
	var ct [2]nn.Cache
	var cp [2]nn.Cache
	qs := [2]*nn.MLP{a.Q[0], a.Q[1]}
	ts := [2]*nn.MLP{a.QT[0], a.QT[1]}
	opts := [2]*nn.Adam{a.Opt[0], a.Opt[1]}
	var tq, pq [2][]float32
	for i := 0; i < 2; i++ {
		tq[i] = append([]float32(nil), ts[i].Forward(&ct[i], saN, B)...)
		pq[i] = append([]float32(nil), qs[i].Forward(&cp[i], saP, B)...)
	}
	y := f(B)
	dp := [2][]float32{f(B), f(B)}
	var lpMean float64
	for i := 0; i < B; i++ {
		y[i] = b.Rew[i] + float32(a.Cfg.Gamma)*(1-b.Done[i])*(min(tq[0][i], tq[1][i])-alpha*logpN[i])
		k := 0
		if pq[1][i] < pq[0][i] {
			k = 1
		}
		dp[k][i] = -1 / float32(B)
		lpMean += float64(logpS[i]) / float64(B)
	}
	dX := [2][]float32{f(B * (S + A)), f(B * (S + A))}
	st := Stats{Alpha: float64(alpha)}
	for i := 0; i < B; i++ {
		st.QMean += float64(pq[0][i]) / float64(B)
	}
	for i := 0; i < 2; i++ {
		qs[i].Backward(&cp[i], dp[i], dX[i], false)
		var cd nn.Cache
		dq := f(B)
		st.QLoss += float64(nn.MSE(qs[i].Forward(&cd, saD, B), y, dq, 1)) / 2
		nn.ZeroGrad(qs[i].Params())
		qs[i].Backward(&cd, dq, nil, true)
		opts[i].Step()
		nn.Polyak(ts[i].Params(), qs[i].Params(), float32(a.Cfg.Tau))
	}
	dAct, dLogp, dOut := f(B*A), f(B), f(B*2*A)
	for i := 0; i < B; i++ {
		dLogp[i] = alpha / float32(B)
		for j := 0; j < A; j++ {
			dAct[i*A+j] = dX[0][i*(S+A)+S+j] + dX[1][i*(S+A)+S+j]
		}
	}
	nn.TanhGaussianSampleBackward(outS, B, A, noiseS, actS, dAct, dLogp, dOut)
	nn.ZeroGrad(a.Actor.Params())
	a.Actor.Backward(&cS, dOut, nil, true)
	a.optA.Step()
	target := -float64(A)
	if a.Cfg.TargetEntropy != 0 {
		target = a.Cfg.TargetEntropy
	}
	a.alpha.Step(&a.LogAlpha, -(lpMean + target), a.Cfg.LRAlpha)
	return st
}

// TestUpdateMatchesSerial: five two-goroutine updates leave every network
// and α where five serial full-batch updates do (up to float32 summation
// order in the actor's split gradient).
func TestUpdateMatchesSerial(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.Net.Hidden = []int{32, 32}
	cfg.Batch = 37 // odd: halves of 18 and 19 rows
	const S, A = 5, 2
	fast := NewAgent(cfg, S, A, rand.New(rand.NewPCG(3, 4)))
	ref := NewAgent(cfg, S, A, rand.New(rand.NewPCG(3, 4)))
	d := dataset.Synthetic(S, A, 500, rand.New(rand.NewPCG(5, 6)))
	for i := range d.Terminals {
		if i%7 == 0 {
			d.Terminals[i] = 1
		}
	}
	smp := dataset.NewSampler(d, rand.New(rand.NewPCG(7, 8)))
	batch := dataset.NewBatch(cfg.Batch, S, A)
	r1, r2 := rand.New(rand.NewPCG(9, 10)), rand.New(rand.NewPCG(9, 10))
	for step := 0; step < 5; step++ {
		smp.Sample(batch)
		got, want := fast.Update(batch, r1), serialUpdate(ref, batch, r2)
		for _, c := range [][3]float64{{got.QLoss, want.QLoss, 0}, {got.QMean, want.QMean, 1}, {got.Alpha, want.Alpha, 2}} {
			if !(math.Abs(c[0]-c[1]) <= 1e-5*(1+math.Abs(c[1]))) {
				t.Fatalf("step %d: statistic %v (QLoss, QMean, Alpha) %v, serial %v", step, c[2], c[0], c[1])
			}
		}
	}
	for _, pair := range [][2][]*nn.Param{
		{fast.Actor.Params(), ref.Actor.Params()}, {fast.Q[0].Params(), ref.Q[0].Params()}, {fast.Q[1].Params(), ref.Q[1].Params()},
		{fast.QT[0].Params(), ref.QT[0].Params()}, {fast.QT[1].Params(), ref.QT[1].Params()},
	} {
		for i, p := range pair[0] {
			q := pair[1][i]
			for j := range p.Data {
				if d := math.Abs(float64(p.Data[j] - q.Data[j])); d > 1e-5*(1+math.Abs(float64(q.Data[j]))) {
					t.Fatalf("%s[%d]: two-goroutine %v, serial %v", p.Name, j, p.Data[j], q.Data[j])
				}
			}
		}
	}
	if math.Abs(fast.LogAlpha-ref.LogAlpha) > 1e-9 {
		t.Fatalf("log α: %v vs serial %v", fast.LogAlpha, ref.LogAlpha)
	}
	if fast.LogAlpha == 0 {
		t.Fatalf("log α did not move")
	}
}

// TestUpdateDoesNotAllocate: after the first update, Update allocates nothing.
func TestUpdateDoesNotAllocate(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.Net.Hidden = []int{16, 16}
	cfg.Batch = 32
	ag := NewAgent(cfg, 4, 2, rand.New(rand.NewPCG(1, 1)))
	d := dataset.Synthetic(4, 2, 100, rand.New(rand.NewPCG(2, 2)))
	rng := rand.New(rand.NewPCG(3, 3))
	smp := dataset.NewSampler(d, rng)
	b := dataset.NewBatch(cfg.Batch, 4, 2)
	smp.Sample(b)
	ag.Update(b, rng)
	if n := allocs.Min(20, func() { ag.Update(b, rng) }); n != 0 {
		t.Fatalf("Update allocates %.1f times per call, want 0", n)
	}
}

// TestUpdateFLOPsHandCounted: the GEMM FLOPs of one update for hidden
// layers [4, 5], 2-D states, 1-D actions, batch 3, counted by hand from the
// documented breakdown: critic layers 3→4→5→1 (24 + 40 + 10 = 74 FLOPs a
// row, 24 in the first), actor 2→4→5→2 (16 + 40 + 20 = 76, 16 first); per
// critic 5·3·74 + 3·(74 − 24) = 1260, actor 3·3·76 + 3·(76 − 16) = 864;
// 2·1260 + 864 = 3384.
func TestUpdateFLOPsHandCounted(t *testing.T) {
	net := DefaultConfig(1).Net
	net.Hidden = []int{4, 5}
	if got := UpdateFLOPs(net, 2, 1, 3); got != 3384 {
		t.Errorf("UpdateFLOPs = %v, want 3384", got)
	}
	// A = 2: critic layers 4→4→5→1 (82 FLOPs a row, 32 in the first), actor
	// 2→4→5→4 (96, 16): 2·(3·82·5 + 3·50) + 3·3·96 + 3·80 = 3864.
	if got := UpdateFLOPs(net, 2, 2, 3); got != 3864 {
		t.Errorf("UpdateFLOPs with a 2-D action = %v, want 3864", got)
	}
}
