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
