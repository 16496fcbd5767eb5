package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/rundir"
)

// MadeSuffix is appended to a prepared file's path for its record of how
// it was made (Made): the digest of the spec block that made it.
const MadeSuffix = ".made.json"

// Made is the record beside a dataset or shared Koopman model that a sweep
// prepared (<file>.made.json): which spec block made it and the file's
// sha256 when it was made.
type Made struct {
	Kind   string `json:"kind"`  // PrepCollect or PrepKoopman
	Block  string `json:"block"` // prepDigest of the block (collect: or koopman:)
	SHA256 string `json:"sha256"`
	// Adopted marks a record written for a file found already there (made
	// by hand or by an older koopq): its making is not known, only that
	// the spec's block was this one when the sweep first used it.
	Adopted bool `json:"adopted,omitempty"`
}

// madeBlock is the digest a prepared file of kind for dataset d is made
// under; "" when the spec has no block for it (nothing to compare).
func madeBlock(d Dataset, kind string) string {
	if kind == PrepCollect {
		return prepDigest(Dataset{Collect: d.Collect}, false)
	}
	return prepDigest(Dataset{Koopman: d.Koopman}, true)
}

// AdoptCheck tells whether a file found at a path that a spec block would
// make, without a record that the sweep made it, is what the block makes:
// kind is PrepCollect (file is d's dataset, made by its collect: block) or
// PrepKoopman (file is d's shared model, made by its koopman: block from
// the dataset at data). checked says what was compared, for the
// announcement (e.g. "sizes, training settings, seed, data"); an error
// says how the file differs from what the block makes. The sweep package
// reads neither datasets nor models: the command that runs the sweep
// passes its check.
type AdoptCheck func(kind string, d Dataset, file, data string) (checked string, err error)

// UnreadableError is an AdoptCheck's error for a file it could not read
// (corrupt, not a model or dataset), told apart from one that differs from
// its block.
type UnreadableError struct{ Err error }

func (e *UnreadableError) Error() string { return e.Err.Error() }
func (e *UnreadableError) Unwrap() error { return e.Err }

// checkMade compares the prepared file path (which exists) with its
// record: a record made under another block, or a file changed since, is an
// error naming the file, the dataset and what to do. A file without a
// record is adopted when fits (nil: no check) finds it is what the block
// makes; the record is written now, and adopted says so, for the caller to
// tell the user what was checked.
func checkMade(path, kind string, d Dataset, data string, fits AdoptCheck) (adopted bool, checked string, err error) {
	block := madeBlock(d, kind)
	if block == "" {
		return false, "", nil
	}
	f, err := fingerprint.Of(path)
	if err != nil {
		return false, "", err
	}
	what := map[string]string{PrepCollect: "collect:", PrepKoopman: "koopman:"}[kind]
	var m Made
	err = readJSON(path+MadeSuffix, &m)
	if os.IsNotExist(err) {
		if fits != nil {
			if checked, err = fits(kind, d, path, data); err != nil {
				var unreadable *UnreadableError
				if errors.As(err, &unreadable) {
					return false, "", fmt.Errorf("dataset %s: %s was already there, not made by this sweep, and cannot be read: %v; "+
						"move it away to have the sweep make it", d.Name, path, unreadable.Err)
				}
				return false, "", fmt.Errorf("dataset %s: %s was already there, not made by this sweep, and is not what the spec's %s block makes: %v; "+
					"move it away to have the sweep make it, or make the block describe it", d.Name, path, what, err)
			}
		}
		return true, checked, writeMade(path, Made{Kind: kind, Block: block, SHA256: f.SHA256, Adopted: true})
	}
	if err != nil {
		return false, "", fmt.Errorf("%s: %w", path+MadeSuffix, err)
	}
	if m.Block != block {
		return false, "", fmt.Errorf("dataset %s: the spec's %s block changed since %s was made (block %s then, %s now): "+
			"the file is not what the spec describes; move it away (and the runs made on it) to remake it, or use another --data-root",
			d.Name, what, path, m.Block, block)
	}
	if m.SHA256 != f.SHA256 {
		since := "the sweep made it"
		if m.Adopted {
			since = "the sweep first used it (it was there already, not made by the sweep)"
		}
		return false, "", fmt.Errorf("dataset %s: %s changed since %s (sha256 %s then, %s now); restore it, or move it away to remake it",
			d.Name, path, since, fingerprint.Short(m.SHA256), f.Short())
	}
	return false, "", nil
}

func writeMade(path string, m Made) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path+MadeSuffix, append(b, '\n'))
}

// checkPrepared runs checkMade on every existing dataset file with a
// collect: block and every existing shared model with a koopman: block
// that runs use; errors are keyed by dataset name. A file adopted now
// (checked by fits; nil: unchecked) is announced on progress (nil:
// silent).
func checkPrepared(s *Spec, runs []Run, root string, fits AdoptCheck, progress io.Writer) map[string]error {
	used, needsModel := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		used[r.Dataset] = true
		if r.Koopman != "" && !r.KoopmanDefault {
			needsModel[r.Dataset] = true
		}
	}
	failed := map[string]error{}
	for _, d := range s.Datasets {
		if !used[d.Name] {
			continue
		}
		data := resolve(root, d.Data)
		if d.Collect != nil && exists(data) {
			adopted, checked, err := checkMade(data, PrepCollect, d, data, fits)
			if err != nil {
				failed[d.Name] = err
				continue
			}
			announceAdopted(progress, adopted, d.Name, data, "collect:", checked)
		}
		if model, ok := d.KoopmanModel(); ok && needsModel[d.Name] {
			// A model found before its dataset is made waits for it: its
			// training data is part of what is checked.
			if p := resolve(root, model); exists(p) && exists(data) {
				adopted, checked, err := checkMade(p, PrepKoopman, d, data, fits)
				if err != nil {
					failed[d.Name] = err
				}
				announceAdopted(progress, adopted, d.Name, p, "koopman:", checked)
			}
		}
	}
	return failed
}

// announceAdopted tells progress that the sweep took a file it found at a
// path its spec would make (by hand, or an older koopq), and what of it
// was checked against the spec's block (collect: or koopman:); "" for
// nothing.
func announceAdopted(progress io.Writer, adopted bool, dataset, path, block, checked string) {
	if !adopted || progress == nil {
		return
	}
	how := "unchecked (move it away to have the sweep make it)"
	if checked != "" {
		how = "checked against it: " + checked
	}
	fmt.Fprintf(progress, "adopt   dataset %s: %s was already there, not made by this sweep: it is used as what the spec's %s block "+
		"would make, %s; from now on a change to it is refused\n", dataset, path, block, how)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// InputsFile is the sweep directory's record of the inputs its runs use
// (.sweep/inputs.json): for every dataset name, the sha256 of its data
// file and of its shared Koopman model when first used.
const InputsFile = "inputs.json"

// SweepInput is one dataset's entry in InputsFile.
type SweepInput struct {
	Data    fingerprint.File  `json:"data"`
	Koopman *fingerprint.File `json:"koopman_model,omitempty"`
}

// ContentFunc reads the dataset at path with a run's read options (the
// read_options object of its config.json as raw JSON; nil for the
// defaults) and returns the sha256 of its transitions as read
// (dataset.Dataset.ContentSHA256). The sweep package reads no dataset
// itself: the command that runs the sweep passes its reader.
type ContentFunc func(path string, readOptions json.RawMessage) (string, error)

// startedRun is what a run already in the sweep directory recorded about
// its inputs when it started.
type startedRun struct {
	name        string
	inputs      rundir.Inputs
	readOptions json.RawMessage
}

// startedRuns reads the inputs.json (and config.json's read options) of
// every run of runs that has started in out, grouped by dataset name. Runs
// from before koopq recorded inputs have none and are left out.
func startedRuns(out string, runs []Run) (map[string][]startedRun, error) {
	by := map[string][]startedRun{}
	for _, r := range runs {
		dir := findTrainDir(SlotDir(out, r))
		if dir == "" {
			continue
		}
		var sr startedRun
		err := readJSON(filepath.Join(dir, rundir.InputsFile), &sr.inputs)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: %s: %w", r.Name, rundir.InputsFile, err)
		}
		var cfg struct {
			ReadOptions json.RawMessage `json:"read_options"`
		}
		if err := readJSON(filepath.Join(dir, rundir.ConfigFile), &cfg); err != nil {
			return nil, fmt.Errorf("run %s: %s: %w", r.Name, rundir.ConfigFile, err)
		}
		sr.name, sr.readOptions = r.Name, cfg.ReadOptions
		by[r.Dataset] = append(by[r.Dataset], sr)
	}
	return by, nil
}

// contentCheck compares one dataset file with the runs that started on it:
// a run whose recorded file sha256 is the file's own read the same bytes;
// otherwise the file is read with the run's read options (once per set of
// options) and its transitions compared with what the run trained on, so a
// file rewritten with the same transitions (regenerated by another koopq,
// whose version it records) passes.
type contentCheck struct {
	path    string
	file    fingerprint.File
	content ContentFunc
	seen    map[string]string // read options → content sha256
}

// mismatch is "" when run sr trained on the transitions the file holds
// now, else a description of the difference.
func (c *contentCheck) mismatch(sr startedRun) (string, error) {
	rec := sr.inputs.Dataset
	if rec.SHA256 == c.file.SHA256 || rec.ContentSHA256 == "" {
		return "", nil
	}
	key := string(sr.readOptions)
	now, ok := c.seen[key]
	if !ok {
		var err error
		if now, err = c.content(c.path, sr.readOptions); err != nil {
			return "", fmt.Errorf("reading %s to compare it with run %s's data: %w", c.path, sr.name, err)
		}
		c.seen[key] = now
	}
	if now == rec.ContentSHA256 {
		return "", nil
	}
	return fmt.Sprintf("run %s trained on %s (%d transitions, content sha256 %s), %s now holds other transitions (content sha256 %s)",
		sr.name, rec.Path, rec.Transitions, fingerprint.Short(rec.ContentSHA256), c.path, fingerprint.Short(now)), nil
}

// CheckInputs fingerprints the data file (and shared Koopman model) of
// every dataset that runs use and compares them with what the sweep's
// earlier runs used: the sweep directory's record (out/.sweep/inputs.json,
// to which the datasets not yet recorded are added) and the inputs.json of
// every run already started in out. The second holds where the first is
// gone: a sweep continued on another machine from committed run files,
// with its data regenerated there. Data compare by their transitions
// (content reads the file when its bytes differ from a record), models by
// file sha256. all is every run of the spec: the started ones among them
// are compared, selected for this sweep or not. A dataset whose inputs
// differ is an error keyed by its name: its runs must not join the same
// table cells. The record is written only when nothing differs.
func CheckInputs(out string, runs, all []Run, root string, content ContentFunc) (map[string]error, error) {
	recPath := filepath.Join(out, ".sweep", InputsFile)
	rec := map[string]SweepInput{}
	if err := readJSON(recPath, &rec); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("%s: %w", recPath, err)
	}
	started, err := startedRuns(out, all)
	if err != nil {
		return nil, err
	}
	model := map[string]string{}
	names := map[string]string{}
	for _, r := range runs {
		names[r.Dataset] = r.ResolveData(root)
		if r.Koopman != "" {
			model[r.Dataset] = resolve(root, r.Koopman)
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	failed := map[string]error{}
	changed := false
	for _, name := range keys {
		now, err := currentInput(names[name], model[name])
		if err != nil {
			failed[name] = fmt.Errorf("dataset %s: %w", name, err)
			continue
		}
		if err := checkStarted(name, out, now, started[name], content); err != nil {
			failed[name] = err
			continue
		}
		was, ok := rec[name]
		switch {
		case !ok:
			rec[name], changed = now, true
		case was.Data.SHA256 != now.Data.SHA256 && len(started[name]) == 0:
			failed[name] = fmt.Errorf("dataset %s: its runs in %s trained on %s (sha256 %s), this sweep would use %s (sha256 %s): "+
				"one table cell must not mix datasets; use the data root the sweep started with, or a new --out",
				name, out, was.Data.Path, was.Data.Short(), now.Data.Path, now.Data.Short())
		case was.Data.SHA256 != now.Data.SHA256:
			// checkStarted found the same transitions in other bytes.
			was.Data = now.Data
			rec[name], changed = was, true
		case was.Koopman != nil && now.Koopman != nil && was.Koopman.SHA256 != now.Koopman.SHA256:
			failed[name] = fmt.Errorf("dataset %s: its runs in %s used the Koopman model %s (sha256 %s), this sweep would use %s (sha256 %s); "+
				"use the model the sweep started with, or a new --out", name, out, was.Koopman.Path, was.Koopman.Short(), now.Koopman.Path, now.Koopman.Short())
		case was.Koopman == nil && now.Koopman != nil:
			was.Koopman = now.Koopman
			rec[name], changed = was, true
		}
	}
	if changed && len(failed) == 0 {
		if err := os.MkdirAll(filepath.Dir(recPath), 0o755); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := writeAtomic(recPath, append(b, '\n')); err != nil {
			return nil, err
		}
	}
	return failed, nil
}

// currentInput fingerprints a dataset's data file and, when modelPath is
// set and exists, its shared Koopman model.
func currentInput(dataPath, modelPath string) (SweepInput, error) {
	f, err := fingerprint.Of(dataPath)
	if err != nil {
		return SweepInput{}, err
	}
	now := SweepInput{Data: f}
	if modelPath != "" && exists(modelPath) {
		m, err := fingerprint.Of(modelPath)
		if err != nil {
			return now, fmt.Errorf("Koopman model: %w", err)
		}
		now.Koopman = &m
	}
	return now, nil
}

// checkStarted compares dataset name's inputs now with those its started
// runs recorded: the same transitions, and the same shared Koopman model
// for the runs that used it.
func checkStarted(name, out string, now SweepInput, runs []startedRun, content ContentFunc) error {
	c := &contentCheck{path: now.Data.Path, file: now.Data, content: content, seen: map[string]string{}}
	for _, sr := range runs {
		diff, err := c.mismatch(sr)
		if err != nil {
			return fmt.Errorf("dataset %s: %w", name, err)
		}
		if diff != "" {
			return fmt.Errorf("dataset %s: %s: one table cell must not mix datasets; use the data the runs in %s were made on "+
				"(its path and seed are in their config.json), or a new --out", name, diff, out)
		}
		if m := sr.inputs.KoopmanModel; m != nil && now.Koopman != nil && m.SHA256 != now.Koopman.SHA256 {
			return fmt.Errorf("dataset %s: run %s used the Koopman model %s (sha256 %s), this sweep would use %s (sha256 %s); "+
				"use the model the runs in %s were made with (copy it to that path), or a new --out",
				name, sr.name, m.Path, m.Short(), now.Koopman.Path, now.Koopman.Short(), out)
		}
	}
	return nil
}
