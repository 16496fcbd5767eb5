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

// Hash is a short content hash of spec text, naming pinned copies.
func Hash(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:])[:12]
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
