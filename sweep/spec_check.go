package sweep

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

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

// CheckThreads checks a --threads value (0: the spec's).
func CheckThreads(n int) error {
	if n < 0 || n > MaxThreads {
		return fmt.Errorf("--threads %d: must be 0 to %d (threads of one run; --jobs sets how many run at once)", n, MaxThreads)
	}
	return nil
}
