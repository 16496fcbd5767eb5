package dataset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// minariFixture writes a Minari-style dataset directory with h5py:
// episode_0 has T=3 steps and terminates, episode_1 has T=2 and is
// truncated; observations are 2-D with T+1 rows, actions 1-D.
func minariFixture(t *testing.T, extra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mujoco", "toy", "medium-v0")
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	py(t, "-c", `
import sys, json, h5py, numpy as np
d = sys.argv[1]
with h5py.File(d + "/data/main_data.hdf5", "w") as f:
    f.attrs["total_episodes"] = 2
    f.attrs["total_steps"] = 5
    f.attrs["env_spec"] = '{"id": "Toy-v5"}'
    for i, (T, term) in enumerate([(3, True), (2, False)]):
        g = f.create_group("episode_%d" % i)
        g.attrs["id"] = i
        g.attrs["total_steps"] = T
        base = 100 * i
        g.create_dataset("observations", data=np.stack([np.arange(T + 1) + base, -np.arange(T + 1) - base], 1).astype(np.float64), compression="gzip")
        g.create_dataset("actions", data=(np.arange(T) * 0.5 + i).reshape(T, 1).astype(np.float32))
        g.create_dataset("rewards", data=np.arange(T, dtype=np.float64) + 10 * i)
        te = np.zeros(T, bool); tr = np.zeros(T, bool)
        if term: te[-1] = True
        else: tr[-1] = True
        g.create_dataset("terminations", data=te)
        g.create_dataset("truncations", data=tr)
        g.create_group("infos")
`+extra+`
json.dump({"dataset_id": "mujoco/toy/medium-v0", "total_episodes": 2, "total_steps": 5,
           "ref_min_score": -1.5, "ref_max_score": 100, "data_format": "hdf5",
           "env_spec": {"id": "Toy-v5", "max_episode_steps": 1000}}, open(d + "/metadata.json", "w"))
`, dir)
	return dir
}

func TestReadMinari(t *testing.T) {
	dir := minariFixture(t, "")
	for _, p := range []string{dir, filepath.Join(dir, "data", "main_data.hdf5")} {
		d, err := ReadMinari(p, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := &Dataset{ObsDim: 2, ActDim: 1,
			Observations:     []float32{0, 0, 1, -1, 2, -2, 100, -100, 101, -101},
			NextObservations: []float32{1, -1, 2, -2, 3, -3, 101, -101, 102, -102},
			Actions:          []float32{0, 0.5, 1, 1, 1.5},
			Rewards:          []float32{0, 1, 2, 10, 11},
			Terminals:        []float32{0, 0, 1, 0, 0},
			Timeouts:         []float32{0, 0, 0, 0, 1},
		}
		want.Meta = d.Meta
		if !reflect.DeepEqual(d, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", p, d, want)
		}
		for k, v := range map[string]string{"dataset_id": "mujoco/toy/medium-v0", "ref_min_score": "-1.5",
			"total_steps": "5", "data_format": "hdf5"} {
			if d.Meta[k] != v {
				t.Errorf("meta %s = %q, want %q", k, d.Meta[k], v)
			}
		}
		if !strings.Contains(d.Meta["env_spec"], "Toy-v5") {
			t.Errorf("env_spec %q", d.Meta["env_spec"])
		}
	}
	in, err := Inspect(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != "minari" || in.Episodes != 2 || in.TerminalEpisodes != 1 || in.TimeoutEpisodes != 1 ||
		in.Returns.Mean != (3+21)/2.0 || in.Rows != 5 || in.Conversion.Kept != 5 {
		t.Errorf("info %+v", in)
	}
}

func TestMinariErrors(t *testing.T) {
	cases := map[string]struct{ extra, key, msg string }{
		"dict obs": {`    del f["episode_1/observations"]
    f.create_group("episode_1/observations")`, "episode_1/observations", "dict"},
		"T rows": {`    del f["episode_1/rewards"]
    f["episode_1/rewards"] = np.zeros(3)`, "episode_1/rewards", "T = 2"},
		"nan":     {`    f["episode_0/rewards"][1] = np.nan`, "episode_0/rewards", "step 1"},
		"missing": {`    del f["episode_0/truncations"]`, "episode_0/truncations", "missing"},
	}
	for name, c := range cases {
		dir := minariFixture(t, c.extra)
		_, err := ReadMinari(dir, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), `"`+c.key+`"`) || !strings.Contains(err.Error(), c.msg) ||
			!strings.Contains(err.Error(), "main_data.hdf5") {
			t.Errorf("%s: got %v, want key %q and %q", name, err, c.key, c.msg)
		}
	}
	dir := minariFixture(t, `    f["episode_0/rewards"][1] = np.nan`)
	_, conv, err := LoadMinari(dir, ReadOptions{DropInvalid: true})
	if err != nil || conv.DroppedInvalid != 1 || conv.Kept != 4 {
		t.Errorf("drop invalid: %+v %v", conv, err)
	}
}

func TestInspectD4RL(t *testing.T) {
	path := fixture(t, "bool", true, true, "")
	in, err := Inspect(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := Conversion{Rows: 10, Kept: 7, DroppedTimeouts: 2, DroppedLast: 1}
	if in.Format != "d4rl" || in.Conversion != want || in.ObsDim != 2 || in.ActDim != 1 ||
		in.Terminals != 1 || in.Timeouts != 2 || in.Episodes != 4 || in.TerminalEpisodes != 1 || in.TimeoutEpisodes != 2 ||
		!in.HasNextObservations || !in.HasTimeouts || in.SizeBytes == 0 {
		t.Errorf("info %+v", in)
	}
	// Returns 3, 12, 13, 17.
	if in.Returns.Mean != 11.25 || in.Returns.Min != 3 || in.Returns.Max != 17 || in.Lengths.Max != 3 {
		t.Errorf("returns %+v lengths %+v", in.Returns, in.Lengths)
	}
	var buf bytes.Buffer
	if err := in.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, s := range []string{"d4rl", "observations 2, actions 1", "7 after d4rl", "2 time-limit steps",
		"4 (1 terminal, 2 time-limit, 1 cut", "algorithm", "SAC", "infos/qpos", "(10, 3)", "float64", "shuffle+gzip"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	if _, err := json.Marshal(in); err != nil {
		t.Error(err)
	}
	in, err = Inspect(path, ReadOptions{UseNextObservations: true})
	if err != nil || in.Conversion.Kept != 10 {
		t.Errorf("next obs: %+v %v", in, err)
	}
	// Not a dataset at all.
	p := filepath.Join(t.TempDir(), "other.h5")
	py(t, "-c", "import sys, h5py; h5py.File(sys.argv[1], 'w')['foo'] = 1", p)
	if _, err := Inspect(p, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "foo") {
		t.Errorf("other file: %v", err)
	}
}
