package augment_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/cql"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/learntest"
	"github.com/koopq/koopq/sac"
)

var (
	cpOnce  sync.Once
	cpData  *dataset.Dataset
	cpRets  []float64
	cpModel *koopman.Model
	cpErr   error
)

// cartpoleFixture builds the learning tests' medium cartpole-continuous
// dataset (learntest.Behaviour{Noise: 0.5, Eps: 0.4}, 20000 rows, seed 1)
// and a small Koopman model trained on it (hidden 64×64, N = 8).
func cartpoleFixture(t *testing.T) (*dataset.Dataset, []float64, *koopman.Model) {
	t.Helper()
	cpOnce.Do(func() {
		start := time.Now()
		cpData, cpRets, cpErr = learntest.Collect(learntest.Behaviour{Noise: 0.5, Eps: 0.4}, 20000, 1)
		if cpErr != nil {
			return
		}
		mc := koopman.DefaultModelConfig(4, 1)
		mc.Hidden, mc.Latent, mc.Seed = []int{64, 64}, 8, 1
		if cpModel, cpErr = koopman.NewModel(mc); cpErr != nil {
			return
		}
		tc := koopman.DefaultTrainConfig()
		tc.MaxEpochs, tc.Batch, tc.LR, tc.Seed = 10, 64, 1e-3, 2
		var res *koopman.TrainResult
		res, cpErr = koopman.Train(context.Background(), cpModel, cpData.Observations, cpData.Actions, cpData.NextObservations, tc, nil)
		if cpErr != nil {
			return
		}
		diag, err := cpModel.Diagnose(cpData.Observations, cpData.Actions, cpData.NextObservations, koopman.DefaultDiagConfig())
		if err != nil {
			cpErr = err
			return
		}
		t.Logf("cartpole model: %d epochs (%s); recon %.3g, forward %.3g (s'=s: %.3g), shift %.3g, fallbacks %d; built in %.1fs",
			len(res.Epochs), res.Stopped, diag.ReconL2, diag.ForwardL2, diag.BaselineL2, diag.ShiftL2.Mean, diag.Fallbacks, time.Since(start).Seconds())
	})
	if cpErr != nil {
		t.Fatal(cpErr)
	}
	return cpData, cpRets, cpModel
}

// Every --augment value trains CQL end to end on a medium
// cartpole-continuous dataset with real terminal states and learns: it beats
// the policy that made the data on every run, and kfc++ does so on three
// seeds.
//
// Data and references are cql's learning test's (learntest.Behaviour{Noise:
// 0.5, Eps: 0.4}, 20000 rows, 246 episodes, all ending in a fall): random
// policy 27.6 ± 1.2, behaviour policy 81.0 ± 3.4 (mean ± standard error).
// Each run (64×64 networks, batch 128, 2000 steps of which 500 BC, fixed
// α′ = 5; see cql's smallConfig for why not Lagrange, which cql's learning
// test runs) is scored by 10 deterministic episodes (mean ± std over
// episodes). Measured with the OpenBLAS Haswell kernel
// (OPENBLAS_CORETYPE=Haswell) and the SkylakeX AVX-512 kernel (unset):
//
//	                          Haswell        SkylakeX
//	kfc++ seed 1              469.6 ± 33.8   471.8 ± 32.8
//	kfc++ seed 2              295.4 ± 31.3   296.2 ± 32.0
//	kfc++ seed 3              374.4 ± 52.6   384.9 ± 58.8
//	  mean ± SE across seeds  379.8 ± 50.4   384.3 ± 50.7
//	kfc                       386.6 ± 27.9   386.4 ± 27.7
//	s4rl-adv                  492.8 ± 17.2   495.2 ± 14.4
//	kfc++-contact             489.0 ± 23.3   492.5 ± 16.7
//	vae-noise                 480.1 ± 29.6   476.0 ± 36.3
//	kfc++-prediction          460.6 ± 53.4   455.1 ± 59.0
//	fwd-prediction            392.2 ± 63.3   396.8 ± 61.3
//
// Bars: every run must beat the behaviour policy by 5 of its standard
// errors, > 81.0 + 5·3.4 = 98 (the lowest run, 295.4 with SE 9.9 over its
// episodes, is 20 of its SEs above); the mean of kfc++'s three seeds must
// exceed 150, 20 behaviour SEs above the behaviour policy and 4.6
// across-seed SEs below the measured means on both kernels.
// Cost: 74 s (Haswell) / 52 s (SkylakeX) user CPU for the whole test on a
// shared 2-core machine (go test -c, then /usr/bin/time).
//
// KOOPQ_AUGMENT_E2E=a,b replaces the single-seed list (kfc++ always runs its
// three seeds), e.g. to add kfc++-latent-prediction.
func TestAugmentersLearnCartPole(t *testing.T) {
	if testing.Short() {
		t.Skip("learning test")
	}
	d, rets, m := cartpoleFixture(t)
	bm, bse := learntest.MeanSE(rets)
	if n := learntest.Terminals(d); n < 200 {
		t.Fatalf("dataset has %d terminal rows; the test needs episodes that end in a fall", n)
	}
	e, err := env.Make(learntest.Env)
	if err != nil {
		t.Fatal(err)
	}
	scale, err := sac.Scale(e)
	if err != nil {
		t.Fatal(err)
	}
	perRun := bm + 5*bse
	type run struct {
		name string
		seed uint64
	}
	runs := []run{{"kfc++", 1}, {"kfc++", 2}, {"kfc++", 3}}
	others := []string{"kfc", "s4rl-adv", "kfc++-contact", "vae-noise", "kfc++-prediction", "fwd-prediction"}
	if s := os.Getenv("KOOPQ_AUGMENT_E2E"); s != "" {
		others = strings.Split(s, ",")
	}
	for _, name := range others {
		runs = append(runs, run{name, 1})
	}
	var kfcpp []float64
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s/seed%d", r.name, r.seed), func(t *testing.T) {
			start := time.Now()
			o := augment.DefaultOptions()
			o.Dataset, o.Model, o.Env = d, m, learntest.Env
			// The prediction ablations decode the model's forward prediction
			// as s̃_{t+1}; with a small model its error biases every Bellman
			// target, so they use gauge-corrected (residual) decoding, where
			// only the model's difference enters (measured on Pendulum:
			// direct decoding does not learn).
			o.Residual = r.name == "kfc++-prediction" || r.name == "kfc++-latent-prediction" || r.name == "fwd-prediction"
			a, err := augment.New(r.name, o)
			if err != nil {
				t.Fatal(err)
			}
			cfg := cql.DefaultConfig()
			cfg.Net.Hidden = []int{64, 64}
			cfg.Batch, cfg.Steps, cfg.BCSteps, cfg.LRActor, cfg.Seed = 128, 2000, 500, 3e-4, r.seed
			cfg.Lagrange, cfg.MinQWeight = false, 5
			tr, err := cql.NewTrainer(cfg, d, a, scale)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Run(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			pol := tr.Policy()
			res, err := learntest.Score(func() eval.Policy { return pol.Clone() }, r.seed)
			if err != nil {
				t.Fatal(err)
			}
			extra := ""
			if k, ok := a.(*augment.Koopman); ok {
				extra = "; " + fmtStats(k.Stats())
			}
			t.Logf("CQL(%s) seed %d: %.1f ± %.1f (std over 10 episodes) in %.1fs%s", r.name, r.seed, res.Mean, res.Std, time.Since(start).Seconds(), extra)
			if res.Mean <= perRun {
				t.Errorf("mean return %.1f, want > behaviour + 5 SE = %.1f", res.Mean, perRun)
			}
			if r.name == "kfc++" {
				kfcpp = append(kfcpp, res.Mean)
			}
		})
	}
	if len(kfcpp) == 3 {
		mean, se := learntest.MeanSE(kfcpp)
		t.Logf("kfc++ over 3 seeds: %.1f ± %.1f (SE across seeds)", mean, se)
		if mean <= 150 {
			t.Errorf("kfc++ mean over seeds %.1f, want > 150 (behaviour %.1f)", mean, bm)
		}
	}
}
