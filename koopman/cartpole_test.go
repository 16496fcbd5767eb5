package koopman_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/env/classic"
	"github.com/koopq/koopq/koopman"
)

func TestPaperCartPoleGenerator(t *testing.T) {
	for g := range 2 {
		k := koopman.PaperCartPoleK(g)
		sigma, lambda, align, err := koopman.TranslationGenerator(k, 4, 0)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(real(lambda)-1) > 1e-12 || align < 1-1e-12 {
			t.Errorf("a=%d: translation mode λ=%v alignment %g", g, lambda, align)
		}
		want := koopman.PaperCartPoleC(g)
		if sigma[0] != -1 {
			t.Errorf("a=%d: σ0[0,0] = %g", g, sigma[0])
		}
		for j, c := range want {
			if math.Abs(sigma[1+j]-c) > 1e-4*math.Abs(c) {
				t.Errorf("a=%d: c%d = %.6g, paper %.6g", g, j+1, sigma[1+j], c)
			}
		}
		for i := 4; i < 16; i++ {
			if math.Abs(sigma[i]) > 1e-12 {
				t.Errorf("a=%d: σ0[%d,%d] = %g, want 0", g, i/4, i%4, sigma[i])
			}
		}
		if r := koopman.CommutatorResidual(sigma, k, 4); r > 1e-12 {
			t.Errorf("a=%d: commutator residual %g", g, r)
		}
	}
}

func TestCartPoleTranslationSymmetry(t *testing.T) {
	cfg := koopman.DefaultCartPoleDataConfig()
	d, err := koopman.CollectCartPole(classic.CartPoleDynamics, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.S) != cfg.Episodes*cfg.Steps {
		t.Fatalf("%d transitions", len(d.S))
	}
	fit, err := koopman.FitCartPoleKoopman(d)
	if err != nil {
		t.Fatal(err)
	}
	// Euler kinematics rows are exact in the data: x' = x + τẋ, θ' = θ + τθ̇.
	for ai := range 2 {
		k := fit.K[ai]
		for j, want := range []float64{1, 0.02, 0, 0} {
			if math.Abs(k[j]-want) > 1e-9 || math.Abs(k[8+(j+2)%4]-want) > 1e-9 {
				t.Fatalf("a=%g: kinematic rows %v / %v", fit.Actions[ai], k[:4], k[8:12])
			}
		}
		if fit.Count[ai] < 1000 {
			t.Fatalf("a=%g: only %d transitions", fit.Actions[ai], fit.Count[ai])
		}
	}
	ft := *fit
	var sigmas [2][]float64
	for ai := range 2 {
		_, _, rawAlign, err := koopman.TranslationGenerator(fit.K[ai], 4, 0)
		if err != nil {
			t.Fatal(err)
		}
		ft.K[ai] = koopman.TruncateSmall(fit.K[ai], 1e-3)
		sigma, lambda, align, err := koopman.TranslationGenerator(ft.K[ai], 4, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("a=%+g: λ=%.12g, alignment raw %.4f truncated %.6f, c = %.4g %.4g %.4g",
			fit.Actions[ai], real(lambda), rawAlign, align, sigma[1], sigma[2], sigma[3])
		rowMax := 0.0
		for j := range 4 {
			rowMax = math.Max(rowMax, math.Abs(sigma[j]))
		}
		for i := 4; i < 16; i++ {
			if math.Abs(sigma[i]) > 1e-9*rowMax {
				t.Errorf("a=%+g: generator moves more than x: σ0[%d,%d] = %g", fit.Actions[ai], i/4, i%4, sigma[i])
			}
		}
		if r := koopman.CommutatorResidual(sigma, ft.K[ai], 4); r > 1e-9 {
			t.Errorf("a=%+g: commutator residual %g", fit.Actions[ai], r)
		}
		sigmas[ai] = sigma
	}
	rep := koopman.CheckCartPoleSymmetry(classic.CartPoleDynamics, cfg.ForceMag, d, sigmas, &ft, 0.05, 3, rand.New(rand.NewPCG(9, 9)))
	t.Logf("%+v", rep)
	if rep.MaxExcess > 0 {
		t.Errorf("a symmetry-shifted transition exceeds the linear-model error bound by %g", rep.MaxExcess)
	}
	if rep.MeanErrSymRest > 1e-12*rep.MeanShift {
		t.Errorf("symmetry shift breaks ẋ, θ, θ̇: mean error %g", rep.MeanErrSymRest)
	}
	if rep.MeanErrRandRest < 0.05*rep.MeanShift {
		t.Errorf("random shift unexpectedly consistent with the physics: %g for shift %g", rep.MeanErrRandRest, rep.MeanShift)
	}
	if rep.MeanErrSym > 0.5*rep.MeanErrRand {
		t.Errorf("symmetry shift error %g not well below random shift error %g", rep.MeanErrSym, rep.MeanErrRand)
	}
}
