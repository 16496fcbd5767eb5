package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/koopq/koopq/stats"
	"gopkg.in/yaml.v3"
)

// Pair asks for the probability of improvement of Method over Over, beyond
// the comparisons with the baseline (e.g. KFC++ over S4RL-N).
type Pair struct {
	Method string `json:"method"`
	Over   string `json:"over"`
}

// ParsePair reads "A:B" (P(A > B)) as a Pair.
func ParsePair(s string) (Pair, error) {
	a, b, ok := strings.Cut(s, ":")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if !ok || a == "" || b == "" || strings.Contains(b, ":") {
		return Pair{}, fmt.Errorf("%q: want METHOD:OVER, e.g. KFC++:CQL for P(KFC++ > CQL)", s)
	}
	return Pair{Method: a, Over: b}, nil
}

// PairCI is the probability of improvement of one method over another with
// its stratified bootstrap interval, over the datasets both have runs on.
type PairCI struct {
	Pair
	// Runs of Method and of Over that entered the comparison.
	Runs, OverRuns int
	stats.CI
	// Test is the permutation test of P(Method > Over).
	Test stats.RankTest
}

// MarshalJSON flattens the interval next to the pair.
func (p PairCI) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"method": p.Method, "over": p.Over, "runs": p.Runs, "over_runs": p.OverRuns,
		"value": stats.NullIfNaN(p.Value), "lo": stats.NullIfNaN(p.Lo), "hi": stats.NullIfNaN(p.Hi), "rank_test": p.Test})
}

// Reference holds published scores to print beside ours, e.g. the paper's
// own Table 1. They were measured on other data (D4RL's datasets, another
// implementation), so the report always shows them apart and labelled, and
// never uses them in a statistic.
type Reference struct {
	// Label names the column group, e.g. "paper (D4RL data)".
	Label string `yaml:"label" json:"label"`
	// Source cites where the numbers come from (paper, table, seeds).
	Source string `yaml:"source" json:"source"`
	// Note says how the reference data differs from ours.
	Note string `yaml:"note" json:"note"`
	// Scores maps dataset name → method name → score (normalized, as in the
	// table). Names are matched to ours exactly.
	Scores map[string]map[string]float64 `yaml:"scores" json:"scores"`
}

// LoadReference reads a reference-score file (YAML or JSON; unknown keys
// are errors).
func LoadReference(path string) (*Reference, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	var ref Reference
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&ref); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reference %s: the file is empty: want a YAML mapping with label, source and scores", path)
		}
		return nil, fmt.Errorf("reference %s: %v", path, err)
	}
	var p []string
	if ref.Label == "" {
		p = append(p, "label missing (it heads the reference columns, e.g. \"paper (D4RL data)\")")
	}
	if ref.Source == "" {
		p = append(p, "source missing (cite the paper and table the numbers come from)")
	}
	if len(ref.Scores) == 0 {
		p = append(p, "scores: none given (dataset: {method: score})")
	}
	for d, ms := range ref.Scores {
		for m, v := range ms {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				p = append(p, fmt.Sprintf("scores.%s.%s: not a finite number", d, m))
			}
		}
	}
	if len(p) > 0 {
		sort.Strings(p)
		return nil, fmt.Errorf("reference %s: %s", path, strings.Join(p, "; "))
	}
	return &ref, nil
}

// ReferenceTable renders our table beside the reference scores: per method
// two columns, ours (mean ± std, n seeds) and the reference's, for the
// datasets that have reference scores. Empty when no dataset matches.
func (r *Report) ReferenceTable() string {
	ref := r.Reference
	if ref == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("| dataset |")
	for _, m := range r.Methods {
		fmt.Fprintf(&b, " %s ours | %s %s |", m, m, ref.Label)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|---:|", len(r.Methods)) + "\n")
	rows := 0
	for i, d := range r.Datasets {
		scores, ok := ref.Scores[d]
		if !ok {
			continue
		}
		rows++
		b.WriteString("| " + d + " |")
		for j, m := range r.Methods {
			c := r.Table.Rows[i].Cells[j]
			ours := "–"
			if c.N() > 0 {
				ours = pm(c)
				if c.N() > 1 {
					ours += fmt.Sprintf(" (n=%d)", c.N())
				}
			}
			theirs := "–"
			if v, ok := scores[m]; ok {
				theirs = fmt.Sprintf("%.1f", v)
			}
			fmt.Fprintf(&b, " %s | %s |", ours, theirs)
		}
		b.WriteString("\n")
	}
	if rows == 0 {
		return ""
	}
	fmt.Fprintf(&b, "\nReference columns (%s): %s.", ref.Label, ref.Source)
	if ref.Note != "" {
		fmt.Fprintf(&b, " %s", ref.Note)
	}
	b.WriteString("\n")
	return b.String()
}
