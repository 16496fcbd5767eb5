package main

// Test fixtures for the CLI tests: tiny policies, datasets and Koopman
// models written once per test binary (next to the built koopq binary, so
// TestMain removes them) by the same packages the CLI reads them with.

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/hdf5"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/sac"
)

// fixtures holds absolute paths of the shared test inputs. Tests must not
// write into their directory.
type fixtureSet struct {
	Dir string

	PendulumPolicy string // 3 → 1, recorded env "pendulum"
	HopperPolicy   string // 11 → 3, recorded env "hopper"
	NoEnvPolicy3   string // 3 → 1 with pendulum's bounds, no recorded env
	BoundsPolicy   string // 3 → 1 scaled to [−1, 1], no recorded env

	Data      string // pendulum-shaped D4RL file: 3-dim observations, 1-dim actions, env "pendulum"
	Data42    string // 4-dim observations, 2-dim actions, no env
	Huge      string // like Data, but rewards stored as float64 with 1e300 in row 7
	NotHDF5   string // a text file
	Empty     string // a 0-byte file
	SubDir    string // an empty directory
	Loop      string // a symlink pointing at itself through a second link
	Model     string // Koopman model for Data (S = 3, m = 1)
	Model42   string // Koopman model for Data42 (S = 4, m = 2)
	Minari    string // Minari dataset directory: 3 episodes of 50 steps, 3-dim observations, 1-dim actions
	HugeIndex int    // the row of Huge's out-of-range reward
}

var (
	fixOnce sync.Once
	fix     fixtureSet
	fixErr  error
)

// fixtures builds the fixture files on first use.
func fixtures(t *testing.T) fixtureSet {
	t.Helper()
	fixOnce.Do(func() { fixErr = buildFixtures() })
	if fixErr != nil {
		t.Fatalf("building fixtures: %v", fixErr)
	}
	return fix
}

func buildFixtures() error {
	dir := filepath.Join(filepath.Dir(koopqBin), "fixtures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := fixtureSet{Dir: dir, HugeIndex: 7}
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(1, 2))
	net := sac.NetConfig{Hidden: []int{8}, Init: "xavier"}

	policy := func(path, envName string, obs, act int, scale sac.ActionScale) error {
		actor := sac.NewActor(net, obs, act, rng)
		return sac.SavePolicy(path, sac.NewPolicy(actor, dataset.Identity(obs), scale), net, envName, nil)
	}
	envScale := func(name string) (sac.ActionScale, error) {
		e, err := env.Make(name)
		if err != nil {
			return sac.ActionScale{}, err
		}
		return sac.Scale(e)
	}
	pend, err := envScale("pendulum")
	if err != nil {
		return err
	}
	hop, err := envScale("hopper")
	if err != nil {
		return err
	}
	f.PendulumPolicy, f.HopperPolicy, f.NoEnvPolicy3, f.BoundsPolicy = p("pendulum.safetensors"), p("hopper.safetensors"), p("noenv3.safetensors"), p("bounds.safetensors")
	for _, c := range []struct {
		path, env string
		obs, act  int
		scale     sac.ActionScale
	}{
		{f.PendulumPolicy, "pendulum", 3, 1, pend},
		{f.HopperPolicy, "hopper", 11, 3, hop},
		{f.NoEnvPolicy3, "", 3, 1, pend},
		{f.BoundsPolicy, "", 3, 1, sac.ActionScale{Low: []float32{-1}, High: []float32{1}}},
	} {
		if err := policy(c.path, c.env, c.obs, c.act, c.scale); err != nil {
			return err
		}
	}

	// Datasets: episodes of 100 steps, the last one of each cut by the time limit.
	synth := func(obs, act, n int, meta map[string]string) *dataset.Dataset {
		d := dataset.Synthetic(obs, act, n, rng)
		for i := 99; i < n; i += 100 {
			d.Timeouts[i] = 1
		}
		d.Meta = meta
		return d
	}
	f.Data, f.Data42 = p("pendulum-tiny.hdf5"), p("other-42.hdf5")
	d := synth(3, 1, 400, map[string]string{"env": "pendulum"})
	if err := dataset.WriteD4RL(f.Data, d); err != nil {
		return err
	}
	if err := dataset.WriteD4RL(f.Data42, synth(4, 2, 300, map[string]string{})); err != nil {
		return err
	}

	// Rewards stored as float64, one of them finite but beyond float32's range.
	f.Huge = p("huge-reward.hdf5")
	h, err := hdf5.Create(f.Huge)
	if err != nil {
		return err
	}
	n := 200
	rew := make([]float64, n)
	for i := range rew {
		rew[i] = float64(d.Rewards[i])
	}
	rew[f.HugeIndex] = 1e300
	term, tout := make([]bool, n), make([]bool, n)
	tout[99], tout[199] = true, true
	for _, err := range []error{
		h.WriteFloat32("observations", d.Observations[:n*3], []int{n, 3}, nil),
		h.WriteFloat32("actions", d.Actions[:n], []int{n, 1}, nil),
		h.WriteFloat64("rewards", rew, []int{n}, nil),
		h.WriteBool("terminals", term, []int{n}, nil),
		h.WriteBool("timeouts", tout, []int{n}, nil),
	} {
		if err != nil {
			h.Close()
			return err
		}
	}
	if err := h.Close(); err != nil {
		return err
	}

	f.NotHDF5, f.Empty, f.SubDir, f.Loop = p("notes.txt"), p("empty.hdf5"), p("subdir"), p("loop-a")
	if err := os.WriteFile(f.NotHDF5, []byte("not an HDF5 file\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(f.Empty, nil, 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(f.SubDir, 0o755); err != nil {
		return err
	}
	if err := os.Symlink("loop-b", f.Loop); err != nil {
		return err
	}
	if err := os.Symlink("loop-a", p("loop-b")); err != nil {
		return err
	}

	// A Minari dataset directory (HDF5 backend): episode_<id> groups with
	// T+1 observations and T actions, rewards, terminations, truncations.
	f.Minari = p("minari-toy")
	if err := writeMinari(f.Minari, rng); err != nil {
		return err
	}

	// Untrained Koopman models: inspect and symcheck only need the shapes.
	f.Model, f.Model42 = p("koopman-3-1.safetensors"), p("koopman-4-2.safetensors")
	for _, c := range []struct {
		path     string
		obs, act int
	}{{f.Model, 3, 1}, {f.Model42, 4, 2}} {
		mc := koopman.DefaultModelConfig(c.obs, c.act)
		mc.Latent, mc.Hidden = 4, []int{16}
		m, err := koopman.NewModel(mc)
		if err != nil {
			return err
		}
		if err := m.Save(c.path, map[string]string{"env": ""}); err != nil {
			return err
		}
	}
	fix = f
	return nil
}

// writeMinari writes a Minari-layout dataset directory with 3 episodes of
// T = 50 steps: the first terminates, the others are truncated.
func writeMinari(dir string, rng *rand.Rand) error {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	h, err := hdf5.Create(filepath.Join(dir, "data", "main_data.hdf5"))
	if err != nil {
		return err
	}
	const T = 50
	for ep := range 3 {
		obs := make([]float32, (T+1)*3)
		act := make([]float32, T)
		rew := make([]float64, T)
		for i := range obs {
			obs[i] = float32(rng.NormFloat64())
		}
		for i := range act {
			act[i] = float32(4*rng.Float64() - 2)
			rew[i] = -rng.Float64()
		}
		term, trunc := make([]bool, T), make([]bool, T)
		if ep == 0 {
			term[T-1] = true
		} else {
			trunc[T-1] = true
		}
		g := "episode_" + string(rune('0'+ep)) + "/"
		for _, err := range []error{
			h.WriteFloat32(g+"observations", obs, []int{T + 1, 3}, nil),
			h.WriteFloat32(g+"actions", act, []int{T, 1}, nil),
			h.WriteFloat64(g+"rewards", rew, []int{T}, nil),
			h.WriteBool(g+"terminations", term, []int{T}, nil),
			h.WriteBool(g+"truncations", trunc, []int{T}, nil),
		} {
			if err != nil {
				h.Close()
				return err
			}
		}
	}
	if err := h.Close(); err != nil {
		return err
	}
	meta := `{"dataset_id": "toy/pendulum/medium-v0", "total_episodes": 3, "total_steps": 150, "data_format": "hdf5"}` + "\n"
	return os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(meta), 0o644)
}
