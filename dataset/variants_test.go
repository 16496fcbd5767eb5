package dataset

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadAcceptsStoredVariants reads a file written by h5py in layouts
// D4RL users meet (integer actions, float64 observations, (N, 1) flag and
// reward columns, root attributes of various sizes and kinds, optional infos/*) and
// checks every value arrives as written.
func TestReadAcceptsStoredVariants(t *testing.T) {
	needH5py(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "variants.hdf5")
	py(t, "-c", `import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    f['observations'] = np.arange(12, dtype=np.float64).reshape(4, 3) / 4
    f['actions'] = np.array([[1, -2], [3, 4], [-5, 6], [7, 8]], np.int32)
    f['rewards'] = np.array([[0.5], [1.5], [2.5], [3.5]], np.float32)
    f['terminals'] = np.array([[0], [0], [1], [0]], np.uint8)
    f['timeouts'] = np.zeros(4, bool)
    f['infos/qpos'] = np.ones((4, 2), np.float32)
    f['infos/extra'] = np.ones(3, np.float32)
    f.attrs['sixteen'] = np.arange(16)
    f.attrs['seventeen'] = np.arange(17)
    f.attrs['env'] = np.bytes_('toy-v0')  # fixed-length; variable-length attributes are refused
    f.attrs['policy'] = 'vlen'
`, path)
	raw, err := LoadD4RL(path, ReadOptions{Infos: true})
	if err != nil {
		t.Fatal(err)
	}
	if raw.N != 4 || raw.ObsDim != 3 || raw.ActDim != 2 {
		t.Fatalf("N %d obs %d act %d, want 4, 3, 2", raw.N, raw.ObsDim, raw.ActDim)
	}
	for i, v := range raw.Observations {
		if v != float32(i)/4 {
			t.Errorf("observations[%d] = %v, want %v", i, v, float32(i)/4)
		}
	}
	wantA := []float32{1, -2, 3, 4, -5, 6, 7, 8}
	for i, v := range raw.Actions {
		if v != wantA[i] {
			t.Errorf("actions[%d] = %v, want %v (stored as int32)", i, v, wantA[i])
		}
	}
	for i, v := range raw.Rewards {
		if want := float32(i) + 0.5; v != want {
			t.Errorf("rewards[%d] = %v, want %v (stored as (N, 1))", i, v, want)
		}
	}
	if len(raw.Terminals) != 4 || raw.Terminals[2] != 1 || raw.Terminals[0]+raw.Terminals[1]+raw.Terminals[3] != 0 {
		t.Errorf("terminals %v, want [0 0 1 0] (stored as (N, 1) uint8)", raw.Terminals)
	}
	// infos/qpos has N rows and is read; infos/extra (N-1 rows, not one
	// of the required keys) is skipped without an error.
	if q, ok := raw.Infos["qpos"]; !ok || len(q.Data) != 8 {
		t.Errorf("infos/qpos not read: %v", raw.Infos)
	}
	if _, ok := raw.Infos["extra"]; ok {
		t.Errorf("infos/extra with 3 rows should be skipped, got %v", raw.Infos["extra"])
	}
	// Root attributes up to 16 values enter the metadata; larger ones do not.
	if got := raw.Meta["sixteen"]; got != "[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]" {
		t.Errorf("16-value attribute in metadata = %q", got)
	}
	if got, ok := raw.Meta["seventeen"]; ok {
		t.Errorf("17-value attribute should be left out of metadata, got %q", got)
	}
	if raw.Meta["env"] != "toy-v0" {
		t.Errorf("string attribute env = %q", raw.Meta["env"])
	}
	if got, ok := raw.Meta["policy"]; ok {
		t.Errorf("a variable-length string attribute is not read from existing files, got %q", got)
	}
}

// TestReadRefusesShortRequiredInfos: infos/qpos, infos/qvel and
// infos/action_log_probs are required to have one row per observation
// when present (replay and policy-evaluation read them); any of them with
// the wrong row count is an error naming the key.
func TestReadRefusesShortRequiredInfos(t *testing.T) {
	needH5py(t)
	dir := t.TempDir()
	keys := []string{"qpos", "qvel", "action_log_probs"}
	var gen strings.Builder
	gen.WriteString("import sys, os, h5py, numpy as np\n")
	for _, k := range keys {
		gen.WriteString(`with h5py.File(os.path.join(sys.argv[1], '` + k + `.hdf5'), 'w') as f:
    f['observations'] = np.zeros((4, 3), np.float32)
    f['actions'] = np.zeros((4, 2), np.float32)
    f['rewards'] = np.zeros(4, np.float32)
    f['terminals'] = np.zeros(4, bool)
    f['infos/` + k + `'] = np.zeros((3, 2), np.float32)
`)
	}
	py(t, "-c", gen.String(), dir)
	for _, k := range keys {
		p := filepath.Join(dir, k+".hdf5")
		_, err := LoadD4RL(p, ReadOptions{Infos: true})
		if err == nil || !strings.Contains(err.Error(), `"infos/`+k+`"`) || !strings.Contains(err.Error(), "want 4 rows") {
			t.Errorf("infos/%s with 3 of 4 rows: got %v, want an error naming it", k, err)
		}
		if _, err := LoadD4RL(p, ReadOptions{}); err != nil {
			t.Errorf("without Infos the file reads: %v", err)
		}
	}
}

// TestQLearningNamesTheRowAfterADroppedTimeout: in d4rl mode a transition
// whose successor observation (row i+1) is not finite is reported at row
// i+1, even when an earlier, dropped time-limit row holds NaN itself.
func TestQLearningNamesTheRowAfterADroppedTimeout(t *testing.T) {
	nan := float32(0)
	nan /= nan
	r := &Raw{
		Path: "toy.hdf5", N: 4, ObsDim: 3, ActDim: 1,
		Observations: []float32{nan, nan, nan, 1, 2, 3, 4, nan, 6, 7, 8, 9},
		Actions:      make([]float32, 4),
		Rewards:      make([]float32, 4),
		Terminals:    make([]float32, 4),
		Timeouts:     []float32{1, 0, 0, 0},
	}
	_, _, err := r.QLearning(ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "row 2 holds NaN") || !strings.Contains(err.Error(), "(transition 1)") {
		t.Fatalf("got %v, want row 2 (transition 1) named", err)
	}
}

// TestSplitEpisodesShortFlags: flags shorter than the rewards (nil
// terminals, short timeouts) count as zero for the rows they lack.
func TestSplitEpisodesShortFlags(t *testing.T) {
	rewards := []float32{1, 2, 3, 4, 5}
	eps := SplitEpisodesBy(rewards, []float32{0, 1}, []float32{0, 0, 0, 1}, EpisodeRule{})
	want := []Episode{{Start: 0, Len: 2, Return: 3, Terminal: true}, {Start: 2, Len: 2, Return: 7, Timeout: true}, {Start: 4, Len: 1, Return: 5}}
	if len(eps) != len(want) {
		t.Fatalf("episodes %+v, want %+v", eps, want)
	}
	for i := range want {
		if eps[i] != want[i] {
			t.Errorf("episode %d = %+v, want %+v", i, eps[i], want[i])
		}
	}
	if got := SplitEpisodesBy(rewards, nil, nil, EpisodeRule{}); len(got) != 1 || got[0].Len != 5 {
		t.Errorf("no flags: %+v, want one episode of 5", got)
	}
}

// TestContinuesComparesTheRightRows checks Continues at a row past the
// first with multi-dimensional observations: row k+1's observation against
// row k's next observation, every coordinate.
func TestContinuesComparesTheRightRows(t *testing.T) {
	d := &Dataset{
		ObsDim: 2,
		// rows:            0       1       2
		Observations:     []float32{0, 0, 5, 5, 7, 8},
		NextObservations: []float32{9, 9, 7, 8, 1, 1},
		Actions:          make([]float32, 3),
		ActDim:           1,
		Rewards:          make([]float32, 3),
		Terminals:        make([]float32, 3),
	}
	if d.Continues(0) {
		t.Error("Continues(0): row 1 starts at (5,5), row 0 ended at (9,9)")
	}
	if !d.Continues(1) {
		t.Error("Continues(1): row 2 starts at (7,8) where row 1 ended")
	}
	if d.Continues(2) {
		t.Error("Continues(2): the last row continues nowhere")
	}
	d.NextObservations[3] = 9 // row 1 ended at (7,9): second coordinate differs
	if d.Continues(1) {
		t.Error("Continues(1) with the second coordinate different")
	}
}

// TestStatsOfHandComputed checks StatsOf on values whose mean, population
// standard deviation and range are worked out by hand.
func TestStatsOfHandComputed(t *testing.T) {
	// mean 3; squared deviations 4, 1, 0, 16, 1 → variance 22/5.
	s := StatsOf([]float64{1, 2, 3, 7, 2})
	want := Stats{Count: 5, Mean: 3, Std: math.Sqrt(4+1+0+16+1) / math.Sqrt(5), Min: 1, Max: 7}
	if s.Count != want.Count || !(math.Abs(s.Mean-want.Mean) <= 1e-12) || !(math.Abs(s.Std-want.Std) <= 1e-12) || s.Min != want.Min || s.Max != want.Max {
		t.Errorf("StatsOf = %+v, want %+v", s, want)
	}
	// Far from zero the two-pass form Σ(v − mean)² keeps the spread
	// (population std of {0.1, 0.2, 0.4} is √(0.14/9) = 0.124722); forms
	// equal to it in exact arithmetic, such as Σ(v + mean)(v − mean), lose
	// it to the rounding of the mean.
	if s := StatsOf([]float64{1e9 + 0.1, 1e9 + 0.2, 1e9 + 0.4}); !(math.Abs(s.Std-math.Sqrt(0.14/9)) <= 1e-6) {
		t.Errorf("std of 1e9+{0.1,0.2,0.4} = %v, want %v", s.Std, math.Sqrt(0.14/9))
	}
	if s := StatsOf([]float64{-4}); s != (Stats{Count: 1, Mean: -4, Min: -4, Max: -4}) {
		t.Errorf("one value: %+v", s)
	}
	if s := StatsOf(nil); s != (Stats{}) {
		t.Errorf("no values: %+v, want zeros", s)
	}
}

// TestSuccessInfoEmpty: no rows and no episodes give zero fractions, not
// 0/0 = NaN (which would also break JSON encoding of dataset info).
func TestSuccessInfoEmpty(t *testing.T) {
	s := successInfo(nil, nil)
	if *s != (SuccessInfo{}) {
		t.Errorf("successInfo of nothing = %+v, want zeros", *s)
	}
	s = successInfo([]float32{0, 1, 1, 0}, []Episode{{Start: 0, Len: 2}, {Start: 2, Len: 2}})
	if s.SuccessEpisodes != 2 || s.EpisodeFraction != 1 || s.SuccessRows != 2 || s.RowFraction != 0.5 {
		t.Errorf("successInfo = %+v, want 2 of 2 episodes, 2 of 4 rows", *s)
	}
}

// TestInspectTellsFormatsByFile: a Minari main_data.hdf5 given as a file
// (not its directory) is recognised as Minari; a file that is neither
// names its top-level keys, the first ten and "..." when there are more.
func TestInspectTellsFormatsByFile(t *testing.T) {
	dir := minariFixture(t, "")
	in, err := Inspect(filepath.Join(dir, "data", "main_data.hdf5"), ReadOptions{})
	if err != nil || in.Format != "minari" || in.Episodes != 2 {
		t.Fatalf("Minari file: %+v, %v", in, err)
	}
	tmp := t.TempDir()
	py(t, "-c", `import sys, os, h5py
for n in (10, 11):
    with h5py.File(os.path.join(sys.argv[1], 'k%d.h5' % n), 'w') as f:
        for i in range(n):
            f['key%02d' % i] = i
`, tmp)
	for _, c := range []struct {
		n    int
		list string
	}{
		{10, "top-level keys: key00, key01, key02, key03, key04, key05, key06, key07, key08, key09"},
		{11, "top-level keys: key00, key01, key02, key03, key04, key05, key06, key07, key08, key09, ..."},
	} {
		p := filepath.Join(tmp, fmt.Sprintf("k%d.h5", c.n))
		_, err := Inspect(p, ReadOptions{})
		if err == nil || !strings.HasSuffix(err.Error(), c.list) {
			t.Errorf("%d keys: got %v, want it to end %q", c.n, err, c.list)
		}
	}
}

// TestInfoTextKeyListing: up to 40 keys are listed in full, more are cut to
// the first 30 and a count of the rest; each key's layout says contiguous
// or its chunk shape, with its filters only when it has some.
func TestInfoTextKeyListing(t *testing.T) {
	text := func(in *Info) string {
		var b bytes.Buffer
		if err := in.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	keys := func(n int) []Key {
		out := make([]Key, n)
		for i := range out {
			out[i] = Key{Name: fmt.Sprintf("k%02d", i), Shape: []int{4}, Dtype: "float32"}
		}
		return out
	}
	in := &Info{Path: "x.hdf5", Format: "d4rl", Keys: keys(40)}
	out := text(in)
	if !strings.Contains(out, "keys (40)") || !strings.Contains(out, "k39") || strings.Contains(out, "more") {
		t.Errorf("40 keys should be listed in full:\n%s", out)
	}
	in.Keys = keys(41)
	out = text(in)
	if !strings.Contains(out, "keys (41)") || !strings.Contains(out, "k29") || strings.Contains(out, "k30") || !strings.Contains(out, "  ... 11 more\n") {
		t.Errorf("41 keys should show the first 30 and '... 11 more':\n%s", out)
	}
	in.Keys = []Key{
		{Name: "a", Shape: []int{4}, Dtype: "float32"},
		{Name: "b", Shape: []int{4, 2}, Dtype: "float64", Chunks: []int{2, 2}},
		{Name: "c", Shape: []int{4}, Dtype: "bool", Chunks: []int{4}, Filters: []string{"shuffle", "gzip"}},
	}
	out = text(in)
	for _, line := range []string{
		fmt.Sprintf("  %-28s %-14s %-8s %s\n", "a", "(4,)", "float32", "contiguous"),
		fmt.Sprintf("  %-28s %-14s %-8s %s\n", "b", "(4, 2)", "float64", "chunks (2, 2)"),
		fmt.Sprintf("  %-28s %-14s %-8s %s\n", "c", "(4,)", "bool", "chunks (4,) shuffle+gzip"),
	} {
		if !strings.Contains(out, line) {
			t.Errorf("text lacks the line %q:\n%s", line, out)
		}
	}
}

// TestWriteInfosOfEveryRank writes infos of rank 1, 2 and 3 with the
// default (chunked, compressed) options, with 8-row chunks and with no
// filters or chunks: each reads back unchanged, and with 8-row chunks a
// rank-2 info is chunked like the observations (8 rows × its width).
func TestWriteInfosOfEveryRank(t *testing.T) {
	d := toyDataset(20)
	arr := func(shape ...int) Array {
		n := 1
		for _, s := range shape {
			n *= s
		}
		a := Array{Data: make([]float32, n), Shape: shape}
		for i := range a.Data {
			a.Data[i] = float32(i) * 0.25
		}
		return a
	}
	infos := map[string]Array{"logp": arr(20), "qpos": arr(20, 4), "img": arr(20, 2, 3)}
	for _, c := range []struct {
		name string
		opts []WriteOption
	}{
		{"default", nil},
		{"chunked", []WriteOption{WithChunkRows(8)}},
		{"plain", []WriteOption{WithGzip(0), WithShuffle(false), WithChunkRows(0)}},
	} {
		path := filepath.Join(t.TempDir(), c.name+".hdf5")
		opts := append([]WriteOption{}, c.opts...)
		for k, a := range infos {
			opts = append(opts, WithInfo(k, a))
		}
		if err := WriteD4RL(path, d, opts...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r, err := LoadD4RL(path, ReadOptions{Infos: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k, a := range infos {
			if !reflect.DeepEqual(r.Infos[k], a) {
				t.Errorf("%s: infos/%s read back as shape %v", c.name, k, r.Infos[k].Shape)
			}
		}
		if c.name != "chunked" {
			continue
		}
		in, err := Inspect(path, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var obs, qpos Key
		for _, k := range in.Keys {
			switch k.Name {
			case "observations":
				obs = k
			case "infos/qpos":
				qpos = k
			}
		}
		if !reflect.DeepEqual(obs.Chunks, []int{8, 3}) || !reflect.DeepEqual(qpos.Chunks, []int{8, 4}) {
			t.Errorf("chunks: observations %v, infos/qpos %v; want [8 3] and [8 4]", obs.Chunks, qpos.Chunks)
		}
	}
}

// TestWriteLayouts: each write option alone gives the layout it names
// (compression and shuffle need chunks, so they chunk automatically); with
// none the arrays are contiguous and unfiltered.
func TestWriteLayouts(t *testing.T) {
	d := toyDataset(20)
	for _, c := range []struct {
		name    string
		opts    []WriteOption
		chunks  []int // observations' chunk shape; nil: contiguous
		filters []string
	}{
		{"none", []WriteOption{WithGzip(0), WithShuffle(false)}, nil, nil},
		{"default", nil, []int{20, 3}, []string{"shuffle", "gzip"}},
		{"gzip", []WriteOption{WithShuffle(false)}, []int{20, 3}, []string{"gzip"}},
		{"shuffle", []WriteOption{WithGzip(0)}, []int{20, 3}, []string{"shuffle"}},
		{"chunks", []WriteOption{WithGzip(0), WithShuffle(false), WithChunkRows(8)}, []int{8, 3}, nil},
	} {
		path := filepath.Join(t.TempDir(), c.name+".hdf5")
		if err := WriteD4RL(path, d, c.opts...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		back, err := ReadD4RL(path, ReadOptions{UseNextObservations: true})
		if err != nil || !reflect.DeepEqual(back.Observations, d.Observations) {
			t.Fatalf("%s: read back: %v", c.name, err)
		}
		in, err := Inspect(path, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range in.Keys {
			if k.Name != "observations" {
				continue
			}
			if !reflect.DeepEqual(k.Chunks, c.chunks) || len(k.Filters) != len(c.filters) || len(c.filters) > 0 && !reflect.DeepEqual(k.Filters, c.filters) {
				t.Errorf("%s: observations chunks %v filters %v, want %v %v", c.name, k.Chunks, k.Filters, c.chunks, c.filters)
			}
		}
	}
}
