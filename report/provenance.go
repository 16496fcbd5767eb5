package report

import (
	"fmt"
	"slices"
	"strings"
)

// checkInputs refuses runs pooled or compared on different inputs (see
// checkRuns): a dataset × method cell whose runs read different
// transitions (dataset content sha256) or different given Koopman models,
// or that mixes a given model with models the runs trained themselves
// (runs that train their own have one per seed: not compared); and a
// dataset whose methods read different transitions, since a row of the
// table compares them. Runs without recorded inputs are not compared.
func checkInputs(rs []Result) error {
	type cellKey struct{ dataset, method string }
	cells := map[cellKey][]Result{}
	for _, r := range rs {
		c := cellKey{r.Dataset, r.Method}
		for _, f := range cells[c] {
			a, b := f.Inputs, r.Inputs
			if a.DatasetContent != "" && b.DatasetContent != "" && a.DatasetContent != b.DatasetContent {
				return fmt.Errorf("report: %s %s pools runs trained on different data: dataset content sha256 %s in %s but %s in %s "+
					"(another dataset under the same name, or the file changed between runs); report them apart, or retrain the odd runs on the cell's data",
					r.Dataset, r.Method, short(a.DatasetContent), f.Dir, short(b.DatasetContent), r.Dir)
			}
			if a.Model == "" || b.Model == "" {
				continue
			}
			if a.SharedModel && b.SharedModel && a.Model != b.Model {
				return fmt.Errorf("report: %s %s pools runs that used different Koopman models: %s (sha256 %s) in %s but %s (sha256 %s) in %s; "+
					"seeds of one method share one model: report them apart, or retrain the odd runs with the cell's model",
					r.Dataset, r.Method, a.ModelPath, short(a.Model), f.Dir, b.ModelPath, short(b.Model), r.Dir)
			}
			if a.SharedModel != b.SharedModel {
				given, own := f, r
				if !a.SharedModel {
					given, own = r, f
				}
				return fmt.Errorf("report: %s %s pools runs that used a given Koopman model (%s, sha256 %s, in %s) with runs that trained their own (%s): "+
					"two protocols under one method name; report them apart, or give them different method names in the sweep spec",
					r.Dataset, r.Method, given.Inputs.ModelPath, short(given.Inputs.Model), given.Dir, own.Dir)
			}
		}
		cells[c] = append(cells[c], r)
	}
	first := map[string]Result{} // per dataset, its first run with a recorded content fingerprint
	for _, r := range rs {
		if r.Inputs.DatasetContent == "" {
			continue
		}
		f, ok := first[r.Dataset]
		if !ok {
			first[r.Dataset] = r
			continue
		}
		if f.Inputs.DatasetContent != r.Inputs.DatasetContent { // f.Method != r.Method: the cells agree
			return fmt.Errorf("report: %s: %s and %s trained on different data: dataset content sha256 %s in %s but %s in %s; "+
				"the methods of a dataset's row are compared with each other and must see the same transitions: report them apart, "+
				"or retrain one of them on the other's data", r.Dataset, f.Method, r.Method, short(f.Inputs.DatasetContent), f.Dir,
				short(r.Inputs.DatasetContent), r.Dir)
		}
	}
	return nil
}

// short abbreviates a hex digest to 12 digits for messages.
func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// ProvenanceNote flags a table cell whose finished runs were not all
// trained by one clean koopq build in one GEMM precision: their segments
// come from more than one commit, from a build of a modified tree
// ("+dirty"), from a binary without a VCS stamp ("+unstamped": its commit
// is the checkout it ran in) or one whose commit is "unknown", or from
// more than one precision. The cell is reported (the
// code may have changed in ways that do not matter), but its seeds may
// not be one program's numbers.
type ProvenanceNote struct {
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	// Commits are the koopq commits that trained the cell's runs and the
	// seeds each trained (a resumed run can be under several); set when
	// there are several or one is "+dirty".
	Commits []ValueSeeds `json:"commits,omitempty"`
	// Precisions are the GEMM precisions and their seeds, when several.
	Precisions []ValueSeeds `json:"precisions,omitempty"`
	// Backends are the GEMM backends with their instruction sets
	// (Segment.Backend) and their seeds, when several: runs of one cell
	// trained on different machines.
	Backends []ValueSeeds `json:"backends,omitempty"`
}

// ValueSeeds is one value of a ProvenanceNote and the seeds that had it.
type ValueSeeds struct {
	Value string   `json:"value"`
	Seeds []uint64 `json:"seeds"`
}

func (v ValueSeeds) String() string {
	word := "seeds"
	if len(v.Seeds) == 1 {
		word = "seed"
	}
	s := make([]string, len(v.Seeds))
	for i, x := range v.Seeds {
		s[i] = fmt.Sprint(x)
	}
	return fmt.Sprintf("%s (%s %s)", v.Value, word, strings.Join(s, ", "))
}

// String is a one-line description, e.g. "hopper-medium CQL: trained by
// commits 1a2b3c4 (seeds 0, 1), 5d6e7f8+dirty (seed 2)".
func (n ProvenanceNote) String() string {
	join := func(vs []ValueSeeds) string {
		s := make([]string, len(vs))
		for i, v := range vs {
			s[i] = v.String()
		}
		return strings.Join(s, ", ")
	}
	var parts []string
	if len(n.Commits) > 0 {
		parts = append(parts, "trained by commits "+join(n.Commits))
	}
	if len(n.Precisions) > 0 {
		parts = append(parts, "GEMM precisions "+join(n.Precisions))
	}
	if len(n.Backends) > 0 {
		parts = append(parts, "GEMM backends "+join(n.Backends))
	}
	return fmt.Sprintf("%s %s: %s", n.Dataset, n.Method, strings.Join(parts, "; "))
}

// provenanceNotes lists the cells of rs (finished runs in table order)
// whose segments come from several commits, a "+dirty" commit, several
// GEMM precisions or several GEMM backends (machines). Segments without
// recorded provenance are left out.
func provenanceNotes(rs []Result) []ProvenanceNote {
	var out []ProvenanceNote
	add := func(vs []ValueSeeds, value string, seed uint64) []ValueSeeds {
		i := slices.IndexFunc(vs, func(v ValueSeeds) bool { return v.Value == value })
		if i < 0 {
			return append(vs, ValueSeeds{Value: value, Seeds: []uint64{seed}})
		}
		if !slices.Contains(vs[i].Seeds, seed) {
			vs[i].Seeds = append(vs[i].Seeds, seed)
		}
		return vs
	}
	for i := 0; i < len(rs); {
		j := i
		var commits, precisions, backends []ValueSeeds
		dirty := false
		for ; j < len(rs) && rs[j].Dataset == rs[i].Dataset && rs[j].Method == rs[i].Method; j++ {
			for _, s := range rs[j].Segments {
				if !s.Known {
					continue
				}
				if s.Commit != "" {
					commits = add(commits, s.Commit, rs[j].Seed)
					// A modified tree, or code that cannot be named: an
					// unstamped binary credited with its checkout's HEAD,
					// or no commit at all.
					dirty = dirty || strings.Contains(s.Commit, "+dirty") || strings.Contains(s.Commit, "+unstamped") || s.Commit == "unknown"
				}
				if s.Precision != "" {
					precisions = add(precisions, s.Precision, rs[j].Seed)
				}
				if s.Backend != "" {
					backends = add(backends, s.Backend, rs[j].Seed)
				}
			}
		}
		n := ProvenanceNote{Dataset: rs[i].Dataset, Method: rs[i].Method}
		if len(commits) > 1 || dirty {
			n.Commits = commits
		}
		if len(precisions) > 1 {
			n.Precisions = precisions
		}
		if len(backends) > 1 {
			n.Backends = backends
		}
		if n.Commits != nil || n.Precisions != nil || n.Backends != nil {
			out = append(out, n)
		}
		i = j
	}
	return out
}

// provenanceNote is the provenance notes as a paragraph to follow the
// paper-format table, or "" when there are none.
func (r *Report) provenanceNote() string {
	return bulletNote("Provenance notes", "(cells whose runs were not all trained by one stamped koopq build of an unmodified tree with one "+
		"GEMM backend and precision: their seeds may not be one program's numbers; runs.md lists every run's processes):", r.ProvenanceNotes)
}

// PairMismatch is one seed of a paired comparison whose two runs were not
// trained alike: their segments differ in koopq commit, GEMM precision or
// GEMM backend (machine). Pairing shares the random streams (weights,
// minibatches, augmentation, evaluation states), not the arithmetic, so
// such a pair's difference carries rounding drift (or code changes) as
// well as the methods' difference. The cell notes cannot show it when
// each cell is uniform in itself (every CQL seed on one machine, every
// KFC++ seed on another).
type PairMismatch struct {
	Dataset string `json:"dataset"`
	Seed    uint64 `json:"seed"`
	// Differs names each property that differs with both runs' values,
	// method first, e.g. "GEMM backend openblas Zen vs onednn avx512_core_bf16".
	Differs []string `json:"differs"`
}

// String is e.g. "hopper-medium seed 0: GEMM backend openblas Zen vs onednn avx512_core_bf16".
func (m PairMismatch) String() string {
	return fmt.Sprintf("%s seed %d: %s", m.Dataset, m.Seed, strings.Join(m.Differs, "; "))
}

// runProvenance is the distinct commits, GEMM precisions and GEMM backends
// of r's segments with recorded provenance, each sorted.
func runProvenance(r Result) (commits, precisions, backends []string) {
	add := func(vs []string, v string) []string {
		if v == "" || slices.Contains(vs, v) {
			return vs
		}
		return append(vs, v)
	}
	for _, s := range r.Segments {
		if s.Known {
			commits, precisions, backends = add(commits, s.Commit), add(precisions, s.Precision), add(backends, s.Backend)
		}
	}
	slices.Sort(commits)
	slices.Sort(precisions)
	slices.Sort(backends)
	return commits, precisions, backends
}

// pairDiffers compares the provenance of a (the method's run) and b (the
// baseline's run of the same seed): one entry per property whose values
// differ, none where either run has no record of it.
func pairDiffers(a, b Result) []string {
	ca, pa, ba := runProvenance(a)
	cb, pb, bb := runProvenance(b)
	var out []string
	for _, p := range []struct {
		name string
		a, b []string
	}{{"koopq commit", ca, cb}, {"GEMM precision", pa, pb}, {"GEMM backend", ba, bb}} {
		if len(p.a) > 0 && len(p.b) > 0 && !slices.Equal(p.a, p.b) {
			out = append(out, fmt.Sprintf("%s %s vs %s", p.name, strings.Join(p.a, " + "), strings.Join(p.b, " + ")))
		}
	}
	return out
}

// pairMismatchNote is the paired table's note on pairs trained unlike,
// one line per comparison and seed (pooled rows repeat their datasets'
// pairs and are left out), or "" when every pair was trained alike.
func pairMismatchNote(ds []PairedDifference) string {
	var lines []string
	for _, d := range ds {
		if d.Dataset == PooledDataset {
			continue
		}
		for _, m := range d.Mismatches {
			lines = append(lines, fmt.Sprintf("%s − %s, %s", d.Method, d.Over, m))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n**Pairs trained unlike** (the two runs of a seed share random streams but not the build or arithmetic, " +
		"so their difference also carries rounding drift or code changes; runs.md lists every run's processes):\n\n- " +
		strings.Join(lines, "\n- ") + "\n"
}
