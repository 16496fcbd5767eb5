//go:build cgo && !nomujoco

package collect

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/manip"
)

// collectPush writes a two-episode push dataset with seed into a fresh
// directory and returns its record.
func collectPush(t *testing.T, seed uint64) D4RLFile {
	t.Helper()
	files, err := WriteD4RLDatasets(context.Background(), []string{manip.PushName},
		D4RLOptions{Out: t.TempDir(), Transitions: 1, Seed: seed, ManipEpisodes: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name != manip.PushName || files[0].SuccessEpisodes == nil {
		t.Fatalf("files %+v", files)
	}
	return files[0]
}

// contentHash is the sha256 of the file's transitions with their stored
// next observations (every row).
func contentHash(t *testing.T, path string) string {
	t.Helper()
	d, err := dataset.ReadD4RL(path, dataset.ReadOptions{UseNextObservations: true})
	if err != nil {
		t.Fatal(err)
	}
	return d.ContentSHA256()
}

// Two collections with one seed hold the same transitions; another seed
// gives others.
func TestManipCollectionDeterministic(t *testing.T) {
	a, b, c := collectPush(t, 3), collectPush(t, 3), collectPush(t, 4)
	ha, hb, hc := contentHash(t, a.Path), contentHash(t, b.Path), contentHash(t, c.Path)
	if ha != hb {
		t.Errorf("seed 3 twice: content %s vs %s", ha, hb)
	}
	if ha == hc {
		t.Errorf("seeds 3 and 4 gave the same content %s", ha)
	}
	ra, _ := dataset.LoadD4RL(a.Path, dataset.ReadOptions{Infos: true})
	rb, _ := dataset.LoadD4RL(b.Path, dataset.ReadOptions{Infos: true})
	if ra == nil || rb == nil || !slices.Equal(ra.Infos["success"].Data, rb.Infos["success"].Data) {
		t.Error("seed 3 twice: success flags differ")
	}
}

// The file has D4RL's layout with 500-step episodes that end in timeouts,
// never terminals, the executed (noisy, clipped) actions, per-step success
// flags, provenance metadata, and dataset info reports its success fraction.
func TestManipDatasetLayout(t *testing.T) {
	f := collectPush(t, 5)
	r, err := dataset.LoadD4RL(f.Path, dataset.ReadOptions{Infos: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2 * manip.MaxEpisodeSteps
	if r.N != n || r.ObsDim != manip.ObsDim || r.ActDim != manip.ActDim || f.Rows != n || f.Episodes != 2 {
		t.Fatalf("rows %d (record %d, %d episodes), dims %d/%d; want %d rows of 39/4", r.N, f.Rows, f.Episodes, r.ObsDim, r.ActDim, n)
	}
	for i := range n {
		if r.Terminals[i] != 0 {
			t.Fatalf("terminal at row %d", i)
		}
		if want := i%manip.MaxEpisodeSteps == manip.MaxEpisodeSteps-1; (r.Timeouts[i] == 1) != want {
			t.Fatalf("row %d: timeout %v, want %v", i, r.Timeouts[i], want)
		}
		if r.Timeouts[i] == 0 && !slices.Equal(r.NextObservations[i*39:(i+1)*39], r.Observations[(i+1)*39:(i+2)*39]) {
			t.Fatalf("row %d: next observation is not the next row's observation", i)
		}
	}
	noisy := false
	for _, a := range r.Actions {
		if math.Abs(float64(a)) > 1 {
			t.Fatalf("action %v outside [-1, 1]", a)
		}
		noisy = noisy || (math.Abs(float64(a)) < 1 && a != 0)
	}
	if !noisy {
		t.Error("every action is 0 or ±1: no noise added")
	}
	succ, ok := r.Infos["success"]
	if !ok || !slices.Equal(succ.Shape, []int{n}) {
		t.Fatalf("infos/success %+v", succ.Shape)
	}
	episodes := 0
	for e := range 2 {
		if slices.Contains(succ.Data[e*500:(e+1)*500], 1) {
			episodes++
		}
	}
	if episodes != *f.SuccessEpisodes || f.Normalized != 50*float64(episodes) {
		t.Errorf("record: %d success episodes (%.1f%%), flags say %d", *f.SuccessEpisodes, f.Normalized, episodes)
	}
	for k, want := range map[string]string{"env": manip.PushName, "seed": "5", "action_noise": "0.8", "episodes": "2", "episode_steps": "500"} {
		if r.Meta[k] != want {
			t.Errorf("metadata %s = %q, want %q", k, r.Meta[k], want)
		}
	}
	if !strings.Contains(r.Meta["policy"], "scripted") || r.Meta["koopq_version"] == "" {
		t.Errorf("metadata policy %q, koopq_version %q", r.Meta["policy"], r.Meta["koopq_version"])
	}
	in, err := dataset.Inspect(f.Path, dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := in.Success; s == nil || s.Episodes != 2 || s.SuccessEpisodes != episodes || s.Rows != n {
		t.Errorf("dataset info success %+v, want %d of 2 episodes over %d rows", s, episodes, n)
	}
}

// h5py reads the file under D4RL's key names and dtypes.
func TestManipDatasetLoadsWithH5py(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run(); err != nil {
		t.Skip("python3 with h5py not available:", err)
	}
	f := collectPush(t, 6)
	script := `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    assert f["observations"].shape == (1000, 39) and f["observations"].dtype == np.float32
    assert f["actions"].shape == (1000, 4) and f["next_observations"].shape == (1000, 39)
    assert f["terminals"].dtype == np.bool_ and not f["terminals"][:].any()
    assert list(np.flatnonzero(f["timeouts"][:])) == [499, 999]
    s = f["infos/success"][:]
    assert s.shape == (1000,) and set(np.unique(s)) <= {0.0, 1.0}
    assert f["metadata/env"][()].decode() == "metaworld-push-v2"
`
	if out, err := exec.Command("/usr/bin/python3", "-c", script, f.Path).CombinedOutput(); err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
}

// Bad requests fail before anything is written.
func TestManipCollectErrors(t *testing.T) {
	neg, over, nan := -0.1, 1.5, math.NaN()
	for _, c := range []struct {
		names []string
		opts  D4RLOptions
		want  string
	}{
		{[]string{manip.PushName}, D4RLOptions{Transitions: 1, ManipNoise: &neg}, "--noise"},
		{[]string{manip.PushName}, D4RLOptions{Transitions: 1, ManipEpisodes: -1}, "--episodes"},
		{[]string{manip.DoorCloseName}, D4RLOptions{Transitions: 1, ManipRandomFraction: &neg}, "--random-fraction"},
		{[]string{manip.DoorCloseName}, D4RLOptions{Transitions: 1, ManipRandomFraction: &over}, "--random-fraction"},
		{[]string{manip.DoorCloseName}, D4RLOptions{Transitions: 1, ManipRandomFraction: &nan}, "--random-fraction"},
		{[]string{"hopper-random-v2"}, D4RLOptions{Transitions: 1, ManipRandomFraction: &over}, "--random-fraction"},
		{[]string{manip.PushName}, D4RLOptions{Transitions: 1, FromRun: "x"}, "--from-run"},
		{[]string{"hopper-random-v2"}, D4RLOptions{Transitions: 1, ManipEpisodes: 3}, "--episodes"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		c.opts.Out = out
		_, err := WriteD4RLDatasets(context.Background(), c.names, c.opts, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %+v: error %v, want one naming %s", c.names, c.opts, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v %+v: --out made before the check failed (%v)", c.names, c.opts, err)
		}
	}
	if !slices.Contains(ManipDatasetNames(), manip.PushName) || !IsManipDataset(manip.PushName) || IsManipDataset("hopper-medium-v2") {
		t.Errorf("manipulation datasets %v", ManipDatasetNames())
	}
}
