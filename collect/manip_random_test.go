//go:build cgo && !nomujoco

package collect

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/koopq/koopq/env/manip"
	"github.com/koopq/koopq/env/panda"
)

// manipRows makes a manipulation dataset in memory and fails the test on
// an error.
func manipRows(t *testing.T, cfg ManipConfig) (ManipStats, *datasetRows) {
	t.Helper()
	d, infos, st, err := ManipDataset(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, &datasetRows{obs: d.Observations, act: d.Actions, meta: d.Meta, hash: d.ContentSHA256(), success: infos[ManipInfoSuccess].Data}
}

// datasetRows is what the tests below look at in a manipulation dataset.
type datasetRows struct {
	obs, act, success []float32
	meta              map[string]string
	hash              string
}

// The episodes ManipRandomEpisodes picks are acted by uniformly random
// actions and the others by the scripted controller (noise 0: its exact
// actions); the metadata and stats name the picked episodes.
func TestManipRandomEpisodesAreThePicked(t *testing.T) {
	const episodes, frac = 4, 0.5
	seed := uint64(0)
	for ; ; seed++ { // the first seed whose picks mix both kinds
		p := ManipRandomEpisodes(seed, episodes, frac)
		if slices.Contains(p, true) && slices.Contains(p, false) {
			break
		}
	}
	picked := ManipRandomEpisodes(seed, episodes, frac)
	st, r := manipRows(t, ManipConfig{Task: manip.DoorCloseName, Episodes: episodes, Noise: 0, RandomFraction: frac, Seed: seed})
	policy, err := manip.ScriptedPolicy(manip.DoorCloseName)
	if err != nil {
		t.Fatal(err)
	}
	const steps, od, ad = manip.MaxEpisodeSteps, manip.ObsDim, manip.ActDim
	var idx []string
	for ep, rnd := range picked {
		matching, inside := 0, 0
		for i := ep * steps; i < (ep+1)*steps; i++ {
			o := make([]float64, od)
			for k := range o {
				o[k] = float64(r.obs[i*od+k])
			}
			want := policy(o)
			same := true
			for k := range ad {
				a := float64(r.act[i*ad+k])
				same = same && math.Abs(a-math.Max(-1, math.Min(1, want[k]))) < 1e-3
				if a > -1 && a < 1 {
					inside++
				}
			}
			if same {
				matching++
			}
		}
		if rnd {
			idx = append(idx, strconv.Itoa(ep))
			// Uniform actions never hit ±1 and almost never the controller's.
			if matching > steps/20 || inside != steps*ad {
				t.Errorf("random episode %d: %d of %d rows act as the controller, %d of %d entries inside (-1, 1)", ep, matching, steps, inside, steps*ad)
			}
		} else if matching < steps*99/100 {
			t.Errorf("scripted episode %d: only %d of %d rows act as the noiseless controller", ep, matching, steps)
		}
	}
	if st.RandomEpisodes != len(idx) || r.meta["random_episodes"] != strings.Join(idx, ",") || r.meta["random_fraction"] != "0.5" ||
		!strings.Contains(r.meta["description"], "random fraction 0.5") {
		t.Errorf("stats %d random episodes, metadata %q / %q, description %q; picked %v", st.RandomEpisodes,
			r.meta["random_episodes"], r.meta["random_fraction"], r.meta["description"], idx)
	}
}

// The picks are a deterministic function of the seed whose share follows
// the fraction: none at 0, all at 1, about f of many episodes otherwise.
func TestManipRandomEpisodesShare(t *testing.T) {
	for _, f := range []float64{0, 0.3, 0.6, 1} {
		p := ManipRandomEpisodes(7, 4000, f)
		if !slices.Equal(p, ManipRandomEpisodes(7, 4000, f)) {
			t.Errorf("fraction %v: two calls disagree", f)
		}
		n := 0
		for _, r := range p {
			if r {
				n++
			}
		}
		if got := float64(n) / 4000; math.Abs(got-f) > 0.03 || (f == 0 && n != 0) || (f == 1 && n != 4000) {
			t.Errorf("fraction %v: %d of 4000 episodes random", f, n)
		}
	}
	if slices.Equal(ManipRandomEpisodes(7, 64, 0.5), ManipRandomEpisodes(8, 64, 0.5)) {
		t.Error("seeds 7 and 8 pick the same episodes")
	}
	if len(ManipRandomEpisodes(1, -3, 0.5)) != 0 {
		t.Error("negative episode count gave picks")
	}
}

// With random episodes one seed still gives the same rows and another
// seed others; fraction 0 gives exactly the rows of the recipe without
// random episodes (the scripted controller plus clipped Gaussian noise from
// the dataset's stream, recomputed by pushReference), and a fraction
// changes them.
func TestManipRandomFractionDeterministic(t *testing.T) {
	cfg := ManipConfig{Task: manip.DrawerCloseName, Episodes: 3, Noise: 1, RandomFraction: 0.5, Seed: 2}
	_, a := manipRows(t, cfg)
	_, b := manipRows(t, cfg)
	cfg.Seed = 3
	_, c := manipRows(t, cfg)
	if a.hash != b.hash || !slices.Equal(a.success, b.success) || a.hash == c.hash {
		t.Errorf("seed 2 twice: %s vs %s; seed 3: %s", a.hash, b.hash, c.hash)
	}
	push := ManipConfig{Task: manip.PushName, Episodes: 2, Noise: DefaultManipNoise, Seed: 5}
	_, zero := manipRows(t, push)
	if want := pushReference(t, push); !slices.Equal(zero.obs, want.obs) || !slices.Equal(zero.act, want.act) {
		t.Error("push, fraction 0: rows differ from the scripted-plus-noise recipe computed here")
	}
	if _, ok := zero.meta["random_episodes"]; ok || zero.meta["random_fraction"] != "0" {
		t.Errorf("fraction 0 metadata: %v", zero.meta)
	}
	push.RandomFraction = 1
	if _, all := manipRows(t, push); all.hash == zero.hash {
		t.Error("fraction 1 left push's rows unchanged")
	}
}

// Every task's default recipe is valid, push keeps σ 0.8 without random
// episodes, a task without a row gets the generic default, and the
// datasets koopq collect makes use the recipe unless flags override it.
func TestManipDefaultRecipes(t *testing.T) {
	for _, n := range ManipDatasetNames() {
		r, _ := ManipDefaultRecipe(n)
		if !validManipNoise(r.Noise) || !validManipFraction(r.RandomFraction) {
			t.Errorf("%s: recipe %+v", n, r)
		}
		c := manipConfig(n, &D4RLOptions{Seed: 4})
		if c.Noise != r.Noise || c.RandomFraction != r.RandomFraction || c.Episodes != DefaultManipEpisodes || c.Seed != 4 {
			t.Errorf("%s: config %+v, recipe %+v", n, c, r)
		}
		noise, frac := 0.25, 0.75
		c = manipConfig(n, &D4RLOptions{ManipNoise: &noise, ManipRandomFraction: &frac, ManipEpisodes: 3})
		if c.Noise != noise || c.RandomFraction != frac || c.Episodes != 3 {
			t.Errorf("%s: overridden config %+v", n, c)
		}
	}
	if r, own := ManipDefaultRecipe(manip.PushName); !own || r != (ManipRecipe{Noise: 0.8}) {
		t.Errorf("push recipe %+v (own row %v), want noise 0.8, no random episodes", r, own)
	}
	if r, own := ManipDefaultRecipe("metaworld-none-v2"); own || r != (ManipRecipe{Noise: DefaultManipNoise}) {
		t.Errorf("task without a row: %+v (own row %v)", r, own)
	}
}

// pushReference rolls out cfg's recipe without random episodes, written
// out here from its definition: one stream PCG(seed, 0x3e7a) draws each
// reset and then, per step, one N(0, 1) per action entry; the action is the
// scripted controller's plus noise·N, clipped to [−1, 1].
func pushReference(t *testing.T, cfg ManipConfig) *datasetRows {
	t.Helper()
	e, err := manip.New(cfg.Task)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	policy, err := manip.ScriptedPolicy(cfg.Task)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x3e7a))
	out := &datasetRows{}
	for range cfg.Episodes {
		obs := e.Reset(rng)
		for range e.MaxEpisodeSteps() {
			a := policy(obs)
			for i := range a {
				a[i] = math.Max(-1, math.Min(1, a[i]+cfg.Noise*rng.NormFloat64()))
			}
			for _, v := range obs {
				out.obs = append(out.obs, float32(v))
			}
			for _, v := range a {
				out.act = append(out.act, float32(v))
			}
			if obs, _, _, _, err = e.Step(a); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestRoboSuiteLiftDataset: robosuite-lift (env/panda) is a manipulation
// dataset like the MetaWorld-style tasks: listed, collected from its
// scripted controller with the same episode length (the size estimates
// use it), deterministic given the seed, with the success flags.
func TestRoboSuiteLiftDataset(t *testing.T) {
	if !IsManipDataset(panda.LiftName) {
		t.Fatalf("%s not among %v", panda.LiftName, ManipDatasetNames())
	}
	for _, n := range ManipDatasetNames() {
		e, err := newManipEnv(n)
		if err != nil {
			t.Fatal(err)
		}
		if e.MaxEpisodeSteps() != manip.MaxEpisodeSteps {
			t.Errorf("%s: %d-step episodes, the size estimates assume %d", n, e.MaxEpisodeSteps(), manip.MaxEpisodeSteps)
		}
		e.Close()
	}
	cfg := ManipConfig{Task: panda.LiftName, Episodes: 2, Noise: 0.3, Seed: 3}
	st, a := manipRows(t, cfg)
	_, b := manipRows(t, cfg)
	if a.hash != b.hash || len(a.success) != 2*manip.MaxEpisodeSteps {
		t.Fatalf("lift: hashes %s %s, %d success flags", a.hash, b.hash, len(a.success))
	}
	if want := "scripted robosuite-lift (env/panda ScriptedPolicy)"; a.meta["policy"] != want {
		t.Errorf("lift's policy metadata %q, want %q", a.meta["policy"], want)
	}
	if st.SuccessEpisodes != 2 {
		t.Errorf("lift at σ 0.3: %d of 2 episodes lifted the cube, want 2 (the scripted controller lifts 100/100 at σ 0.3)", st.SuccessEpisodes)
	}
}
