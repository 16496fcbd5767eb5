package dataset

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const python = "/usr/bin/python3"

// needH5py skips the test when Debian's python3 with h5py is absent (CI
// installs python3-h5py, so there it runs).
func needH5py(t testing.TB) {
	t.Helper()
	if err := exec.Command(python, "-c", "import h5py, numpy").Run(); err != nil {
		t.Skip("python3 with h5py not available:", err)
	}
}

// py runs a python script file or -c snippet and returns stdout.
func py(t testing.TB, args ...string) string {
	t.Helper()
	needH5py(t)
	cmd := exec.Command(python, args...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("python %v: %v\n%s", args, err, msg)
	}
	return string(out)
}

// fixture writes testdata/mkd4rl.py's file and returns its path.
func fixture(t testing.TB, tdtype string, compress, next bool, variant string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.hdf5")
	b := func(x bool) string {
		if x {
			return "1"
		}
		return "0"
	}
	py(t, "testdata/mkd4rl.py", path, tdtype, b(compress), b(next), variant)
	return path
}

// rowsOf builds the expected fixture arrays for the given source rows.
func obsRows(rows []int) []float32 {
	var x []float32
	for _, i := range rows {
		x = append(x, float32(i), float32(10*i))
	}
	return x
}

func nextObsStored(rows []int) []float32 {
	var x []float32
	for _, i := range rows {
		x = append(x, float32(i)+0.5, float32(10*i)+5)
	}
	return x
}

func actRows(rows []int) []float32 {
	var x []float32
	for _, i := range rows {
		x = append(x, 0.1*float32(i))
	}
	return x
}

func rewRows(rows []int) []float32 {
	var x []float32
	for _, i := range rows {
		x = append(x, float32(i))
	}
	return x
}

func plus1(rows []int) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r + 1
	}
	return out
}

func checkDataset(t *testing.T, name string, d *Dataset, rows []int, next []float32, term, tout []float32) {
	t.Helper()
	if d.ObsDim != 2 || d.ActDim != 1 {
		t.Fatalf("%s: dims %d %d", name, d.ObsDim, d.ActDim)
	}
	for _, c := range []struct {
		key       string
		got, want []float32
	}{
		{"observations", d.Observations, obsRows(rows)},
		{"next_observations", d.NextObservations, next},
		{"actions", d.Actions, actRows(rows)},
		{"rewards", d.Rewards, rewRows(rows)},
		{"terminals", d.Terminals, term},
		{"timeouts", d.Timeouts, tout},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %s = %v, want %v", name, c.key, c.got, c.want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

// TestQLearningHandComputed checks the three conversion modes on the
// fixture's episodes against hand-computed rows, for every terminal dtype
// and storage layout.
func TestQLearningHandComputed(t *testing.T) {
	for _, td := range []string{"bool", "uint8", "float32"} {
		for _, compress := range []bool{false, true} {
			path := fixture(t, td, compress, true, "")
			name := td
			if compress {
				name += "+gzip+shuffle+chunks"
			}
			// d4rl default: rows 0..8, time-limit rows 5 and 7 dropped, last row 9 dropped.
			d, err := ReadD4RL(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			kept := []int{0, 1, 2, 3, 4, 6, 8}
			checkDataset(t, name+" default", d, kept, obsRows(plus1(kept)),
				[]float32{0, 0, 1, 0, 0, 0, 0}, []float32{0, 0, 0, 0, 1, 1, 0})
			if d.Meta["algorithm"] != "SAC" || d.Meta["iteration"] != "7" || d.Meta["env"] != "toy-v0" || d.Meta["source"] != path {
				t.Errorf("%s: meta %v", name, d.Meta)
			}
			// terminate_on_end: rows 0..8 all kept.
			d, err = ReadD4RL(path, ReadOptions{TerminateOnEnd: true})
			if err != nil {
				t.Fatal(err)
			}
			kept = []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
			checkDataset(t, name+" terminate_on_end", d, kept, obsRows(plus1(kept)),
				[]float32{0, 0, 1, 0, 0, 0, 0, 0, 0}, []float32{0, 0, 0, 0, 0, 1, 0, 1, 0})
			// stored next_observations: all 10 rows, flags passed through.
			d, err = ReadD4RL(path, ReadOptions{UseNextObservations: true})
			if err != nil {
				t.Fatal(err)
			}
			kept = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
			checkDataset(t, name+" next_observations", d, kept, nextObsStored(kept),
				[]float32{0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, []float32{0, 0, 0, 0, 0, 1, 0, 1, 0, 0})
		}
	}
}

// TestQLearningMatchesD4RL runs d4rl's own qlearning_dataset code
// (testdata/qlearning.py) on the fixture and compares every number.
func TestQLearningMatchesD4RL(t *testing.T) {
	for _, toe := range []bool{false, true} {
		path := fixture(t, "bool", true, false, "")
		arg := "0"
		if toe {
			arg = "1"
		}
		var want map[string][]float64
		if err := json.Unmarshal([]byte(py(t, "testdata/qlearning.py", path, arg)), &want); err != nil {
			t.Fatal(err)
		}
		d, err := ReadD4RL(path, ReadOptions{TerminateOnEnd: toe})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]float32{"observations": d.Observations, "next_observations": d.NextObservations,
			"actions": d.Actions, "rewards": d.Rewards, "terminals": d.Terminals}
		for k, w := range want {
			g := got[k]
			if len(g) != len(w) {
				t.Fatalf("terminate_on_end=%v %s: %d values, d4rl %d", toe, k, len(g), len(w))
			}
			for i := range w {
				if float64(g[i]) != float64(float32(w[i])) {
					t.Errorf("terminate_on_end=%v %s[%d] = %v, d4rl %v", toe, k, i, g[i], w[i])
				}
			}
		}
	}
}

// TestQLearningNoTimeouts checks d4rl's episode_step fallback by hand,
// including its quirk that episode_step restarts at 1 after a terminal.
func TestQLearningNoTimeouts(t *testing.T) {
	mk := func(term []float32) *Raw {
		n := len(term)
		r := &Raw{Path: "mem", N: n, ObsDim: 1, ActDim: 1, Terminals: term,
			Observations: make([]float32, n), Actions: make([]float32, n), Rewards: make([]float32, n)}
		for i := range n {
			r.Observations[i], r.Rewards[i] = float32(i), float32(i)
		}
		return r
	}
	cases := []struct {
		term []float32
		kept []float32
	}{
		{[]float32{0, 0, 0, 0, 0, 0, 0, 0}, []float32{0, 1, 3, 4, 6}},
		{[]float32{0, 1, 0, 0, 0, 0, 0, 0}, []float32{0, 1, 2, 4, 5}},
	}
	for _, c := range cases {
		r := mk(c.term)
		// The error names the flags that fix it, not only the Go fields.
		if _, _, err := r.QLearning(ReadOptions{}); err == nil || !strings.Contains(err.Error(), "timeouts") ||
			!strings.Contains(err.Error(), "--max-episode-steps") || !strings.Contains(err.Error(), "--use-next-observations") {
			t.Errorf("no timeouts and no MaxEpisodeSteps: err %v", err)
		}
		d, conv, err := r.QLearning(ReadOptions{MaxEpisodeSteps: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Rewards, c.kept) {
			t.Errorf("terminals %v: kept rows %v, want %v", c.term, d.Rewards, c.kept)
		}
		if conv.DroppedTimeouts != 2 || conv.DroppedLast != 1 || conv.Kept != len(c.kept) {
			t.Errorf("conversion %+v", conv)
		}
	}
}

func TestEpisodesAndReturns(t *testing.T) {
	path := fixture(t, "uint8", true, true, "")
	r, err := LoadD4RL(path, ReadOptions{Infos: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Episode{
		{Start: 0, Len: 3, Return: 0 + 1 + 2, Terminal: true},
		{Start: 3, Len: 3, Return: 3 + 4 + 5, Timeout: true},
		{Start: 6, Len: 2, Return: 6 + 7, Timeout: true},
		{Start: 8, Len: 2, Return: 8 + 9},
	}
	if got := r.Episodes(); !reflect.DeepEqual(got, want) {
		t.Errorf("episodes %+v\nwant %+v", got, want)
	}
	// After the d4rl conversion the dropped time-limit steps are missing
	// but the boundaries survive.
	d, _, err := r.QLearning(ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantD := []Episode{
		{Start: 0, Len: 3, Return: 3, Terminal: true},
		{Start: 3, Len: 2, Return: 7, Timeout: true},
		{Start: 5, Len: 1, Return: 6, Timeout: true},
		{Start: 6, Len: 1, Return: 8},
	}
	if got := d.Episodes(); !reflect.DeepEqual(got, wantD) {
		t.Errorf("dataset episodes %+v\nwant %+v", got, wantD)
	}
	if q := r.Infos["qpos"]; !reflect.DeepEqual(q.Shape, []int{10, 3}) || q.Data[29] != 29 {
		t.Errorf("qpos %v", q.Shape)
	}
	if a := r.Infos["action_log_probs"]; !reflect.DeepEqual(a.Shape, []int{10}) || a.Data[3] != -3 {
		t.Errorf("action_log_probs %v", a)
	}
	if _, ok := r.Infos["qvel"]; !ok {
		t.Error("no qvel")
	}
	if k, ok := findKey(r.Keys, "terminals"); !ok || k.Dtype != "uint8" || !reflect.DeepEqual(k.Filters, []string{"shuffle", "gzip"}) {
		t.Errorf("terminals key %+v", k)
	}
	if k, ok := findKey(r.Keys, "timeouts"); !ok || k.Dtype != "bool" {
		t.Errorf("timeouts key %+v", k)
	}
}

func TestNaNHandling(t *testing.T) {
	path := fixture(t, "bool", true, true, "nan")
	_, err := ReadD4RL(path, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"observations"`) || !strings.Contains(err.Error(), "row 4") {
		t.Fatalf("want an error naming the file, observations and row 4; got %v", err)
	}
	r, err := LoadD4RL(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// obs row 4 is s of transition 4 and s' of transition 3: both go.
	d, conv, err := r.QLearning(ReadOptions{DropInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if conv.DroppedInvalid != 2 || d.Meta["dropped_invalid"] != "2" {
		t.Errorf("dropped %d, meta %q", conv.DroppedInvalid, d.Meta["dropped_invalid"])
	}
	if !reflect.DeepEqual(d.Rewards, []float32{0, 1, 2, 6, 8}) {
		t.Errorf("kept rewards %v", d.Rewards)
	}
	// With stored next_observations only transition 4 touches the NaN.
	_, conv, err = r.QLearning(ReadOptions{DropInvalid: true, UseNextObservations: true})
	if err != nil || conv.DroppedInvalid != 1 || conv.Kept != 9 {
		t.Errorf("next obs mode: %+v %v", conv, err)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
}

// TestValidationErrors checks that each malformed file gives a clear error
// naming the file and the key.
func TestValidationErrors(t *testing.T) {
	needH5py(t)
	dir := t.TempDir()
	base := `N = 5
f['observations'] = np.zeros((N, 3), np.float32)
f['actions'] = np.zeros((N, 2), np.float32)
f['rewards'] = np.zeros(N, np.float32)
f['terminals'] = np.zeros(N, bool)
f['timeouts'] = np.zeros(N, bool)
`
	del := func(key string) string { return base + "del f['" + key + "']\n" }
	cases := []struct {
		name, script, key, msg string
	}{
		{"missing_actions", del("actions"), "actions", "missing"},
		{"missing_rewards", del("rewards"), "rewards", "missing"},
		{"missing_terminals", del("terminals"), "terminals", "missing"},
		{"short_rewards", del("rewards") + "f['rewards'] = np.zeros(4, np.float32)", "rewards", "4 rows, want 5"},
		{"long_actions", del("actions") + "f['actions'] = np.zeros((6, 2), np.float32)", "actions", "6 rows"},
		{"rank1_obs", del("observations") + "f['observations'] = np.zeros(5, np.float32)", "observations", "rank 1"},
		{"rank3_obs", del("observations") + "f['observations'] = np.zeros((5, 3, 1), np.float32)", "observations", "rank 3"},
		{"rank2_rewards", del("rewards") + "f['rewards'] = np.zeros((5, 2), np.float32)", "rewards", "(5, 2)"},
		{"string_terminals", del("terminals") + "f['terminals'] = np.array([b'a'] * 5)", "terminals", "S1"},
		{"next_obs_width", base + "f['next_observations'] = np.zeros((5, 4), np.float32)", "next_observations", "width 4"},
		{"obs_group", del("observations") + "f.create_group('observations')", "observations", "group"},
		{"zero_rows", strings.Replace(base, "N = 5", "N = 0", 1), "observations", "0 rows"},
		{"no_datasets", "", "", "no datasets"},
		{"inf_reward", del("rewards") + "f['rewards'] = np.array([0, 0, np.inf, 0, 0], np.float32)", "rewards", "row 2"},
		{"nan_terminal", del("terminals") + "f['terminals'] = np.array([0, np.nan, 0, 0, 0], np.float32)", "terminals", "row 1"},
	}
	// One python run writes every case.
	var gen strings.Builder
	gen.WriteString("import sys, os, h5py, numpy as np\n")
	for _, c := range cases {
		gen.WriteString("f = h5py.File(os.path.join(sys.argv[1], '" + c.name + ".hdf5'), 'w')\n" + c.script + "\nf.close()\n")
	}
	py(t, "-c", gen.String(), dir)
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".hdf5")
		_, err := ReadD4RL(p, ReadOptions{})
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		msg := err.Error()
		t.Logf("%s: %v", c.name, err)
		if !strings.Contains(msg, p) || (c.key != "" && !strings.Contains(msg, `"`+c.key+`"`)) || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: error %q should name the file, key %q and say %q", c.name, msg, c.key, c.msg)
		}
	}
	// Files that are not (whole) HDF5 files.
	empty := filepath.Join(dir, "empty.hdf5")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "text.hdf5")
	os.WriteFile(text, []byte("observations,actions\n1,2\n"), 0o644)
	good := fixture(t, "bool", true, true, "")
	raw, _ := os.ReadFile(good)
	for _, c := range []struct{ path, msg string }{
		{empty, "empty"},
		{text, "not an HDF5 file"},
		{filepath.Join(dir, "absent.hdf5"), "no such file"},
		{dir, "directory"},
	} {
		_, err := ReadD4RL(c.path, ReadOptions{})
		t.Logf("%v", err)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want an error naming it and saying %q", c.path, err, c.msg)
		}
	}
	for _, frac := range []float64{0.1, 0.3, 0.5, 0.7, 0.9, 0.99} {
		p := filepath.Join(dir, "trunc.hdf5")
		os.WriteFile(p, raw[:int(frac*float64(len(raw)))], 0o644)
		_, err := ReadD4RL(p, ReadOptions{})
		t.Logf("truncated to %.0f%%: %v", 100*frac, err)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("truncated to %.0f%%: got %v", 100*frac, err)
		}
	}
}

func toyDataset(n int) *Dataset {
	d := &Dataset{ObsDim: 3, ActDim: 2, Meta: map[string]string{"env": "hopper-medium-v2", "policy": "sac", "seed": "7"}}
	for i := range n {
		f := float32(i)
		d.Observations = append(d.Observations, f, -f, f*0.25)
		d.NextObservations = append(d.NextObservations, f+1, -f-1, (f+1)*0.25)
		d.Actions = append(d.Actions, float32(math.Sin(float64(i))), float32(math.Cos(float64(i))))
		d.Rewards = append(d.Rewards, 1.5*f)
		d.Terminals = append(d.Terminals, b2f(i%7 == 6))
		d.Timeouts = append(d.Timeouts, b2f(i%5 == 4 && i%7 != 6))
	}
	return d
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func TestWriteRoundTrip(t *testing.T) {
	d := toyDataset(50)
	path := filepath.Join(t.TempDir(), "out.hdf5")
	qpos := Array{Data: make([]float32, 50*4), Shape: []int{50, 4}}
	for i := range qpos.Data {
		qpos.Data[i] = float32(i)
	}
	if err := WriteD4RL(path, d, WithInfo("qpos", qpos)); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(m) != 0 { // .tmp-out.hdf5-* (internal/atomicfile)
		t.Errorf("temp files left: %v", m)
	}
	// koopq reads back.
	back, err := ReadD4RL(path, ReadOptions{UseNextObservations: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key       string
		got, want []float32
	}{
		{"observations", back.Observations, d.Observations},
		{"next_observations", back.NextObservations, d.NextObservations},
		{"actions", back.Actions, d.Actions},
		{"rewards", back.Rewards, d.Rewards},
		{"terminals", back.Terminals, d.Terminals},
		{"timeouts", back.Timeouts, d.Timeouts},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s differs after round trip", c.key)
		}
	}
	for _, k := range []string{"env", "policy", "seed", "koopq_version"} {
		if back.Meta[k] == "" || (d.Meta[k] != "" && back.Meta[k] != d.Meta[k]) {
			t.Errorf("meta %s = %q", k, back.Meta[k])
		}
	}
	r, err := LoadD4RL(path, ReadOptions{Infos: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Infos["qpos"], qpos) {
		t.Error("qpos differs")
	}

	// h5py reads the same numbers with the dtypes D4RL users expect.
	out := py(t, "-c", `
import sys, json, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    res = {}
    for k in ["observations", "actions", "rewards", "next_observations", "terminals", "timeouts", "infos/qpos"]:
        x = f[k]
        res[k] = {"dtype": str(x.dtype), "shape": list(x.shape), "compression": x.compression,
                  "shuffle": bool(x.shuffle), "values": np.asarray(x[()], dtype=np.float64).ravel().tolist()}
    res["meta"] = {k: (v[()].decode() if isinstance(v[()], bytes) else str(v[()])) for k, v in f["metadata"].items()}
print(json.dumps(res))
`, path)
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	type arr struct {
		Dtype       string
		Shape       []int
		Compression string
		Shuffle     bool
		Values      []float64
	}
	want := map[string]struct {
		dtype string
		shape []int
		vals  []float32
	}{
		"observations":      {"float32", []int{50, 3}, d.Observations},
		"actions":           {"float32", []int{50, 2}, d.Actions},
		"rewards":           {"float32", []int{50}, d.Rewards},
		"next_observations": {"float32", []int{50, 3}, d.NextObservations},
		"terminals":         {"bool", []int{50}, d.Terminals},
		"timeouts":          {"bool", []int{50}, d.Timeouts},
		"infos/qpos":        {"float32", []int{50, 4}, qpos.Data},
	}
	for k, w := range want {
		var a arr
		if err := json.Unmarshal(got[k], &a); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if a.Dtype != w.dtype || !reflect.DeepEqual(a.Shape, w.shape) || a.Compression != "gzip" || !a.Shuffle {
			t.Errorf("h5py sees %s as %s %v %s shuffle=%v", k, a.Dtype, a.Shape, a.Compression, a.Shuffle)
		}
		for i, v := range w.vals {
			if a.Values[i] != float64(v) {
				t.Errorf("h5py %s[%d] = %v, wrote %v", k, i, a.Values[i], v)
				break
			}
		}
	}
	var meta map[string]string
	json.Unmarshal(got["meta"], &meta)
	if meta["env"] != "hopper-medium-v2" || meta["policy"] != "sac" || meta["seed"] != "7" || meta["koopq_version"] == "" {
		t.Errorf("h5py metadata %v", meta)
	}

	// Writing refuses invalid data and leaves the old file intact.
	bad := toyDataset(5)
	bad.Rewards[2] = float32(math.NaN())
	if err := WriteD4RL(path, bad); err == nil {
		t.Error("wrote a dataset with NaN")
	}
	if _, err := ReadD4RL(path, ReadOptions{UseNextObservations: true}); err != nil {
		t.Errorf("old file damaged: %v", err)
	}
	// Uncompressed contiguous layout also round-trips.
	p2 := filepath.Join(t.TempDir(), "plain.hdf5")
	if err := WriteD4RL(p2, d, WithGzip(0), WithShuffle(false)); err != nil {
		t.Fatal(err)
	}
	r2, err := LoadD4RL(p2, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := findKey(r2.Keys, "observations"); k.Chunks != nil || len(k.Filters) != 0 {
		t.Errorf("plain layout: %+v", k)
	}
}

// metadata/koopq_version names the commit (it read "devel" alone for
// binaries built without a VCS stamp, e.g. tests or GOFLAGS=-buildvcs=false,
// although the commit was known).
func TestVersionNamesCommit(t *testing.T) {
	if v := Version(); !regexp.MustCompile(`^devel\+[0-9a-f]{12}(-dirty)?-unstamped$`).MatchString(v) {
		t.Errorf("Version() = %q, want devel+<commit>", v)
	}
}
