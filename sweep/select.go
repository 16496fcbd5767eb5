package sweep

import (
	"fmt"
	"slices"
	"strings"
)

// Selection names a subset of a sweep's runs by dataset, method (a method's
// or an ablation's name) and seed, e.g. to run seed 0 of every method before
// any second seed, or one dataset's runs while the other datasets' Koopman
// models are not trained yet. An empty list selects every value of its key;
// a run is selected when it matches all three keys.
type Selection struct {
	Datasets []string
	Methods  []string
	Seeds    []uint64
}

// Empty reports whether the selection keeps every run.
func (sel Selection) Empty() bool {
	return len(sel.Datasets) == 0 && len(sel.Methods) == 0 && len(sel.Seeds) == 0
}

// String is the selection as `koopq sweep run` flags, for messages.
func (sel Selection) String() string {
	var p []string
	if len(sel.Datasets) > 0 {
		p = append(p, "--datasets "+strings.Join(sel.Datasets, ","))
	}
	if len(sel.Methods) > 0 {
		p = append(p, "--methods "+strings.Join(sel.Methods, ","))
	}
	if len(sel.Seeds) > 0 {
		seeds := make([]string, len(sel.Seeds))
		for i, sd := range sel.Seeds {
			seeds[i] = fmt.Sprint(sd)
		}
		p = append(p, "--seeds "+strings.Join(seeds, ","))
	}
	return strings.Join(p, " ")
}

// Apply returns the runs of s (runs is s's expansion) that the selection
// keeps, in spec order with their spec indexes unchanged (Slurm array tasks
// and Kubernetes completion indexes keep naming the same runs). A name or
// seed the spec does not have is an error naming the ones it has, and so is
// a selection that keeps no run (e.g. an ablation restricted to another
// dataset).
func (sel Selection) Apply(s *Spec, runs []Run) ([]Run, error) {
	if sel.Empty() {
		return runs, nil
	}
	var p problems
	var dsNames, methodNames []string
	for _, d := range s.Datasets {
		dsNames = append(dsNames, d.Name)
	}
	for _, m := range s.Methods {
		methodNames = append(methodNames, m.Name)
	}
	for _, a := range s.Ablations {
		methodNames = append(methodNames, a.Name)
	}
	var seedNames []string
	for _, sd := range s.Seeds {
		seedNames = append(seedNames, fmt.Sprint(sd))
	}
	// Ablations may run seeds of their own: those are valid selections too.
	for _, r := range runs {
		if !slices.Contains(seedNames, fmt.Sprint(r.Seed)) {
			seedNames = append(seedNames, fmt.Sprint(r.Seed))
		}
	}
	check := func(key string, want, have []string) map[string]bool {
		set := map[string]bool{}
		for _, w := range want {
			if !slices.Contains(have, w) {
				p.add("--%s %s: the spec has no such %s (it has %s)", key, w, strings.TrimSuffix(key, "s"), strings.Join(have, ", "))
			}
			set[w] = true
		}
		return set
	}
	seedText := make([]string, len(sel.Seeds))
	for i, sd := range sel.Seeds {
		seedText[i] = fmt.Sprint(sd)
	}
	ds := check("datasets", sel.Datasets, dsNames)
	ms := check("methods", sel.Methods, methodNames)
	ss := check("seeds", seedText, seedNames)
	if err := p.err(); err != nil {
		return nil, err
	}
	var out []Run
	for _, r := range runs {
		if (len(ds) == 0 || ds[r.Dataset]) && (len(ms) == 0 || ms[r.Method]) && (len(ss) == 0 || ss[fmt.Sprint(r.Seed)]) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s selects none of the spec's %d runs", sel, len(runs))
	}
	return out, nil
}

// Orders of Order: how the runs of a sweep are started.
const (
	// OrderSpec starts runs in the spec's expansion order: dataset by
	// dataset, within a dataset method by method, seeds innermost.
	OrderSpec = "spec"
	// OrderSeeds starts every run of the first seed before any run of the
	// second, and so on; within a seed dataset by dataset and method by
	// method. Each key follows the order of its selection list when one is
	// given (--seeds 0,1 --methods KFC++,CQL), else the spec's. A sweep that
	// stops early then leaves whole seeds of every cell rather than all
	// seeds of a few cells.
	OrderSeeds = "seeds"
)

// Order returns runs (a selection of s's runs) in the given order (OrderSpec
// or OrderSeeds); spec indexes and names are unchanged.
func (sel Selection) Order(s *Spec, runs []Run, order string) ([]Run, error) {
	switch order {
	case "", OrderSpec:
		return runs, nil
	case OrderSeeds:
	default:
		return nil, fmt.Errorf("--order %q: want %s or %s", order, OrderSpec, OrderSeeds)
	}
	rank := func(list []string) map[string]int {
		m := map[string]int{}
		for i, v := range list {
			if _, seen := m[v]; !seen {
				m[v] = i
			}
		}
		return m
	}
	var ds, ms, ss []string
	if ds = sel.Datasets; len(ds) == 0 {
		for _, d := range s.Datasets {
			ds = append(ds, d.Name)
		}
	}
	if ms = sel.Methods; len(ms) == 0 {
		for _, m := range s.Methods {
			ms = append(ms, m.Name)
		}
		for _, a := range s.Ablations {
			ms = append(ms, a.Name)
		}
	}
	for _, sd := range sel.Seeds {
		ss = append(ss, fmt.Sprint(sd))
	}
	if len(ss) == 0 {
		for _, sd := range s.Seeds {
			ss = append(ss, fmt.Sprint(sd))
		}
		for _, r := range runs { // seeds only ablations use come last
			ss = append(ss, fmt.Sprint(r.Seed))
		}
	}
	dr, mr, sr := rank(ds), rank(ms), rank(ss)
	out := slices.Clone(runs)
	slices.SortStableFunc(out, func(a, b Run) int {
		if c := sr[fmt.Sprint(a.Seed)] - sr[fmt.Sprint(b.Seed)]; c != 0 {
			return c
		}
		if c := dr[a.Dataset] - dr[b.Dataset]; c != 0 {
			return c
		}
		return mr[a.Method] - mr[b.Method]
	})
	return out, nil
}

// ResumeFirst moves the runs of runs that have a checkpoint in the sweep
// directory out (partial: started, stopped before the end) ahead of the
// others, keeping the order within each group, and says how many it moved.
// 'sweep run' starts them first so that work already done is finished, and
// its checkpoints freed, before new runs begin: a sweep continued session
// after session with a time limit then completes runs instead of leaving
// several half done.
func ResumeFirst(out string, runs []Run) (ordered []Run, partial int) {
	if out == "" {
		return runs, 0
	}
	var first, rest []Run
	for _, r := range runs {
		if st := RunStatus(out, r); st.State == Pending && st.Partial {
			first = append(first, r)
		} else {
			rest = append(rest, r)
		}
	}
	return append(first, rest...), len(first)
}
