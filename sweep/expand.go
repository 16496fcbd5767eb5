package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

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
