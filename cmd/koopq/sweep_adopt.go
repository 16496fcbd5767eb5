package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
	"github.com/koopq/koopq/sweep"
)

// adoptedFitsBlock is the sweep's sweep.AdoptCheck: a dataset or shared
// Koopman model found at the path a spec block would make, without a
// record that the sweep made it, is compared with what the block makes,
// as far as the file records it. A model is checked on its sizes,
// activations, seed, training settings, env and the transitions it was
// trained on (the dataset at data, read with the block's read options;
// the sweep asks about a model only once its dataset exists); a
// dataset on its name, seed and the collect settings its metadata records.
func adoptedFitsBlock(kind string, d sweep.Dataset, file, data string) (string, error) {
	if kind == sweep.PrepKoopman {
		return modelFitsKoopmanBlock(d, file, data)
	}
	return datasetFitsCollectBlock(d, file)
}

// parseFlags parses args (flags, and for collect the dataset names) into a
// new flag set made by register; errors name the spec block.
func parseFlags(name string, args []string, register func(*pflag.FlagSet)) (*pflag.FlagSet, error) {
	f := pflag.NewFlagSet(name, pflag.ContinueOnError)
	f.SetOutput(io.Discard)
	register(f)
	if err := f.Parse(args); err != nil {
		return nil, fmt.Errorf("the block's flags: %w", err)
	}
	return f, nil
}

// blockDiff collects how a file differs from what its block makes.
type blockDiff struct{ diffs, checked []string }

func (b *blockDiff) differ(what string, file, block any) {
	b.diffs = append(b.diffs, fmt.Sprintf("%s %s in the file, %s from the block", what, flagValue(file), flagValue(block)))
}

// flagValue writes v as it is typed as a flag: lists comma-separated
// (--hidden 8,8), other values as fmt does.
func flagValue(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return fmt.Sprint(v)
	}
	parts := make([]string, rv.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(rv.Index(i).Interface())
	}
	return strings.Join(parts, ",")
}

func (b *blockDiff) check(what string) { b.checked = append(b.checked, what) }

// result is the AdoptCheck answer: the differences as an error, else what
// was checked.
func (b *blockDiff) result() (string, error) {
	if len(b.diffs) > 0 {
		return "", fmt.Errorf("%s", strings.Join(b.diffs, "; "))
	}
	return strings.Join(b.checked, ", "), nil
}

// modelFitsKoopmanBlock compares the Koopman model file with what `koopq
// koopman train` makes from d's koopman: block on the data file data.
func modelFitsKoopmanBlock(d sweep.Dataset, file, data string) (string, error) {
	args := d.KoopmanArgs("")
	if len(args) < 2 {
		return "", fmt.Errorf("dataset %s has no koopman: block with a model", d.Name)
	}
	args = args[2:] // without "koopman train"
	want := defaultKoopmanTrainOptions()
	if _, err := parseFlags("koopman train", args, func(f *pflag.FlagSet) { registerKoopmanTrainFlags(f, &want) }); err != nil {
		return "", err
	}
	m, meta, err := koopman.LoadModel(file)
	if err != nil {
		return "", &sweep.UnreadableError{Err: err}
	}
	have := defaultKoopmanTrainOptions()
	have.model, have.tc.Seed = m.Cfg, m.Cfg.Seed
	trainRecorded := false
	if tj, ok := meta["train_config"]; ok {
		if err := json.Unmarshal([]byte(tj), &have.tc); err != nil {
			return "", fmt.Errorf("%s: its train_config metadata: %w", file, err)
		}
		trainRecorded = true
	}
	for _, o := range []*koopmanTrainOptions{&want, &have} { // tanh, "linear" and "identity" are names of activations
		for _, a := range []*string{&o.model.EncoderHidden, &o.model.EncoderOutput, &o.model.DecoderHidden} {
			if act, ok := nn.ParseActivation(*a); ok {
				*a = act.String()
			}
		}
	}
	var b blockDiff
	skip := map[string]bool{"data": true, "env": true, "out": true, "diag-n": true, "eps-std": true, "max-cond": true,
		"resume": true, "allow-backend-change": true}
	for _, r := range readParams(func(o *koopmanTrainOptions) *dataset.ReadOptions { return &o.ropts }) {
		skip[r.Flag] = true // the transitions read are compared below, by content
	}
	train := map[string]bool{}
	for _, r := range koopman.TrainParams() {
		train[r.Flag] = true
	}
	for _, r := range koopmanTrainParams() {
		if skip[r.Flag] || (train[r.Flag] && !trainRecorded) {
			continue
		}
		if h, w := reflect.ValueOf(r.Field(&have)).Elem().Interface(), reflect.ValueOf(r.Field(&want)).Elem().Interface(); !reflect.DeepEqual(h, w) {
			b.differ("--"+r.Flag, h, w)
		}
	}
	b.check("sizes, activations, seed")
	if trainRecorded {
		// Settings without a flag (koopq's constants at the time, e.g.
		// huber_delta) must match this koopq's too.
		keys := map[string]bool{}
		for _, r := range koopman.TrainParams() {
			keys[r.Key] = true
		}
		h, err := run.FlattenJSON(have.tc)
		if err != nil {
			return "", err
		}
		w, err := run.FlattenJSON(want.tc)
		if err != nil {
			return "", err
		}
		for _, k := range slices.Sorted(maps.Keys(h)) {
			if !keys[k] && k != "seed" && h[k] != w[k] {
				b.differ("train_config."+k, h[k], w[k])
			}
		}
		b.check("training settings")
	}
	if e := meta["env"]; e != "" && d.Env != "" {
		if e != d.Env {
			b.differ("env", e, d.Env)
		}
		b.check("env")
	}
	if trained := meta[koopman.MetaDataContent]; trained != "" { // the sweep asks once data exists
		ds, err := run.ReadDataset(data, want.ropts)
		if err != nil {
			return "", err
		}
		if now := ds.ContentSHA256(); now != trained {
			b.differ("transitions (content sha256)", fingerprint.Short(trained), fingerprint.Short(now)+" in "+data)
		}
		b.check("training data")
	}
	return b.result()
}

// datasetFitsCollectBlock compares the dataset file with what `koopq
// collect` makes from d's collect: block, on what the file records: its
// dataset name and seed, its size (the rows of a random, medium or expert
// dataset; a manipulation dataset's episodes of its recorded length), the
// SAC steps of the in-memory pipeline, and a manipulation dataset's action
// noise and share of random episodes. The collect settings the file does
// not record (the in-memory pipeline's medium level and SAC sizes, say)
// are not checked.
func datasetFitsCollectBlock(d sweep.Dataset, file string) (string, error) {
	args := d.CollectArgs("")
	if len(args) < 1 {
		return "", fmt.Errorf("dataset %s has no collect: block", d.Name)
	}
	args = args[1:] // without "collect"
	want := defaultCollectOptions()
	f, err := parseFlags("collect", args, func(f *pflag.FlagSet) { collectParams().MustRegister(f, &want, defaultCollectOptions()) })
	if err != nil {
		return "", err
	}
	want.flags = f
	info, err := dataset.Inspect(file, dataset.ReadOptions{})
	if err != nil {
		return "", &sweep.UnreadableError{Err: err}
	}
	meta := info.Meta
	var b blockDiff
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), d.Env+"-"), ".hdf5") // in-memory: <env>-<kind>.hdf5
	transitions := want.transitions                                                         // in-memory default
	if f.NArg() > 0 {
		name, transitions = f.Arg(0), 1000000 // a D4RL name: D4RL's size
	}
	if f.Changed("transitions") {
		transitions = want.transitions
	}
	if got, ok := meta["dataset"]; ok {
		if got != name {
			b.differ("dataset", got, name)
		}
		b.check("dataset name")
	}
	if got, ok := meta["seed"]; ok {
		if v, err := strconv.ParseUint(got, 10, 64); err != nil || v != want.seed {
			b.differ("--seed", got, want.seed)
		}
		b.check("seed")
	}
	manip := strings.HasPrefix(name, "metaworld-") || strings.HasPrefix(name, "robosuite-")
	switch kind := strings.TrimSuffix(strings.TrimPrefix(name, d.Env+"-"), "-v2"); {
	case manip:
		if steps, err := strconv.Atoi(meta["episode_steps"]); err == nil && steps > 0 {
			if w := want.episodes * steps; info.Rows != w {
				b.differ("rows", info.Rows, fmt.Sprintf("%d (--episodes %d of %d steps)", w, want.episodes, steps))
			}
			b.check("size")
		}
	case kind == "random" || kind == "medium" || kind == "expert":
		if info.Rows != transitions {
			b.differ("rows", info.Rows, fmt.Sprintf("%d (--transitions)", transitions))
		}
		b.check("size")
	}
	type recorded struct {
		flag, key string
		want      float64
		always    bool // compared at the flag's default too
	}
	rows := []recorded{{"episodes", "episodes", float64(want.episodes), true}, {"noise", "action_noise", want.noise, false},
		{"random-fraction", "random_fraction", want.randomFrac, false}}
	if f.NArg() == 0 {
		rows = append(rows, recorded{"sac-steps", "sac_steps", float64(want.sacSteps), true})
	}
	for _, r := range rows {
		got, ok := meta[r.key]
		if !ok || (!r.always && !f.Changed(r.flag)) {
			continue
		}
		if v, err := strconv.ParseFloat(got, 64); err != nil || v != r.want {
			b.differ("--"+r.flag, got, strconv.FormatFloat(r.want, 'g', -1, 64))
		}
		b.check("--" + r.flag)
	}
	if f.NArg() == 0 && !manip {
		if err := b.collectJSON(file, want.inMemoryConfig()); err != nil {
			return "", err
		}
	}
	return b.result()
}

// collectJSON compares the in-memory pipeline's configuration recorded in
// collect.json beside file (when it is there and names file) with want,
// key by key.
func (b *blockDiff) collectJSON(file string, want sac.CollectConfig) error {
	var rec run.CollectResult
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "collect.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = json.Unmarshal(raw, &rec)
	}
	if err != nil {
		return &sweep.UnreadableError{Err: fmt.Errorf("collect.json beside %s: %w", file, err)}
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(rec.Files)), func(p string) bool { return filepath.Base(p) == filepath.Base(file) }) {
		return nil // another collection's record
	}
	h, err := run.FlattenJSON(rec.Config)
	if err != nil {
		return err
	}
	w, err := run.FlattenJSON(want)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if wv, ok := w[k]; ok && wv != h[k] {
			b.differ("collect.json "+k, strings.Trim(h[k], "[]"), strings.Trim(wv, "[]"))
		}
	}
	b.check("collect.json settings")
	return nil
}
