// Package sweep runs grids of koopq trainings described by a spec file:
// datasets × methods × seeds plus explicit extra runs (ablations). Every run
// is an ordinary `koopq train` run directory, named deterministically from
// its parameters, so a sweep is resumable: finished runs are skipped, partial
// runs resume from their checkpoints, failed runs are reported and retried on
// request.
//
// A run is executed as a subprocess `koopq train ...` whose flags come from
// the spec; the sweep never links the training code. Executors decide where
// that subprocess runs: here (Local, N at a time), on a Slurm cluster (one
// sbatch array, one task per run) or on Kubernetes (one Indexed Job, one
// completion index per run). The array task / pod calls `koopq sweep exec`
// with its index, which maps to the same run through the same spec.
//
// Layout of a sweep directory OUT:
//
//	OUT/<run>/sweep-run.json   what the run is (Run), written before it starts
//	OUT/<run>/state.json       executor marker: running (pid, host), failed, interrupted, done
//	OUT/<run>/train.log        the trainer's stdout and stderr
//	OUT/<run>/<train dir>/     the `koopq train` run directory (config.json, results.json, ...)
//	OUT/.sweep/                pinned spec copies, Slurm scripts and logs, Kubernetes manifests
package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spec is a sweep spec file (YAML). Flags maps are extra `koopq train` flags
// (name without dashes → value); lists become comma-separated values.
// Flags are merged in this order, later wins: spec flags, the spec's flag
// sets (use), the dataset's flags, the method's flag sets and flags, an
// ablation's flag sets and flags.
type Spec struct {
	// Name labels the sweep (Slurm job name, Kubernetes object names).
	Name string `yaml:"name"`
	// Datasets are the table's rows.
	Datasets []Dataset `yaml:"datasets"`
	// Methods are the table's columns.
	Methods []Method `yaml:"methods"`
	// Seeds: every dataset × method runs once per seed.
	Seeds []uint64 `yaml:"seeds"`
	// Steps is the number of gradient steps of every run (train --steps).
	Steps int `yaml:"steps"`
	// Preset is train's named settings preset (train --preset, e.g. paper);
	// empty: train's default.
	Preset string `yaml:"preset"`
	// Eval sets train's --eval-every and --eval-episodes.
	Eval Eval `yaml:"eval"`
	// Flags are extra train flags for every run.
	Flags map[string]any `yaml:"flags"`
	// FlagSets are named bundles of train flags that the spec, methods and
	// ablations pull in with `use:`.
	FlagSets map[string]map[string]any `yaml:"flag_sets"`
	// Use names flag sets applied to every run.
	Use []string `yaml:"use"`
	// Ablations are explicit extra runs, each a variant of one method.
	Ablations []Ablation `yaml:"ablations"`
	// Baseline is the method the report compares against (probability of
	// improvement); default the method named CQL when there is one.
	Baseline string `yaml:"baseline"`
	// StepsPerSecond is the expected training speed of one run at Threads
	// threads, for `sweep plan`'s CPU-hour estimate. 0: unknown (plan then
	// uses runs already finished in --out, if any).
	StepsPerSecond float64 `yaml:"steps_per_second"`
	// Threads is the number of threads (cores) each run uses (GOMAXPROCS,
	// OPENBLAS_NUM_THREADS, OMP_NUM_THREADS of the trainer). Default 1.
	Threads int `yaml:"threads"`
	// Slurm holds the resources of each array task.
	Slurm SlurmSpec `yaml:"slurm"`
	// Kubernetes holds the settings of the Indexed Job.
	Kubernetes KubernetesSpec `yaml:"kubernetes"`
}

// Dataset is one row of the table: a dataset file and its simulator.
type Dataset struct {
	Name string `yaml:"name"`
	// Env is the simulator the policy is evaluated in (train --env).
	Env string `yaml:"env"`
	// Data is the dataset file (train --data), relative to the data root
	// (by default the spec file's directory) unless absolute.
	Data  string         `yaml:"data"`
	Flags map[string]any `yaml:"flags"`
	// Collect, when set, makes a missing Data file before the sweep runs:
	// `koopq collect --env <env> --out <Data's directory>` with these extra
	// collect flags (Data must then be named <env>-<kind>.hdf5, as collect
	// writes it). With the key dataset (a D4RL name such as
	// hopper-medium-v2) it is instead `koopq collect <dataset> --out <Data's
	// directory>` plus the other keys as flags: the dataset regenerated from
	// koopq's committed behaviour policies (Data must then be named
	// <dataset>.hdf5). Not used by the Kubernetes executor (datasets live on
	// its volume).
	Collect map[string]any `yaml:"collect"`
	// Koopman, when set, gives the dataset one shared Koopman forward model
	// (Step 1 of the paper) instead of one trained inside every run that
	// needs it: the key model is the model file (relative to the data root
	// unless absolute), the other keys are `koopq koopman train` flags.
	// `koopq sweep run` trains a missing model once, before the runs
	// (`koopq koopman train --data <data> --env <env> --out <model>`), and
	// every run of the dataset whose augmentation needs a Koopman model gets
	// `--koopman <model>`. In the KFC authors' code every run trains its
	// model with torch seed 0 hard-coded: one model per dataset. An existing model
	// file the sweep did not make is used only if it is what these flags
	// make, as far as its metadata records (the command's AdoptCheck; delete
	// it to retrain with changed flags). The
	// Kubernetes executor does not train models: put them on its volume.
	//
	// Without a koopman: block the dataset still gets shared models: the
	// runs that need one share the default model
	// models/<dataset>-koopman-<hash>.safetensors under the data root,
	// trained like an explicit block's (koopman train's defaults, seed 0)
	// with the run's koopman-X train flags passed on as X (koopman-epochs:
	// 400 → --epochs=400; koopman-prob is not a training flag). <hash>
	// covers the data path, env and those flags, so runs with different
	// Koopman settings get different models and a changed setting never
	// reuses a stale one. The Kubernetes executor's pods train a missing
	// default model themselves, one at a time (the others wait). Runs with
	// their own koopman flag keep their model; `koopman: {per_run: true}`
	// makes every run train its own, as sweeps did before.
	Koopman map[string]any `yaml:"koopman"`
}

// Method is one column of the table: an augmentation plus flag overrides.
type Method struct {
	Name string `yaml:"name"`
	// Augment is train's --augment (none, gaussian, s4rl-adv, kfc, kfc++, ...).
	Augment string         `yaml:"augment"`
	Preset  string         `yaml:"preset"`
	Use     []string       `yaml:"use"`
	Flags   map[string]any `yaml:"flags"`
}

// Ablation is a variant of one method run on some datasets (default all) and
// seeds (default the spec's); it reports as its own row in the ablation table.
type Ablation struct {
	Name string `yaml:"name"`
	// Method is the method the ablation modifies.
	Method   string         `yaml:"method"`
	Augment  string         `yaml:"augment"` // overrides the method's augment when set
	Datasets []string       `yaml:"datasets"`
	Seeds    []uint64       `yaml:"seeds"`
	Use      []string       `yaml:"use"`
	Flags    map[string]any `yaml:"flags"`
}

// Eval holds the evaluation protocol.
type Eval struct {
	// Every is gradient steps between evaluations (train --eval-every);
	// nil: train's default.
	Every *int `yaml:"every"`
	// Episodes per evaluation (train --eval-episodes); nil: train's default.
	Episodes *int `yaml:"episodes"`
}

// SlurmSpec holds sbatch settings for each array task.
type SlurmSpec struct {
	Partition string `yaml:"partition"`
	Account   string `yaml:"account"`
	// Time is the per-task time limit in Slurm's format (e.g. 12:00:00).
	Time string `yaml:"time"`
	// Mem is the per-task memory (e.g. 4G).
	Mem string `yaml:"mem"`
	// MaxParallel caps simultaneously running tasks (%N of --array); 0: no cap.
	MaxParallel int `yaml:"max_parallel"`
	// Extra are further #SBATCH lines, verbatim (e.g. "--qos=long").
	Extra []string `yaml:"extra"`
}

// KubernetesSpec holds the settings of the Kubernetes Indexed Job.
type KubernetesSpec struct {
	// Image is a container image with koopq on PATH.
	Image     string `yaml:"image"`
	Namespace string `yaml:"namespace"`
	// Parallelism is the number of pods running at once; 0: all runs.
	Parallelism int `yaml:"parallelism"`
	// Storage is the PersistentVolumeClaim size (e.g. 20Gi) holding the
	// datasets (under data/) and the run directories (under runs/).
	Storage      string `yaml:"storage"`
	StorageClass string `yaml:"storage_class"`
	// Memory requested per pod (e.g. 4Gi).
	Memory string `yaml:"memory"`
	// BackoffLimitPerIndex is the retries of one run's pod; default 3.
	BackoffLimitPerIndex *int `yaml:"backoff_limit_per_index"`
}

// Run is one training of the sweep.
type Run struct {
	// Index is the run's position in the spec's expansion (array task and
	// completion index).
	Index int `json:"index"`
	// Name is the run's directory name, deterministic from its parameters.
	Name    string `json:"name"`
	Dataset string `json:"dataset"`
	Env     string `json:"env"`
	Data    string `json:"data"`
	// Method is the method's name, or the ablation's name for ablation runs.
	Method string `json:"method"`
	// Ablation is set for ablation runs: then Base is the method it varies.
	Ablation bool   `json:"ablation,omitempty"`
	Base     string `json:"base,omitempty"`
	Augment  string `json:"augment"`
	// Koopman is the dataset's shared Koopman model file (as in the spec,
	// relative to the data root unless absolute) for runs whose
	// augmentation needs one; empty otherwise.
	Koopman string `json:"koopman,omitempty"`
	// KoopmanDefault marks Koopman as a default shared model (the dataset
	// has no koopman: block); KoopmanTrain are then its extra `koopq
	// koopman train` flags, from the run's koopman-X train flags.
	KoopmanDefault bool   `json:"koopman_default,omitempty"`
	KoopmanTrain   []Flag `json:"koopman_train,omitempty"`
	// Prep is a digest of the spec blocks that make the run's inputs: the
	// dataset's collect: block and, for runs that use the shared model, its
	// koopman: block (prepDigest). A run started under other blocks is
	// refused as a changed spec, so editing `transitions` or `epochs` never
	// leaves runs "done" on data or a model the spec no longer describes.
	// Empty in sweep-run.json files written before koopq recorded it (not
	// compared then) and for datasets without either block.
	Prep   string `json:"prep,omitempty"`
	Seed   uint64 `json:"seed"`
	Steps  int    `json:"steps"`
	Preset string `json:"preset,omitempty"`
	// Flags are the extra train flags, sorted by name.
	Flags []Flag `json:"flags"`
}

// Flag is one train flag and its value as text.
type Flag struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TrainArgs returns the `koopq train` arguments of a fresh run: root is the
// data root (relative dataset and Koopman model paths are resolved against
// it), out the parent directory and name the run directory's name.
func (r Run) TrainArgs(root, out, name string) []string {
	a := []string{"train", "--data", r.ResolveData(root), "--env", r.Env, "--augment", r.Augment,
		"--seed", strconv.FormatUint(r.Seed, 10), "--steps", strconv.Itoa(r.Steps)}
	if r.Koopman != "" {
		a = append(a, "--koopman", resolve(root, r.Koopman))
	}
	if r.Preset != "" {
		a = append(a, "--preset", r.Preset)
	}
	for _, f := range r.Flags {
		a = append(a, "--"+f.Name+"="+f.Value)
	}
	return append(a, "--out", out, "--name", name)
}

// reserved are train flags the spec sets through its own keys.
var reserved = map[string]string{
	"data": "datasets[].data", "env": "datasets[].env", "augment": "methods[].augment", "seed": "seeds",
	"steps": "steps", "out": "sweep run --out", "name": "(run names are derived)", "resume": "(the sweep resumes runs itself)",
	"config": "preset", "preset": "preset", "config-file": "(a sweep spells every setting out)",
	"eval-every": "eval.every", "eval-episodes": "eval.episodes",
}

// Checker validates what the sweep package cannot know by itself: train flag
// names and values, env names and augment names. The CLI supplies one that
// asks the train command; nil fields check nothing.
type Checker struct {
	// Flag returns an error when name is not a train flag or value is not
	// valid for it.
	Flag func(name, value string) error
	// Env returns an error for an unknown environment.
	Env func(name string) error
	// Augment returns an error for an unknown augmentation.
	Augment func(name string) error
	// CollectFlag is Flag for `koopq collect` (datasets[].collect).
	CollectFlag func(name, value string) error
	// KoopmanFlag is Flag for `koopq koopman train` (datasets[].koopman).
	KoopmanFlag func(name, value string) error
	// KoopmanTrainFlag reports whether name is a `koopq koopman train`
	// flag: a run's train flag koopman-<name> then sets the training of
	// its dataset's default shared model. nil: every name but prob.
	KoopmanTrainFlag func(name string) bool
	// Train returns an error when `koopq train` with these arguments (a
	// run's TrainArgs) would refuse its settings before reading any file:
	// rules across settings, such as --steps above --bc-steps or
	// --shift-l2 with plain CQL, that no single flag's check sees.
	Train func(args []string) error
	// NeedsKoopman reports whether an augmentation uses a Koopman model
	// (which runs get datasets[].koopman's model); nil: every augmentation
	// but none (a run that does not need the model ignores --koopman).
	NeedsKoopman func(augment string) bool
}

var namePat = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// Load reads, validates and expands a spec file. Every problem found is
// reported (not only the first), each naming its key.
func Load(path string, chk Checker) (*Spec, []Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("spec: %w", err)
	}
	s, runs, err := Parse(b, chk)
	if err != nil {
		return nil, nil, fmt.Errorf("spec %s: %w", path, err)
	}
	return s, runs, nil
}

// Parse decodes and validates spec text (unknown keys are errors) and
// expands it into runs.
func Parse(text []byte, chk Checker) (*Spec, []Run, error) {
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("the spec is empty: want a YAML mapping with name, datasets, methods and seeds (see docs/sweeps.md)")
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			// One line per problem, e.g. "line 12: field stepz not found in type sweep.Spec".
			msgs := make([]string, len(te.Errors))
			for i, e := range te.Errors {
				msgs[i] = strings.Replace(e, " in type sweep.", " in ", 1)
			}
			return nil, nil, errors.New(strings.Join(msgs, "; "))
		}
		return nil, nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra any
	if err := dec.Decode(&extra); err == nil {
		return nil, nil, errors.New("more than one YAML document")
	}
	// yaml.v3 truncates a float into an integer field (steps: 300.7 → 300,
	// seeds: [0.5] → 0, 2^64 → 2^63): check the integer keys' text.
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err == nil && len(root.Content) > 0 {
		var p problems
		checkIntegers(root.Content[0], reflect.TypeOf(s), "", &p)
		if err := p.err(); err != nil {
			return nil, nil, err
		}
	}
	runs, err := s.expand(chk)
	if err != nil {
		return nil, nil, err
	}
	return &s, runs, nil
}

// checkIntegers reports every integer field of type t (a Spec or a part of
// it) whose value in the YAML node n is not a whole number in the field's
// range: yaml.v3 decodes such a float by truncating it. Integral floats in
// range (steps: 1e6) are accepted. where is the key path of n.
func checkIntegers(n *yaml.Node, t reflect.Type, where string, p *problems) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(k string) string {
		if where == "" {
			return k
		}
		return where + "." + k
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			for j := 0; j < t.NumField(); j++ {
				if name, _, _ := strings.Cut(t.Field(j).Tag.Get("yaml"), ","); name == key {
					checkIntegers(n.Content[i+1], t.Field(j).Type, join(key), p)
				}
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			checkIntegers(c, t.Elem(), fmt.Sprintf("%s[%d]", where, i), p)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
			return // integers out of range and other types are yaml.v3's errors
		}
		var f float64
		if n.Decode(&f) != nil {
			return
		}
		bits := t.Bits()
		lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
		maxI := int64(^uint64(0) >> (65 - bits))
		span := fmt.Sprintf("%d to %d", -maxI-1, maxI)
		if t.Kind() >= reflect.Uint {
			lo, hi = 0, math.Ldexp(1, bits)
			span = fmt.Sprintf("0 to %d", ^uint64(0)>>(64-bits))
		}
		switch {
		case f != math.Trunc(f): // also NaN and ±Inf
			p.add("%s: %s is not a whole number", where, n.Value)
		case f < lo || f >= hi:
			p.add("%s: %s is out of range (%s)", where, n.Value, span)
		}
	}
}

// Hash is a short content hash of spec text, naming pinned copies.
func Hash(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:])[:12]
}

type problems []string

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// checkName checks the name of entry i of a list (present, well-formed,
// unique among seen, which it records) and returns where with the name
// appended, for the entry's later messages.
func (p *problems) checkName(where, name string, i int, seen map[string]int) string {
	if name == "" {
		p.add("%s: name missing", where)
		return where
	}
	where += " (" + name + ")"
	if !namePat.MatchString(name) {
		p.add("%s: name: use letters, digits, '.', '_', '+', '-'", where)
	}
	if _, dup := seen[name]; dup {
		p.add("%s: name %q used twice", where, name)
	}
	seen[name] = i
	return where
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	if len(p) == 1 {
		return errors.New(p[0])
	}
	return fmt.Errorf("%d problems:\n  %s", len(p), strings.Join(p, "\n  "))
}

// flagText turns a YAML value into a flag value.
func flagText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			t, err := flagText(e)
			if err != nil {
				return "", err
			}
			if _, isList := e.([]any); isList {
				return "", errors.New("nested lists are not flag values")
			}
			parts[i] = t
		}
		return strings.Join(parts, ","), nil
	case nil:
		return "", errors.New("empty value")
	default:
		return "", fmt.Errorf("a %T is not a flag value", v)
	}
}

// mergeFlags copies the flags of m into dst, checking each (where names the
// map in errors).
func mergeFlags(dst map[string]string, m map[string]any, where string, chk Checker, p *problems) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		name := strings.TrimLeft(k, "-")
		if key, ok := reserved[name]; ok {
			p.add("%s: flag %q is set by the spec key %s, not in flags", where, k, key)
			continue
		}
		val, err := flagText(m[k])
		if err != nil {
			p.add("%s: flag %q: %v", where, k, err)
			continue
		}
		if chk.Flag != nil {
			if err := chk.Flag(name, val); err != nil {
				p.add("%s: flag %q: %v", where, k, err)
				continue
			}
		}
		dst[name] = val
	}
}

func (s *Spec) useSets(dst map[string]string, use []string, where string, chk Checker, p *problems) {
	for _, u := range use {
		set, ok := s.FlagSets[u]
		if !ok {
			p.add("%s: use: no flag set %q in flag_sets", where, u)
			continue
		}
		mergeFlags(dst, set, fmt.Sprintf("flag_sets.%s", u), chk, p)
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CollectArgs returns the `koopq collect` arguments that make dataset d's
// file under root, or nil when d has no collect settings. The spec must have
// been validated.
func (d Dataset) CollectArgs(root string) []string {
	if d.Collect == nil {
		return nil
	}
	data := d.Data
	if !filepath.IsAbs(data) {
		data = filepath.Join(root, data)
	}
	a := []string{"collect", "--env", d.Env, "--out", filepath.Dir(data)}
	if name, ok := d.collectDataset(); ok {
		a = []string{"collect", name, "--out", filepath.Dir(data)}
	}
	for _, k := range sortedKeys(d.Collect) {
		if k == collectDatasetKey {
			continue
		}
		v, _ := flagText(d.Collect[k])
		a = append(a, "--"+strings.TrimLeft(k, "-")+"="+v)
	}
	return a
}

// collectDatasetKey is the collect: key naming a D4RL dataset that `koopq
// collect NAME` regenerates from the committed behaviour policies.
const collectDatasetKey = "dataset"

// collectDataset returns the D4RL name of collect: {dataset: NAME}, if set.
func (d Dataset) collectDataset() (string, bool) {
	v, ok := d.Collect[collectDatasetKey]
	if !ok {
		return "", false
	}
	s, _ := v.(string)
	return s, true
}

func sortedFlags(m map[string]string) []Flag {
	out := make([]Flag, 0, len(m))
	for k, v := range m {
		out = append(out, Flag{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		case r == '+':
			b.WriteRune('p')
		default:
			b.WriteRune('-')
		}
	}
	return b.String()
}

// RunName is the deterministic directory name of a run:
// <dataset>__<method>__s<seed>, lower-cased, '+' spelt 'p'.
func RunName(dataset, method string, seed uint64) string {
	return fmt.Sprintf("%s__%s__s%d", sanitize(dataset), sanitize(method), seed)
}

// expand validates the spec and lists its runs: the grid in dataset-major,
// method, seed order, then the ablations in spec order.
func (s *Spec) expand(chk Checker) ([]Run, error) {
	var p problems
	s.checkSettings(&p)
	for name := range s.FlagSets {
		mergeFlags(map[string]string{}, s.FlagSets[name], "flag_sets."+name, chk, &p)
	}
	// Flag sets were checked once above; check again only through use.
	quiet := Checker{}
	base := map[string]string{}
	mergeFlags(base, s.Flags, "flags", chk, &p)
	s.useSets(base, s.Use, "use", quiet, &p)

	dsIdx := map[string]int{}
	for i, d := range s.Datasets {
		where := p.checkName(fmt.Sprintf("datasets[%d]", i), d.Name, i, dsIdx)
		d.check(where, chk, &p)
	}
	mIdx := map[string]int{}
	for i, m := range s.Methods {
		where := p.checkName(fmt.Sprintf("methods[%d]", i), m.Name, i, mIdx)
		s.checkMethod(m, where, chk, &p)
	}
	if s.Baseline != "" {
		if _, ok := mIdx[s.Baseline]; !ok {
			p.add("baseline: no method named %q", s.Baseline)
		}
	}
	s.checkAblations(dsIdx, mIdx, chk, &p)
	if err := p.err(); err != nil {
		return nil, err
	}

	// Validated: build the runs without checking again.
	mk := runMaker{s: s, base: base, chk: chk}
	runs := mk.all(dsIdx, mIdx)
	numberRuns(runs, &p)
	checkTrainSettings(runs, chk, &p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return runs, nil
}

// checkTrainSettings asks chk.Train about every run's train command line;
// runs refused for the same reason are reported once, naming the first
// and counting the others.
func checkTrainSettings(runs []Run, chk Checker, p *problems) {
	if chk.Train == nil {
		return
	}
	var order []string
	failed := map[string][]string{}
	for _, r := range runs {
		err := chk.Train(r.TrainArgs(".", "out", r.Name))
		if err == nil {
			continue
		}
		msg := err.Error()
		if _, seen := failed[msg]; !seen {
			order = append(order, msg)
		}
		failed[msg] = append(failed[msg], r.Name)
	}
	for _, msg := range order {
		names := failed[msg]
		which := "run " + names[0]
		if len(names) > 1 {
			which += fmt.Sprintf(" and %d more", len(names)-1)
		}
		p.add("%s: koopq train would refuse the settings: %s", which, msg)
	}
}

// checkSettings checks the spec's scalar settings: name, the lists being
// non-empty, seeds, steps, eval, throughput, threads and the executor
// limits.
func (s *Spec) checkSettings(p *problems) {
	if s.Name == "" {
		p.add("name: missing (it labels Slurm jobs and Kubernetes objects)")
	} else if !namePat.MatchString(s.Name) {
		p.add("name %q: use letters, digits, '.', '_', '+', '-'", s.Name)
	}
	if len(s.Datasets) == 0 {
		p.add("datasets: none given")
	}
	if len(s.Methods) == 0 {
		p.add("methods: none given")
	}
	if len(s.Seeds) == 0 {
		p.add("seeds: none given")
	}
	seen := map[uint64]bool{}
	for _, sd := range s.Seeds {
		if seen[sd] {
			p.add("seeds: %d appears twice", sd)
		}
		seen[sd] = true
	}
	if s.Steps <= 0 {
		p.add("steps: must be a positive number of gradient steps (got %d)", s.Steps)
	}
	if s.Eval.Every != nil && *s.Eval.Every < 0 {
		p.add("eval.every: must be >= 0 (got %d)", *s.Eval.Every)
	}
	if s.Eval.Episodes != nil && *s.Eval.Episodes <= 0 {
		p.add("eval.episodes: must be positive (got %d)", *s.Eval.Episodes)
	}
	if !(s.StepsPerSecond >= 0) || math.IsInf(s.StepsPerSecond, 0) {
		p.add("steps_per_second: must be a finite number >= 0 (got %g)", s.StepsPerSecond)
	}
	if s.Threads < 0 || s.Threads > MaxThreads {
		p.add("threads: must be 0 to %d (got %d): threads of one run; --jobs sets how many run at once", MaxThreads, s.Threads)
	}
	if s.Slurm.MaxParallel < 0 {
		p.add("slurm.max_parallel: must be >= 0")
	}
	if s.Kubernetes.Parallelism < 0 {
		p.add("kubernetes.parallelism: must be >= 0")
	}
	if b := s.Kubernetes.BackoffLimitPerIndex; b != nil && *b < 0 {
		p.add("kubernetes.backoff_limit_per_index: must be >= 0")
	}
}

// check checks dataset d, whose messages start with where: env, data,
// flags, and its collect: and koopman: settings.
func (d Dataset) check(where string, chk Checker, p *problems) {
	if d.Env == "" {
		p.add("%s: env missing (the simulator to evaluate in)", where)
	} else if chk.Env != nil {
		if err := chk.Env(d.Env); err != nil {
			p.add("%s: env: %v", where, err)
		}
	}
	if d.Data == "" {
		p.add("%s: data missing (a D4RL-layout HDF5 file)", where)
	}
	mergeFlags(map[string]string{}, d.Flags, where+".flags", chk, p)
	d.checkCollectData(where, p)
	d.checkKoopman(where, chk, p)
	if d.Collect != nil {
		d.checkCollectFlags(where, chk, p)
	}
}

// checkCollectData checks that d's collect: settings name a dataset and a
// data file that `koopq collect` can make.
func (d Dataset) checkCollectData(where string, p *problems) {
	if name, ok := d.collectDataset(); ok {
		switch base := filepath.Base(d.Data); {
		case name == "" || !namePat.MatchString(name):
			p.add("%s: collect: dataset must be a D4RL dataset name such as %s-medium-v2 (koopq collect NAME), got %v",
				where, d.Env, d.Collect[collectDatasetKey])
		case d.Data != "" && base != name+".hdf5":
			p.add("%s: collect: data must be named %s.hdf5 (what koopq collect %s writes), not %s", where, name, name, base)
		case d.Env != "" && name != d.Env && !strings.HasPrefix(name, d.Env+"-"):
			// A dataset named for its env (AntMaze, the manipulation tasks:
			// koopq collect metaworld-push-v2 for env metaworld-push-v2) is
			// one of its datasets too.
			p.add("%s: collect: dataset %s is not a dataset of env %s", where, name, d.Env)
		}
	} else if d.Collect != nil {
		base := filepath.Base(d.Data)
		if d.Env != "" && (!strings.HasPrefix(base, d.Env+"-") || filepath.Ext(base) != ".hdf5") {
			p.add("%s: collect: data must be named %s-<random|medium|expert|medium-replay|medium-expert>.hdf5 (koopq collect's names), not %s",
				where, d.Env, base)
		}
	}
}

// checkKoopman checks d's koopman: settings: per_run: true alone, or a
// shared model file with `koopq koopman train` flags.
func (d Dataset) checkKoopman(where string, chk Checker, p *problems) {
	if v, ok := d.Koopman[koopmanPerRunKey]; ok {
		if b, isBool := v.(bool); !isBool || !b || len(d.Koopman) != 1 {
			p.add("%s: koopman: per_run: true stands alone (every run trains its own model); got %v", where, d.Koopman)
		}
		return
	}
	if d.Koopman == nil {
		return
	}
	if m, ok := d.Koopman[koopmanModelKey].(string); !ok || m == "" {
		p.add("%s: koopman: model missing (the shared Koopman model file, e.g. models/%s-koopman.safetensors)", where, d.Name)
	}
	for _, k := range sortedKeys(d.Koopman) {
		name := strings.TrimLeft(k, "-")
		val, err := flagText(d.Koopman[k])
		switch {
		case k == koopmanModelKey:
		case name == "data" || name == "env" || name == "out":
			p.add("%s: koopman: %q is set by the dataset's data, env and the model key", where, k)
		case err != nil:
			p.add("%s: koopman: flag %q: %v", where, k, err)
		case chk.KoopmanFlag != nil:
			if err := chk.KoopmanFlag(name, val); err != nil {
				p.add("%s: koopman: flag %q: %v", where, k, err)
			}
		}
	}
}

// checkCollectFlags checks the `koopq collect` flags of d's collect:
// settings.
func (d Dataset) checkCollectFlags(where string, chk Checker, p *problems) {
	for _, k := range sortedKeys(d.Collect) {
		name := strings.TrimLeft(k, "-")
		val, err := flagText(d.Collect[k])
		switch {
		case k == collectDatasetKey:
			// The positional dataset name, checked by checkCollectData.
		case name == "env" || name == "out":
			p.add("%s: collect: %q is set by the dataset's env and data", where, k)
		case err != nil:
			p.add("%s: collect: flag %q: %v", where, k, err)
		case chk.CollectFlag != nil:
			if err := chk.CollectFlag(name, val); err != nil {
				p.add("%s: collect: flag %q: %v", where, k, err)
			}
		}
	}
}

// checkMethod checks method m, whose messages start with where: its
// augmentation, flags and flag sets.
func (s *Spec) checkMethod(m Method, where string, chk Checker, p *problems) {
	if m.Augment == "" {
		p.add("%s: augment missing (cql for plain CQL)", where)
	} else if chk.Augment != nil {
		if err := chk.Augment(m.Augment); err != nil {
			p.add("%s: augment: %v", where, err)
		}
	}
	mergeFlags(map[string]string{}, m.Flags, where+".flags", chk, p)
	s.useSets(map[string]string{}, m.Use, where, Checker{}, p)
}

// checkAblations checks the ablations against the datasets and methods
// (dsIdx, mIdx: their indices by name): names unique among both, the method
// and datasets they refer to, augmentation, flags and flag sets.
func (s *Spec) checkAblations(dsIdx, mIdx map[string]int, chk Checker, p *problems) {
	abNames := map[string]bool{}
	for i, a := range s.Ablations {
		where := fmt.Sprintf("ablations[%d]", i)
		if a.Name == "" {
			p.add("%s: name missing", where)
		} else {
			where += " (" + a.Name + ")"
			if !namePat.MatchString(a.Name) {
				p.add("%s: name: use letters, digits, '.', '_', '+', '-'", where)
			}
			if _, clash := mIdx[a.Name]; clash || abNames[a.Name] {
				p.add("%s: name %q is already a method or ablation", where, a.Name)
			}
			abNames[a.Name] = true
		}
		if _, ok := mIdx[a.Method]; !ok {
			p.add("%s: method: no method named %q", where, a.Method)
		}
		for _, d := range a.Datasets {
			if _, ok := dsIdx[d]; !ok {
				p.add("%s: datasets: no dataset named %q", where, d)
			}
		}
		if a.Augment != "" && chk.Augment != nil {
			if err := chk.Augment(a.Augment); err != nil {
				p.add("%s: augment: %v", where, err)
			}
		}
		mergeFlags(map[string]string{}, a.Flags, where+".flags", chk, p)
		s.useSets(map[string]string{}, a.Use, where, Checker{}, p)
	}
}

// runMaker builds the runs of a validated spec: base holds the spec-wide
// flags (flags: and use:) every run starts from.
type runMaker struct {
	s    *Spec
	base map[string]string
	chk  Checker
}

// all lists the runs: the grid in dataset-major, method, seed order, then
// the ablations in spec order. dsIdx and mIdx index the datasets and
// methods by name.
func (mk runMaker) all(dsIdx, mIdx map[string]int) []Run {
	s := mk.s
	var runs []Run
	for _, d := range s.Datasets {
		for _, m := range s.Methods {
			for _, seed := range s.Seeds {
				runs = append(runs, mk.run(d, m, nil, seed))
			}
		}
	}
	for i := range s.Ablations {
		a := &s.Ablations[i]
		ds := a.Datasets
		if len(ds) == 0 {
			for _, d := range s.Datasets {
				ds = append(ds, d.Name)
			}
		}
		seeds := a.Seeds
		if len(seeds) == 0 {
			seeds = s.Seeds
		}
		for _, dn := range ds {
			for _, seed := range seeds {
				runs = append(runs, mk.run(s.Datasets[dsIdx[dn]], s.Methods[mIdx[a.Method]], a, seed))
			}
		}
	}
	return runs
}

// run builds the run of method m (or ablation a of it, when a is not nil)
// on dataset d with seed: its flags, in the order base, dataset, method's
// flag sets, method, ablation's flag sets, ablation, eval; its Koopman
// model; and its name.
func (mk runMaker) run(d Dataset, m Method, a *Ablation, seed uint64) Run {
	s, quiet := mk.s, Checker{}
	f := map[string]string{}
	for k, v := range mk.base {
		f[k] = v
	}
	var q problems
	mergeFlags(f, d.Flags, "", quiet, &q)
	s.useSets(f, m.Use, "", quiet, &q)
	mergeFlags(f, m.Flags, "", quiet, &q)
	r := Run{Dataset: d.Name, Env: d.Env, Data: d.Data, Method: m.Name, Augment: m.Augment, Seed: seed,
		Steps: s.Steps, Preset: s.Preset}
	if m.Preset != "" {
		r.Preset = m.Preset
	}
	if a != nil {
		s.useSets(f, a.Use, "", quiet, &q)
		mergeFlags(f, a.Flags, "", quiet, &q)
		r.Method, r.Ablation, r.Base = a.Name, true, m.Name
		if a.Augment != "" {
			r.Augment = a.Augment
		}
	}
	mk.setKoopman(&r, d, f)
	if s.Eval.Every != nil {
		f["eval-every"] = strconv.Itoa(*s.Eval.Every)
	}
	if s.Eval.Episodes != nil {
		f["eval-episodes"] = strconv.Itoa(*s.Eval.Episodes)
	}
	r.Flags = sortedFlags(f)
	r.Name = RunName(r.Dataset, r.Method, seed)
	return r
}

// setKoopman sets r's Koopman model (dataset d's shared one, or the default
// one when d names none and the flags f give no model of r's own) when r's
// augmentation needs one, and r's preparation digest.
func (mk runMaker) setKoopman(r *Run, d Dataset, f map[string]string) {
	needs := mk.chk.NeedsKoopman
	if needs == nil {
		needs = func(aug string) bool { return aug != "none" && aug != "cql" }
	}
	_, ownModel := f["koopman"]
	switch model, ok := d.KoopmanModel(); {
	case !needs(r.Augment):
	case ok:
		r.Koopman = model
	case d.Koopman == nil && !ownModel:
		r.Koopman, r.KoopmanTrain = defaultKoopman(d, f, mk.chk)
		r.KoopmanDefault = true
	}
	r.Prep = prepDigest(d, r.Koopman != "" && !r.KoopmanDefault)
}

// numberRuns sets each run's Index and reports runs whose directory names
// collide.
func numberRuns(runs []Run, p *problems) {
	names := map[string]int{}
	for i := range runs {
		runs[i].Index = i
		if j, dup := names[runs[i].Name]; dup {
			p.add("runs %d and %d both get the directory name %q (names differ only in case or punctuation)", j, i, runs[i].Name)
		}
		names[runs[i].Name] = i
	}
}

// ResolveData returns the dataset path of r: absolute paths as they are,
// relative ones joined onto root.
func (r Run) ResolveData(root string) string { return resolve(root, r.Data) }

func resolve(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// koopmanModelKey is the koopman: key naming the shared model file;
// koopmanPerRunKey (per_run: true) turns the shared model off.
const (
	koopmanModelKey  = "model"
	koopmanPerRunKey = "per_run"
)

// defaultKoopman returns the default shared model file (relative to the
// data root) of dataset d for a run with train flags f, and its `koopq
// koopman train` flags: f's koopman-X flags that name a koopman train flag
// X (chk.KoopmanTrainFlag).
func defaultKoopman(d Dataset, f map[string]string, chk Checker) (string, []Flag) {
	args := map[string]string{}
	for k, v := range f {
		x, ok := strings.CutPrefix(k, "koopman-")
		switch {
		case !ok:
		case chk.KoopmanTrainFlag != nil:
			if chk.KoopmanTrainFlag(x) {
				args[x] = v
			}
		case x != "prob":
			args[x] = v
		}
	}
	flags := sortedFlags(args)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", d.Data, d.Env)
	for _, fl := range flags {
		fmt.Fprintf(h, "%s=%s\x00", fl.Name, fl.Value)
	}
	sum := hex.EncodeToString(h.Sum(nil))[:10]
	return filepath.Join("models", sanitize(d.Name)+"-koopman-"+sum+".safetensors"), flags
}

// KoopmanStep returns the preparation step that trains r's default shared
// Koopman model under root (r.KoopmanDefault), with --resume when an
// earlier training of it was stopped.
func (r Run) KoopmanStep(root string) PrepStep {
	p := resolve(root, r.Koopman)
	a := []string{"koopman", "train", "--data", r.ResolveData(root), "--env", r.Env, "--out", p}
	for _, f := range r.KoopmanTrain {
		a = append(a, "--"+f.Name+"="+f.Value)
	}
	return PrepStep{Kind: PrepKoopman, Datasets: []string{r.Dataset}, Path: p, Args: resumeKoopman(a, p), Log: p + ".log"}
}

// KoopmanModel returns the dataset's shared Koopman model file as written in
// the spec, if it has one.
func (d Dataset) KoopmanModel() (string, bool) {
	m, ok := d.Koopman[koopmanModelKey].(string)
	if _, perRun := d.Koopman[koopmanPerRunKey]; perRun {
		return "", false
	}
	return m, ok && m != ""
}

// KoopmanArgs returns the `koopq koopman train` arguments that make dataset
// d's shared model under root, or nil when d has none. The spec must have
// been validated.
func (d Dataset) KoopmanArgs(root string) []string {
	model, ok := d.KoopmanModel()
	if !ok {
		return nil
	}
	a := []string{"koopman", "train", "--data", resolve(root, d.Data), "--env", d.Env, "--out", resolve(root, model)}
	for _, k := range sortedKeys(d.Koopman) {
		if k == koopmanModelKey {
			continue
		}
		v, _ := flagText(d.Koopman[k])
		a = append(a, "--"+strings.TrimLeft(k, "-")+"="+v)
	}
	return a
}

// BaselineName returns the method the report compares against: Baseline,
// else a method named CQL (any case), else the first method.
func (s *Spec) BaselineName() string {
	if s.Baseline != "" {
		return s.Baseline
	}
	for _, m := range s.Methods {
		if strings.EqualFold(m.Name, "cql") {
			return m.Name
		}
	}
	if len(s.Methods) > 0 {
		return s.Methods[0].Name
	}
	return ""
}

// MaxThreads bounds the threads of one run (the spec's threads, the
// --threads flags): beyond the cores of any machine a run only stalls
// (threads: 100000 never reached step 1).
const MaxThreads = 256

// CheckThreads checks a --threads value (0: the spec's).
func CheckThreads(n int) error {
	if n < 0 || n > MaxThreads {
		return fmt.Errorf("--threads %d: must be 0 to %d (threads of one run; --jobs sets how many run at once)", n, MaxThreads)
	}
	return nil
}

// ThreadsPerRun is Threads with its default (1).
func (s *Spec) ThreadsPerRun() int {
	if s.Threads <= 0 {
		return 1
	}
	return s.Threads
}

// prepDigest is Run.Prep: the first 16 hex digits of the sha256 of the
// dataset's collect: block and (withModel) its koopman: block, as JSON with
// sorted keys; "" when neither block applies. Paths are as written in the
// spec (the data root is not part of it: a dataset moved to another root
// is the same dataset, and its content is checked by fingerprint).
func prepDigest(d Dataset, withModel bool) string {
	blocks := map[string]any{}
	if d.Collect != nil {
		blocks["collect"] = d.Collect
	}
	if withModel && d.Koopman != nil {
		blocks["koopman"] = d.Koopman
	}
	if len(blocks) == 0 {
		return ""
	}
	b, err := json.Marshal(blocks) // maps marshal with sorted keys
	if err != nil {
		b = []byte(fmt.Sprint(blocks)) // YAML scalars always marshal; kept total for safety
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
