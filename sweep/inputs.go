package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/koopq/koopq/internal/fingerprint"
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

// checkMade compares the prepared file path (which exists) with its
// record: a record made under another block, or a file changed since, is an
// error naming the file, the dataset and what to do. A file without a
// record is adopted (the record is written now).
func checkMade(path, kind, block, dataset string) error {
	if block == "" {
		return nil
	}
	f, err := fingerprint.Of(path)
	if err != nil {
		return err
	}
	var m Made
	err = readJSON(path+MadeSuffix, &m)
	if os.IsNotExist(err) {
		return writeMade(path, Made{Kind: kind, Block: block, SHA256: f.SHA256, Adopted: true})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path+MadeSuffix, err)
	}
	what := map[string]string{PrepCollect: "collect:", PrepKoopman: "koopman:"}[kind]
	if m.Block != block {
		return fmt.Errorf("dataset %s: the spec's %s block changed since %s was made (block %s then, %s now): "+
			"the file is not what the spec describes; move it away (and the runs made on it) to remake it, or use another --data-root",
			dataset, what, path, m.Block, block)
	}
	if m.SHA256 != f.SHA256 {
		return fmt.Errorf("dataset %s: %s changed since the sweep made it (sha256 %s then, %s now); restore it, or move it away to remake it",
			dataset, path, fingerprint.Short(m.SHA256), f.Short())
	}
	return nil
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
// that runs use; errors are keyed by dataset name.
func checkPrepared(s *Spec, runs []Run, root string) map[string]error {
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
		if p := resolve(root, d.Data); d.Collect != nil && exists(p) {
			if err := checkMade(p, PrepCollect, madeBlock(d, PrepCollect), d.Name); err != nil {
				failed[d.Name] = err
				continue
			}
		}
		if model, ok := d.KoopmanModel(); ok && needsModel[d.Name] {
			if p := resolve(root, model); exists(p) {
				if err := checkMade(p, PrepKoopman, madeBlock(d, PrepKoopman), d.Name); err != nil {
					failed[d.Name] = err
				}
			}
		}
	}
	return failed
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

// CheckInputs fingerprints the data file (and shared Koopman model) of
// every dataset that runs use and compares them with the sweep
// directory's record (out/.sweep/inputs.json), adding the ones not yet
// recorded. A dataset whose file now has other content than the one its
// earlier runs trained on (another --data-root, a regenerated file) is an
// error keyed by its name: its runs must not join the same table cells.
// The record is written only when nothing differs.
func CheckInputs(out string, s *Spec, runs []Run, root string) (map[string]error, error) {
	recPath := filepath.Join(out, ".sweep", InputsFile)
	rec := map[string]SweepInput{}
	if err := readJSON(recPath, &rec); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("%s: %w", recPath, err)
	}
	model := map[string]string{}
	for _, r := range runs {
		if r.Koopman != "" {
			model[r.Dataset] = resolve(root, r.Koopman)
		}
	}
	names := map[string]string{}
	for _, r := range runs {
		names[r.Dataset] = r.ResolveData(root)
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	failed := map[string]error{}
	changed := false
	for _, name := range keys {
		f, err := fingerprint.Of(names[name])
		if err != nil {
			failed[name] = fmt.Errorf("dataset %s: %w", name, err)
			continue
		}
		now := SweepInput{Data: f}
		if p, ok := model[name]; ok && exists(p) {
			m, err := fingerprint.Of(p)
			if err != nil {
				failed[name] = fmt.Errorf("dataset %s: Koopman model: %w", name, err)
				continue
			}
			now.Koopman = &m
		}
		was, ok := rec[name]
		switch {
		case !ok:
			rec[name], changed = now, true
		case was.Data.SHA256 != now.Data.SHA256:
			failed[name] = fmt.Errorf("dataset %s: its runs in %s trained on %s (sha256 %s), this sweep would use %s (sha256 %s): "+
				"one table cell must not mix datasets; use the data root the sweep started with, or a new --out",
				name, out, was.Data.Path, was.Data.Short(), now.Data.Path, now.Data.Short())
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
