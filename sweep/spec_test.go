package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testSpec = `
name: t
datasets:
  - {name: hopper-medium, env: hopper, data: data/hopper-medium.hdf5}
  - {name: walker-medium, env: walker2d, data: /abs/walker.hdf5, flags: {min-q-weight: 5}}
methods:
  - {name: CQL, augment: none}
  - name: KFC++
    augment: kfc++
    use: [koop]
    flags: {koopman-prob: 0.8, hidden: [64, 64]}
seeds: [3, 1]
steps: 1000
preset: paper
eval: {every: 100, episodes: 2}
flags: {hidden: [32, 32], residual: true}
flag_sets:
  koop: {koopman-epochs: 3, min-q-weight: 7}
ablations:
  - {name: KFC++-p0, method: KFC++, datasets: [hopper-medium], seeds: [3], flags: {koopman-prob: 0}}
`

func mustParse(t *testing.T, text string, chk Checker) (*Spec, []Run) {
	t.Helper()
	s, runs, err := Parse([]byte(text), chk)
	if err != nil {
		t.Fatal(err)
	}
	return s, runs
}

func flagsOf(r Run) string {
	var p []string
	for _, f := range r.Flags {
		p = append(p, f.Name+"="+f.Value)
	}
	return strings.Join(p, " ")
}

func TestSpecExpansion(t *testing.T) {
	s, runs := mustParse(t, testSpec, Checker{})
	if len(runs) != 2*2*2+1 {
		t.Fatalf("%d runs, want 9", len(runs))
	}
	var names []string
	for i, r := range runs {
		if r.Index != i {
			t.Errorf("run %d has index %d", i, r.Index)
		}
		names = append(names, r.Name)
	}
	want := "hopper-medium__cql__s3 hopper-medium__cql__s1 hopper-medium__kfcpp__s3 hopper-medium__kfcpp__s1 " +
		"walker-medium__cql__s3 walker-medium__cql__s1 walker-medium__kfcpp__s3 walker-medium__kfcpp__s1 hopper-medium__kfcpp-p0__s3"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("names\n got %s\nwant %s", got, want)
	}
	// Merge order: spec flags < dataset < method's sets < method flags; eval last.
	if got := flagsOf(runs[7]); got != "eval-episodes=2 eval-every=100 hidden=64,64 koopman-epochs=3 koopman-prob=0.8 min-q-weight=7 residual=true" {
		t.Errorf("walker KFC++ flags: %s", got)
	}
	if got := flagsOf(runs[4]); got != "eval-episodes=2 eval-every=100 hidden=32,32 min-q-weight=5 residual=true" {
		t.Errorf("walker CQL flags: %s", got)
	}
	ab := runs[8]
	if !ab.Ablation || ab.Base != "KFC++" || ab.Method != "KFC++-p0" || ab.Augment != "kfc++" || ab.Seed != 3 ||
		!strings.Contains(flagsOf(ab), "koopman-prob=0 ") {
		t.Errorf("ablation run %+v", ab)
	}
	args := strings.Join(runs[0].TrainArgs("/d", "/out/slot", "run"), " ")
	if args != "train --data /d/data/hopper-medium.hdf5 --env hopper --augment none --seed 3 --steps 1000 --preset paper --eval-episodes=2 --eval-every=100 --hidden=32,32 --residual=true --out /out/slot --name run" {
		t.Errorf("train args: %s", args)
	}
	if runs[0].ResolveData("/root") != "/root/data/hopper-medium.hdf5" || runs[4].ResolveData("/root") != "/abs/walker.hdf5" {
		t.Error("ResolveData")
	}
	if s.BaselineName() != "CQL" || s.ThreadsPerRun() != 1 {
		t.Errorf("baseline %q threads %d", s.BaselineName(), s.ThreadsPerRun())
	}
	// Expansion is deterministic.
	_, again := mustParse(t, testSpec, Checker{})
	if fmt.Sprint(again) != fmt.Sprint(runs) {
		t.Error("two expansions of one spec differ")
	}
}

func TestSpecErrors(t *testing.T) {
	chk := Checker{
		Flag: func(name, value string) error {
			switch name {
			case "hidden", "koopman-epochs", "min-q-weight", "koopman-prob", "residual", "batch":
				if name == "batch" && value == "x" {
					return errors.New("invalid syntax")
				}
				return nil
			}
			return errors.New("not a 'koopq train' flag")
		},
		Env: func(n string) error {
			if n == "hopper" || n == "walker2d" {
				return nil
			}
			return fmt.Errorf("unknown env %q", n)
		},
		Augment: func(n string) error {
			if n == "none" || n == "kfc++" {
				return nil
			}
			return fmt.Errorf("unknown augment %q", n)
		},
	}
	if _, _, err := Parse([]byte(testSpec), chk); err != nil {
		t.Fatalf("valid spec rejected: %v", err)
	}
	// An empty file said only "EOF".
	for _, empty := range []string{"", "# nothing yet\n"} {
		if _, _, err := Parse([]byte(empty), chk); err == nil || !strings.Contains(err.Error(), "the spec is empty") {
			t.Errorf("empty spec %q: %v", empty, err)
		}
	}
	cases := []struct {
		name, edit, want string
	}{
		{"unknown key", "seeds: [3, 1]\n=seeds: [3, 1]\nsteeps: 5\n", "field steeps not found"},
		{"no name", "name: t\n=name: \"\"\n", "name: missing"},
		{"zero steps", "steps: 1000\n=steps: 0\n", "steps: must be a positive"},
		{"dup seed", "seeds: [3, 1]\n=seeds: [3, 3]\n", "seeds: 3 appears twice"},
		{"bad env", "env: hopper,=env: hoper,", `datasets[0] (hopper-medium): env: unknown env "hoper"`},
		{"bad augment", "augment: kfc++\n=augment: kfc+++\n", `methods[1] (KFC++): augment: unknown augment "kfc+++"`},
		{"typo flag", "koopman-prob: 0.8=koopman-prb: 0.8", `methods[1] (KFC++).flags: flag "koopman-prb": not a 'koopq train' flag`},
		{"bad value", "residual: true}=residual: true, batch: x}", `flags: flag "batch": invalid syntax`},
		{"reserved", "residual: true}=residual: true, seed: 4}", `flag "seed" is set by the spec key seeds`},
		{"missing set", "use: [koop]=use: [kop]", `use: no flag set "kop"`},
		{"ablation method", "method: KFC++, datasets=method: KFC, datasets", `ablations[0] (KFC++-p0): method: no method named "KFC"`},
		{"ablation dataset", "datasets: [hopper-medium]=datasets: [hopper]", `no dataset named "hopper"`},
		{"dup method", "{name: CQL, augment: none}={name: KFC++, augment: none}", `name "KFC++" used twice`},
		{"nested list", "hidden: [32, 32]=hidden: [[32], 32]", "nested lists"},
		{"eval", "episodes: 2}=episodes: 0}", "eval.episodes: must be positive"},
		{"baseline", "steps: 1000\n=steps: 1000\nbaseline: SAC\n", `baseline: no method named "SAC"`},
		{"two docs", "steps: 1000\n=steps: 1000\n---\nname: x\n", "more than one YAML document"},
		// yaml.v3 truncates floats into integers: 0.5 → 0, 2^64 → 2^63, 300.7 → 300.
		{"fraction seed", "seeds: [3, 1]=seeds: [3, 0.5]", "seeds[1]: 0.5 is not a whole number"},
		{"seed 2^64", "seeds: [3, 1]=seeds: [18446744073709551616]", "seeds[0]: 18446744073709551616 is out of range (0 to 18446744073709551615)"},
		{"seed 1e30", "seeds: [3, 1]=seeds: [1e30]", "cannot unmarshal !!float `1e30` into uint64"},
		{"fraction steps", "steps: 1000\n=steps: 300.7\n", "steps: 300.7 is not a whole number"},
		{"huge steps", "steps: 1000\n=steps: 1e19\n", "cannot unmarshal !!float `1e19` into int"},
		{"inf steps", "steps: 1000\n=steps: .inf\n", "cannot unmarshal !!float `.inf` into int"},
		{"max+1 steps", "steps: 1000\n=steps: 9223372036854775808.0\n", "steps: 9223372036854775808.0 is out of range (-9223372036854775808 to 9223372036854775807)"},
		{"fraction episodes", "episodes: 2}=episodes: 1.9}", "eval.episodes: 1.9 is not a whole number"},
		{"ablation seed", "seeds: [3], flags=seeds: [2.5], flags", "ablations[0].seeds[0]: 2.5 is not a whole number"},
		{"threads", "steps: 1000\n=steps: 1000\nthreads: 100000\n", "threads: must be 0 to 256 (got 100000)"},
		{"threads 5000", "steps: 1000\n=steps: 1000\nthreads: 5000\n", "threads: must be 0 to 256"},
		{"nan speed", "steps: 1000\n=steps: 1000\nsteps_per_second: .nan\n", "steps_per_second: must be a finite number"},
		{"inf speed", "steps: 1000\n=steps: 1000\nsteps_per_second: .inf\n", "steps_per_second: must be a finite number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new, _ := strings.Cut(c.edit, "=")
			if !strings.Contains(testSpec, old) {
				t.Fatalf("test edit %q does not apply", old)
			}
			text := strings.Replace(testSpec, old, new, 1)
			_, _, err := Parse([]byte(text), chk)
			if err == nil {
				t.Fatalf("no error for %s", c.name)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
	// Whole numbers written as floats are what they say.
	s, runs, err := Parse([]byte(strings.Replace(strings.Replace(testSpec, "steps: 1000", "steps: 1e3", 1), "seeds: [3, 1]", "seeds: [3.0, 1e19]", 1)), chk)
	if err != nil || s.Steps != 1000 || runs[0].Seed != 3 || runs[1].Seed != 10000000000000000000 {
		t.Errorf("integral floats: %v %+v", err, s)
	}
	// Several problems are all reported.
	text := strings.Replace(strings.Replace(testSpec, "steps: 1000", "steps: -1", 1), "env: hopper,", "env: hoper,", 1)
	_, _, err = Parse([]byte(text), chk)
	if err == nil || !strings.Contains(err.Error(), "2 problems") {
		t.Errorf("two problems: %v", err)
	}
}

// TestTrainSettingsCheckedPerRun: Checker.Train sees every run's train
// command line; runs refused for one reason are reported once, the first
// named and the rest counted, and a spec whose runs all pass has no error.
func TestTrainSettingsCheckedPerRun(t *testing.T) {
	var seen []string
	chk := Checker{Train: func(args []string) error {
		line := strings.Join(args, " ")
		seen = append(seen, line)
		if strings.Contains(line, "--augment kfc++") && strings.Contains(line, "--koopman-prob=0.8") {
			return errors.New("koopman-prob refused")
		}
		return nil
	}}
	_, runs, err := Parse([]byte(testSpec), chk)
	if err == nil || runs != nil {
		t.Fatalf("spec with refused runs: err %v, %d runs", err, len(runs))
	}
	// Grid: 2 datasets × 2 methods × 2 seeds = 8, plus one ablation run.
	if len(seen) != 9 || !strings.HasPrefix(seen[0], "train --data ") {
		t.Errorf("Train asked about %d command lines, want 9: %q", len(seen), seen)
	}
	// The four KFC++ grid runs share the reason; the ablation (prob 0) passes.
	want := "run hopper-medium__kfcpp__s3 and 3 more: koopq train would refuse the settings: koopman-prob refused"
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Count(msg, "koopman-prob refused") != 1 {
		t.Errorf("error %q, want one line %q", msg, want)
	}
	if _, runs := mustParse(t, testSpec, Checker{Train: func([]string) error { return nil }}); len(runs) != 9 {
		t.Errorf("%d runs", len(runs))
	}
}

func TestRunNamesCollide(t *testing.T) {
	text := strings.Replace(testSpec, "{name: CQL, augment: none}", "{name: kfc++, augment: none}", 1)
	_, _, err := Parse([]byte(text), Checker{})
	if err == nil || !strings.Contains(err.Error(), "both get the directory name") {
		t.Errorf("colliding names: %v", err)
	}
}

func TestCompressRanges(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{9, 0, 2, 3, 4, 7}, "0,2-4,7,9"},
		{[]int{5}, "5"},
	} {
		if got := compressRanges(c.in); got != c.want {
			t.Errorf("compressRanges(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCollectArgs(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}", "data: d/hopper-medium.hdf5, collect: {sac-steps: 100, hidden: [8, 8]}}", 1)
	s, runs := mustParse(t, text, Checker{})
	got := strings.Join(s.Datasets[0].CollectArgs("/root"), " ")
	if got != "collect --env hopper --out /root/d --hidden=8,8 --sac-steps=100" {
		t.Errorf("collect args %q", got)
	}
	if s.Datasets[1].CollectArgs("/root") != nil {
		t.Error("a dataset without collect: has collect args")
	}
	missing := MissingData(s, runs, t.TempDir())
	if len(missing) != 1 || !strings.Contains(missing[0], "dataset walker-medium: data /abs/walker.hdf5: no such file") {
		t.Errorf("missing data %v", missing)
	}
	// Runs of the other dataset only: walker's missing file does not matter.
	hopper, err := Selection{Datasets: []string{"hopper-medium"}}.Apply(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	if missing := MissingData(s, hopper, t.TempDir()); len(missing) != 0 {
		t.Errorf("missing data of unselected datasets reported: %v", missing)
	}
	bad := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}", "data: data/hopper-medium.hdf5, collect: {env: hopper}}", 1)
	if _, _, err := Parse([]byte(bad), Checker{}); err == nil || !strings.Contains(err.Error(), `collect: "env" is set by the dataset's env and data`) {
		t.Errorf("collect env: %v", err)
	}
}

// collect: {dataset: NAME} regenerates a D4RL dataset from the committed
// behaviour policies: `koopq collect NAME --out DIR`, no --env.
func TestCollectD4RLName(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: d/hopper-medium-v2.hdf5, collect: {dataset: hopper-medium-v2, transitions: 5000, seed: 0}}", 1)
	var checked []string
	chk := Checker{CollectFlag: func(name, value string) error { checked = append(checked, name); return nil }}
	s, _ := mustParse(t, text, chk)
	got := strings.Join(s.Datasets[0].CollectArgs("/root"), " ")
	if got != "collect hopper-medium-v2 --out /root/d --seed=0 --transitions=5000" {
		t.Errorf("collect args %q", got)
	}
	if strings.Join(checked, ",") != "seed,transitions" {
		t.Errorf("collect flags checked: %v (the dataset name is not a flag)", checked)
	}
	for _, c := range []struct{ from, to, want string }{
		{"data: data/hopper-medium.hdf5}", "data: d/hopper.hdf5, collect: {dataset: hopper-medium-v2}}",
			"collect: data must be named hopper-medium-v2.hdf5 (what koopq collect hopper-medium-v2 writes), not hopper.hdf5"},
		{"data: data/hopper-medium.hdf5}", "data: d/walker2d-medium-v2.hdf5, collect: {dataset: walker2d-medium-v2}}",
			"collect: dataset walker2d-medium-v2 is not a dataset of env hopper"},
		{"data: data/hopper-medium.hdf5}", "data: d/x.hdf5, collect: {dataset: [a, b]}}",
			"collect: dataset must be a D4RL dataset name such as hopper-medium-v2"},
	} {
		_, _, err := Parse([]byte(strings.Replace(testSpec, c.from, c.to, 1)), Checker{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.to, err, c.want)
		}
	}
	// A dataset named for its env (manipulation tasks, AntMaze) is accepted.
	named := strings.Replace(testSpec, "{name: hopper-medium, env: hopper, data: data/hopper-medium.hdf5}",
		"{name: hopper-medium, env: metaworld-push-v2, data: d/metaworld-push-v2.hdf5, collect: {dataset: metaworld-push-v2, seed: 0}}", 1)
	s, _, err := Parse([]byte(named), Checker{})
	if err != nil {
		t.Fatalf("a dataset named for its env: %v", err)
	}
	if got := strings.Join(s.Datasets[0].CollectArgs("/root"), " "); got != "collect metaworld-push-v2 --out /root/d --seed=0" {
		t.Errorf("collect args %q", got)
	}
}

// datasets[].koopman: one shared model per dataset, trained by `koopq
// koopman train` and passed to the runs whose augmentation needs it.
func TestSharedKoopmanModel(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: data/hopper-medium.hdf5, koopman: {model: models/h.safetensors, seed: 0, epochs: 5}}", 1)
	var checked []string
	chk := Checker{
		KoopmanFlag:  func(name, value string) error { checked = append(checked, name+"="+value); return nil },
		NeedsKoopman: func(aug string) bool { return aug == "kfc++" },
	}
	s, runs := mustParse(t, text, chk)
	if strings.Join(checked, ",") != "epochs=5,seed=0" {
		t.Errorf("koopman flags checked: %v", checked)
	}
	if got := strings.Join(s.Datasets[0].KoopmanArgs("/root"), " "); got != "koopman train --data /root/data/hopper-medium.hdf5 --env hopper --out /root/models/h.safetensors --epochs=5 --seed=0" {
		t.Errorf("koopman args %q", got)
	}
	if s.Datasets[1].KoopmanArgs("/root") != nil {
		t.Error("a dataset without koopman: has koopman args")
	}
	for _, r := range runs {
		if r.Dataset != "hopper-medium" {
			continue // no koopman: block, a default shared model (TestDefaultSharedKoopmanModel)
		}
		want := ""
		if r.Augment == "kfc++" {
			want = "models/h.safetensors"
		}
		if r.Koopman != want || r.KoopmanDefault {
			t.Errorf("run %s: koopman %q (default %v), want %q", r.Name, r.Koopman, r.KoopmanDefault, want)
		}
		args := strings.Join(r.TrainArgs("/root", "/o", "run"), " ")
		if has := strings.Contains(args, "--koopman /root/models/h.safetensors"); has != (want != "") {
			t.Errorf("run %s: train args %s", r.Name, args)
		}
	}
	// Without a NeedsKoopman checker every augmentation but none gets it.
	_, runs = mustParse(t, text, Checker{})
	if runs[0].Augment != "none" || runs[0].Koopman != "" || runs[2].Koopman != "models/h.safetensors" {
		t.Errorf("default NeedsKoopman: %+v %+v", runs[0], runs[2])
	}
	for _, c := range []struct{ koop, want string }{
		{"{seed: 0}", "koopman: model missing"},
		{"{model: m.safetensors, out: x}", `koopman: "out" is set by the dataset's data, env and the model key`},
		{"{model: m.safetensors, epochs: [[1]]}", `koopman: flag "epochs": nested lists`},
	} {
		bad := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}", "data: data/hopper-medium.hdf5, koopman: "+c.koop+"}", 1)
		if _, _, err := Parse([]byte(bad), Checker{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.koop, err, c.want)
		}
	}
	bad := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}", "data: data/hopper-medium.hdf5, koopman: {model: m, epochz: 1}}", 1)
	flagErr := Checker{KoopmanFlag: func(name, value string) error {
		if name != "epochs" {
			return errors.New("not a 'koopq koopman train' flag")
		}
		return nil
	}}
	if _, _, err := Parse([]byte(bad), flagErr); err == nil || !strings.Contains(err.Error(), `koopman: flag "epochz": not a 'koopq koopman train' flag`) {
		t.Errorf("koopman flag typo: %v", err)
	}
}

func TestSelection(t *testing.T) {
	s, runs := mustParse(t, testSpec, Checker{})
	names := func(rs []Run) string {
		var p []string
		for _, r := range rs {
			p = append(p, fmt.Sprintf("%d:%s/%s/%d", r.Index, r.Dataset, r.Method, r.Seed))
		}
		return strings.Join(p, " ")
	}
	all, err := Selection{}.Apply(s, runs)
	if err != nil || len(all) != len(runs) {
		t.Fatalf("empty selection: %d runs, %v", len(all), err)
	}
	got, err := Selection{Seeds: []uint64{3}, Methods: []string{"KFC++", "KFC++-p0"}}.Apply(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	// Spec indexes are kept: Slurm array tasks name runs by them.
	var want []string
	for _, r := range runs {
		if r.Seed == 3 && (r.Method == "KFC++" || r.Method == "KFC++-p0") {
			want = append(want, fmt.Sprintf("%d:%s/%s/%d", r.Index, r.Dataset, r.Method, r.Seed))
		}
	}
	if names(got) != strings.Join(want, " ") || len(got) != 3 {
		t.Errorf("selected %s, want %s", names(got), want)
	}
	for _, c := range []struct {
		sel  Selection
		want string
	}{
		{Selection{Datasets: []string{"hoper-medium"}}, "--datasets hoper-medium: the spec has no such dataset (it has hopper-medium, walker-medium)"},
		{Selection{Methods: []string{"SAC"}}, "--methods SAC: the spec has no such method (it has CQL, KFC++, KFC++-p0)"},
		{Selection{Seeds: []uint64{2}}, "--seeds 2: the spec has no such seed (it has 3, 1)"},
		// The ablation runs on hopper-medium only.
		{Selection{Datasets: []string{"walker-medium"}, Methods: []string{"KFC++-p0"}}, "selects none of the spec's"},
	} {
		if _, err := c.sel.Apply(s, runs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.sel, err, c.want)
		}
	}
}

func TestSelectionOrder(t *testing.T) {
	s, runs := mustParse(t, testSpec, Checker{})
	key := func(rs []Run) string {
		var p []string
		for _, r := range rs {
			p = append(p, fmt.Sprintf("%d/%s/%s", r.Seed, r.Dataset, r.Method))
		}
		return strings.Join(p, " ")
	}
	same, err := Selection{}.Order(s, runs, OrderSpec)
	if err != nil || key(same) != key(runs) {
		t.Errorf("spec order changed the runs: %v", err)
	}
	// Spec seeds [3, 1]: all of seed 3 first; datasets and methods in spec order.
	got, err := Selection{}.Order(s, runs, OrderSeeds)
	if err != nil {
		t.Fatal(err)
	}
	want := "3/hopper-medium/CQL 3/hopper-medium/KFC++ 3/hopper-medium/KFC++-p0 3/walker-medium/CQL 3/walker-medium/KFC++ " +
		"1/hopper-medium/CQL 1/hopper-medium/KFC++ 1/walker-medium/CQL 1/walker-medium/KFC++"
	if key(got) != want {
		t.Errorf("seeds order:\n got %s\nwant %s", key(got), want)
	}
	// The lists' own order wins.
	sel := Selection{Seeds: []uint64{1, 3}, Methods: []string{"KFC++", "CQL"}, Datasets: []string{"walker-medium"}}
	picked, err := sel.Apply(s, runs)
	if err != nil {
		t.Fatal(err)
	}
	got, err = sel.Order(s, picked, OrderSeeds)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1/walker-medium/KFC++ 1/walker-medium/CQL 3/walker-medium/KFC++ 3/walker-medium/CQL"; key(got) != want {
		t.Errorf("listed order:\n got %s\nwant %s", key(got), want)
	}
	for i, r := range got { // indexes travel with their runs
		if runs[r.Index].Name != r.Name {
			t.Errorf("run %d: index %d names %s", i, r.Index, runs[r.Index].Name)
		}
	}
	if _, err := sel.Order(s, runs, "random"); err == nil || !strings.Contains(err.Error(), `--order "random": want spec or seeds`) {
		t.Errorf("bad order: %v", err)
	}
}

// A dataset without a koopman: block gets one default shared Koopman model
// for all its runs that need one (it used to be one model per run, trained
// inside it): `sweep run` trains it once before the runs, the runs get
// --koopman. Runs' koopman-X train flags become the model's koopman train
// flags (other settings, other model file); per_run: true and a run's own
// --koopman keep per-run models.
func TestDefaultSharedKoopmanModel(t *testing.T) {
	text := `
name: t
datasets:
  - {name: hopper-medium, env: hopper, data: data/hopper-medium.hdf5}
  - {name: walker-medium, env: walker2d, data: /abs/walker.hdf5}
methods:
  - {name: CQL, augment: none}
  - {name: KFC, augment: kfc, flags: {koopman-prob: 0.5}}
  - {name: KFC++, augment: kfc++}
  - {name: KFC++-400, augment: kfc++, flags: {koopman-epochs: 400, koopman-hidden: [64, 64], koopman-prob: 1}}
seeds: [0, 1, 2]
steps: 1000
`
	chk := Checker{NeedsKoopman: func(aug string) bool { return aug == "kfc" || aug == "kfc++" },
		KoopmanTrainFlag: func(name string) bool { return name == "epochs" || name == "hidden" }}
	_, runs := mustParse(t, text, chk)
	models := map[string]map[string]bool{} // dataset → model files
	for _, r := range runs {
		switch {
		case r.Augment == "none":
			if r.Koopman != "" || r.KoopmanDefault {
				t.Errorf("run %s: koopman %q", r.Name, r.Koopman)
			}
			continue
		case !r.KoopmanDefault || !strings.HasPrefix(r.Koopman, "models/"+r.Dataset+"-koopman-"):
			t.Errorf("run %s: koopman %q (default %v), want the dataset's default shared model", r.Name, r.Koopman, r.KoopmanDefault)
		}
		if models[r.Dataset] == nil {
			models[r.Dataset] = map[string]bool{}
		}
		models[r.Dataset][r.Koopman] = true
		if args := strings.Join(r.TrainArgs("/root", "/o", "run"), " "); !strings.Contains(args, "--koopman /root/"+r.Koopman) {
			t.Errorf("run %s: train args %s", r.Name, args)
		}
	}
	// KFC and KFC++ share one model per dataset (koopman-prob is not a
	// training flag); KFC++-400 has its own; datasets do not share.
	if len(models) != 2 || len(models["hopper-medium"]) != 2 || len(models["walker-medium"]) != 2 {
		t.Fatalf("models per dataset %v, want 2 each", models)
	}
	root := t.TempDir()
	steps := Preparation(&Spec{}, runs, root)
	var got []string
	for _, st := range steps {
		if st.Kind != PrepKoopman {
			t.Fatalf("step %+v", st)
		}
		got = append(got, strings.Join(st.Args, " "))
	}
	h := runs[3].Koopman // hopper-medium KFC seed 0
	h400 := runs[9].Koopman
	want := []string{
		"koopman train --data " + root + "/data/hopper-medium.hdf5 --env hopper --out " + filepath.Join(root, h),
		"koopman train --data " + root + "/data/hopper-medium.hdf5 --env hopper --out " + filepath.Join(root, h400) + " --epochs=400 --hidden=64,64",
	}
	if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || !strings.Contains(got[2], "--data /abs/walker.hdf5 --env walker2d") {
		t.Fatalf("preparation:\n%s\nwant 4 trainings, starting\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A model that exists is not trained again.
	os.MkdirAll(filepath.Dir(filepath.Join(root, h)), 0o755)
	os.WriteFile(filepath.Join(root, h), nil, 0o644)
	if steps := Preparation(&Spec{}, runs, root); len(steps) != 3 {
		t.Errorf("%d steps with one model present, want 3", len(steps))
	}

	// per_run: true, and a run's own --koopman: no shared model.
	perRun := strings.Replace(text, "data: /abs/walker.hdf5}", "data: /abs/walker.hdf5, koopman: {per_run: true}}", 1)
	perRun = strings.Replace(perRun, "{name: KFC++, augment: kfc++}", "{name: KFC++, augment: kfc++, flags: {koopman: mine.safetensors}}", 1)
	_, runs = mustParse(t, perRun, chk)
	for _, r := range runs {
		if (r.Dataset == "walker-medium" || r.Method == "KFC++") && r.Koopman != "" {
			t.Errorf("run %s: koopman %q, want none", r.Name, r.Koopman)
		}
	}
	if _, _, err := Parse([]byte(strings.Replace(text, "/abs/walker.hdf5}", "/abs/walker.hdf5, koopman: {per_run: true, epochs: 3}}", 1)), chk); err == nil ||
		!strings.Contains(err.Error(), "per_run: true stands alone") {
		t.Errorf("per_run with flags: %v", err)
	}
}
