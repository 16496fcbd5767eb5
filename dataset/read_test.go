package dataset

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadTellsMinariByContent: Read and Format tell a Minari HDF5 file
// from a D4RL one by what it holds, not by its name, in this process and
// in a child process; a file that is neither is an error naming its keys.
func TestReadTellsMinariByContent(t *testing.T) {
	dir := minariFixture(t, "")
	b, err := os.ReadFile(filepath.Join(dir, "data", "main_data.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(t.TempDir(), "arm_logs.hdf5")
	if err := os.WriteFile(renamed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := ReadMinari(renamed, ReadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	d4rl := fixture(t, "bool", true, true, "")
	other := filepath.Join(t.TempDir(), "other.h5")
	py(t, "-c", "import sys, h5py; h5py.File(sys.argv[1], 'w')['foo'] = 1", other)
	for _, in := range []bool{true, false} {
		opts := ReadOptions{InProcess: in}
		for path, format := range map[string]string{renamed: "minari", dir: "minari", d4rl: "d4rl"} {
			if got, err := Format(path, opts); err != nil || got != format {
				t.Errorf("InProcess %v: Format(%s) = %q, %v; want %q", in, path, got, err, format)
			}
		}
		got, err := Read(renamed, opts)
		if err != nil {
			t.Fatalf("InProcess %v: Read of a Minari file named %s: %v", in, filepath.Base(renamed), err)
		}
		got.Meta, want.Meta = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("InProcess %v: Read = %+v, want ReadMinari's %+v", in, got, want)
		}
		if d, err := Read(d4rl, opts); err != nil || d.Len() != 7 {
			t.Errorf("InProcess %v: Read of a D4RL file: %v", in, err)
		}
		if _, err := Read(other, opts); err == nil || !strings.Contains(err.Error(), "foo") || !strings.Contains(err.Error(), "Minari") {
			t.Errorf("InProcess %v: Read of another file: %v", in, err)
		}
	}
}

// TestInspectMaxEpisodeSteps: for a file without timeouts, dataset info's
// episode statistics follow --max-episode-steps as the conversion does
// (400 steps with limit 100 are 4 episodes of 100, rewards 0..399).
func TestInspectMaxEpisodeSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v0.hdf5")
	py(t, "-c", `import sys, h5py, numpy as np
N = 400
with h5py.File(sys.argv[1], "w") as f:
    f["observations"] = np.arange(2 * N, dtype=np.float32).reshape(N, 2)
    f["actions"] = np.zeros((N, 1), np.float32)
    f["rewards"] = np.arange(N, dtype=np.float32)
    f["terminals"] = np.zeros(N, bool)
`, path)
	in, err := Inspect(path, ReadOptions{MaxEpisodeSteps: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Episode k sums 100k .. 100k+99: 100·100k + 4950; their mean is at k = 1.5.
	if in.Episodes != 4 || in.TimeoutEpisodes != 4 || in.Lengths.Min != 100 || in.Lengths.Max != 100 ||
		in.Returns.Mean != 100*150+4950 || in.Conversion.DroppedTimeouts != 3 {
		t.Errorf("episodes %d (%d time-limit), lengths %+v, returns %+v, conversion %+v; want 4 of 100 steps, mean return 19950",
			in.Episodes, in.TimeoutEpisodes, in.Lengths, in.Returns, in.Conversion)
	}
}

// TestEpisodesForFollowsD4RLCounter: the d4rl fallback's episode ends,
// including its restart at 1 after a terminal (TestQLearningNoTimeouts
// pins the same counter for the conversion).
func TestEpisodesForFollowsD4RLCounter(t *testing.T) {
	r := &Raw{N: 8, Rewards: make([]float32, 8), Terminals: []float32{0, 1, 0, 0, 0, 0, 0, 0}}
	var lens []int
	for _, e := range r.EpisodesFor(ReadOptions{MaxEpisodeSteps: 3}) {
		lens = append(lens, e.Len)
	}
	// Terminal at row 1; then rows 2-3 (the count restarted at 1), 4-6, 7.
	if want := []int{2, 2, 3, 1}; !reflect.DeepEqual(lens, want) {
		t.Errorf("episode lengths %v, want %v", lens, want)
	}
	// With next observations the limit plays no part.
	if eps := r.EpisodesFor(ReadOptions{MaxEpisodeSteps: 3, UseNextObservations: true}); len(eps) != 2 {
		t.Errorf("next-observation mode: %d episodes, want 2 (terminal only)", len(eps))
	}
}

// TestInspectDropInvalidReturns: a NaN reward dropped with --drop-invalid
// leaves finite episode returns (the rest of the episode) and JSON output.
func TestInspectDropInvalidReturns(t *testing.T) {
	path := fixture(t, "bool", true, true, "")
	py(t, "-c", `import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    f["rewards"][4] = np.nan
`, path)
	in, err := Inspect(path, ReadOptions{DropInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's returns 3, 12, 13, 17 lose reward 4 from the second.
	if in.Returns.Mean != (3+8+13+17)/4.0 || in.Returns.Min != 3 || in.Returns.Max != 17 {
		t.Errorf("returns %+v, want mean 10.25 over 3, 8, 13, 17", in.Returns)
	}
	if _, err := json.Marshal(in); err != nil {
		t.Errorf("--json: %v", err)
	}
}

// TestQLearningDropInvalidKeepsBoundary: a row dropped for NaN just before
// a dropped time-limit row (or a terminal row dropped for NaN) still ends
// its episode on the last kept transition, so episodes do not merge.
func TestQLearningDropInvalidKeepsBoundary(t *testing.T) {
	nan := float32(math.NaN())
	mk := func(rewards, terminals, timeouts []float32) *Raw {
		n := len(rewards)
		r := &Raw{Path: "toy.hdf5", N: n, ObsDim: 1, ActDim: 1, Observations: make([]float32, n), Actions: make([]float32, n),
			Rewards: rewards, Terminals: terminals, Timeouts: timeouts}
		for i := range r.Observations {
			r.Observations[i] = float32(i)
		}
		return r
	}
	cases := map[string]struct {
		r    *Raw
		opts ReadOptions
		lens []int
	}{
		// Episodes rows 0-3 (3 a time limit, 2 NaN) and 4-8.
		"NaN before a time limit": {mk([]float32{0, 1, nan, 3, 4, 5, 6, 7, 8}, make([]float32, 9),
			[]float32{0, 0, 0, 1, 0, 0, 0, 0, 0}), ReadOptions{DropInvalid: true}, []int{2, 4}},
		// The terminal row 2 itself is NaN.
		"NaN terminal": {mk([]float32{0, 1, nan, 3, 4, 5}, []float32{0, 0, 1, 0, 0, 0}, make([]float32, 6)),
			ReadOptions{DropInvalid: true}, []int{2, 2}},
		// Next-observation mode: the flagged row 2 is NaN.
		"NaN time limit, next observations": {mk([]float32{0, 1, nan, 3, 4}, make([]float32, 5), []float32{0, 0, 1, 0, 0}),
			ReadOptions{DropInvalid: true, UseNextObservations: true}, nil},
	}
	for name, c := range cases {
		if c.opts.UseNextObservations {
			c.r.NextObservations = c.r.Observations
			c.lens = []int{2, 2}
		}
		d, _, err := c.r.QLearning(c.opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var lens []int
		for _, e := range d.Episodes() {
			lens = append(lens, e.Len)
		}
		if !reflect.DeepEqual(lens, c.lens) {
			t.Errorf("%s: episode lengths %v, want %v (timeouts %v)", name, lens, c.lens, d.Timeouts)
		}
	}
}

// TestMinariEpisodeGroupsStaySeparate: Minari episode groups whose last
// step has no flag (or whose flagged last step is dropped as invalid) are
// still separate episodes after reading.
func TestMinariEpisodeGroupsStaySeparate(t *testing.T) {
	for name, extra := range map[string]string{
		"unflagged":     `    f["episode_0/terminations"][2] = False`,
		"dropped flags": `    f["episode_0/rewards"][2] = np.nan`,
	} {
		dir := minariFixture(t, extra)
		d, err := ReadMinari(dir, ReadOptions{DropInvalid: true})
		if err != nil {
			t.Fatal(err)
		}
		var lens []int
		for _, e := range d.Episodes() {
			lens = append(lens, e.Len)
		}
		want := []int{3, 2}
		if name == "dropped flags" {
			want = []int{2, 2}
		}
		if !reflect.DeepEqual(lens, want) {
			t.Errorf("%s: episode lengths %v, want %v (terminals %v, timeouts %v)", name, lens, want, d.Terminals, d.Timeouts)
		}
	}
}

// TestQLearningNaNTimeout: a NaN timeout is an error in d4rl mode too (it
// was taken for a time limit and dropped silently), and --drop-invalid
// drops it as invalid, ending the episode there.
func TestQLearningNaNTimeout(t *testing.T) {
	nan := float32(math.NaN())
	n := 6
	r := &Raw{Path: "toy.hdf5", N: n, ObsDim: 1, ActDim: 1, Observations: make([]float32, n), Actions: make([]float32, n),
		Rewards: []float32{0, 1, 2, 3, 4, 5}, Terminals: make([]float32, n), Timeouts: []float32{0, 0, nan, 0, 0, 0}}
	if _, _, err := r.QLearning(ReadOptions{}); err == nil || !strings.Contains(err.Error(), `key "timeouts": row 2 holds NaN`) {
		t.Errorf("got %v, want an error naming timeouts row 2", err)
	}
	d, conv, err := r.QLearning(ReadOptions{DropInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if conv.DroppedInvalid != 1 || conv.DroppedTimeouts != 0 || !reflect.DeepEqual(d.Rewards, []float32{0, 1, 3, 4}) {
		t.Errorf("conversion %+v, rewards %v", conv, d.Rewards)
	}
	if eps := d.Episodes(); len(eps) != 2 || eps[0].Len != 2 {
		t.Errorf("episodes %+v, want rows 0-1 and 3-4", eps)
	}
}
