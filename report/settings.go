package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/koopq/koopq/rundir"
)

// Settings are a run's training settings as flattened keys of its config
// ("cql.lagrange", "cql.min_q_weight", "augment_params.koopman_prob", …)
// mapped to their JSON values. Keys that identify the run or the machine
// rather than the protocol (seeds, file paths, checkpoint and logging
// cadence, cache sizes) are left out, so two seeds of one protocol have
// equal settings.
type Settings map[string]string

// notSetting says whether a flattened config key is left out of Settings.
func notSetting(key string) bool {
	switch key {
	case "data", "koopman_model", "checkpoint_every", "log_every", "augment_params.cache_gib":
		return true
	}
	return key == "seed" || strings.HasSuffix(key, ".seed")
}

// settingsOf flattens a run's config JSON object into Settings; nil
// (nothing to compare) when config is empty.
func settingsOf(config []byte) (Settings, error) {
	if len(bytes.TrimSpace(config)) == 0 || bytes.Equal(bytes.TrimSpace(config), []byte("null")) {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(config, &m); err != nil {
		return nil, err
	}
	out := Settings{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			key := prefix + k
			if sub, ok := v.(map[string]any); ok {
				walk(key+".", sub)
				continue
			}
			if notSetting(key) {
				continue
			}
			if a, ok := v.(string); ok && key == "augment" {
				v = rundir.MethodLabel(a) // plain CQL, "none" before koopq called it "cql"
			}
			b, _ := json.Marshal(v) // values decoded from JSON always encode
			out[key] = string(b)
		}
	}
	walk("", m)
	return out, nil
}

// SettingDifference is a training setting whose value differs between
// datasets for the same methods: the datasets were run under different
// protocols (e.g. a penalty weight fixed on some and tuned on others), which
// the paper-format table would otherwise hide.
type SettingDifference struct {
	// Key is the flattened config key, e.g. "cql.lagrange".
	Key string `json:"key"`
	// Methods are the methods whose runs differ this way.
	Methods []string `json:"methods"`
	// Values map each value (as JSON) to the datasets run with it.
	Values []SettingValue `json:"values"`
}

// SettingValue is one value of a SettingDifference and where it was used.
type SettingValue struct {
	Value    string   `json:"value"`
	Datasets []string `json:"datasets"`
}

// String is a one-line description, e.g. `cql.lagrange: true on
// hopper-medium; false on walker2d-medium (CQL, KFC++)`.
func (d SettingDifference) String() string {
	var parts []string
	for _, v := range d.Values {
		parts = append(parts, v.Value+" on "+strings.Join(v.Datasets, ", "))
	}
	return fmt.Sprintf("%s: %s (%s)", d.Key, strings.Join(parts, "; "), strings.Join(d.Methods, ", "))
}

type runKey struct {
	dataset, method string
	seed            uint64
}

// checkRuns refuses run sets whose statistics would silently be wrong: the
// same (dataset, method, seed) found twice (a run copied into two of the
// directories given, or one seed trained twice) would count as two seeds,
// and runs of one dataset × method cell trained with different settings
// would be pooled as seeds of one protocol. A setting absent from a run's
// config (written by an older koopq) is not compared. In-progress runs are
// checked among themselves and with finished runs for settings, and for
// duplicates only among themselves (a finished run replaces its partial
// curve). Runs pooled or compared on different inputs (checkInputs) are
// refused too.
func checkRuns(rs []Result) error {
	seen := map[runKey]Result{}
	seenPartial := map[runKey]Result{}
	for _, r := range rs {
		k := runKey{r.Dataset, r.Method, r.Seed}
		m := seen
		if r.InProgress {
			m = seenPartial
		}
		if prev, ok := m[k]; ok {
			if key, ok := differ(prev.Settings, r.Settings); ok {
				return fmt.Errorf("report: %s %s seed %d appears twice, trained with different settings (%s = %s in %s but %s in %s): two protocols under one method name; report them apart",
					r.Dataset, r.Method, r.Seed, key, prev.Settings[key], prev.Dir, r.Settings[key], r.Dir)
			}
			return fmt.Errorf("report: %s %s seed %d appears twice (%s and %s): the same run copied into two of the directories given, or one seed trained twice; pass one of them",
				r.Dataset, r.Method, r.Seed, prev.Dir, r.Dir)
		}
		m[k] = r
	}
	type cellKey struct{ dataset, method string }
	cells := map[cellKey][]Result{}
	for _, r := range rs {
		c := cellKey{r.Dataset, r.Method}
		for _, f := range cells[c] { // every pair: runs may lack different keys
			if key, ok := differ(f.Settings, r.Settings); ok {
				return fmt.Errorf("report: %s %s pools runs trained with different settings: %s = %s in %s but %s in %s; report them apart, or give them different method names in the sweep spec",
					r.Dataset, r.Method, key, f.Settings[key], f.Dir, r.Settings[key], r.Dir)
			}
		}
		cells[c] = append(cells[c], r)
	}
	return checkInputs(rs)
}

// differ returns the first key (in sorted order) that both a and b hold
// with different values.
func differ(a, b Settings) (string, bool) {
	for _, key := range sortedKeys(a) {
		if v, ok := b[key]; ok && v != a[key] {
			return key, true
		}
	}
	return "", false
}

func sortedKeys(s Settings) []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// settingDifferences lists the settings that differ between datasets for
// the same method (after checkRuns, every run of a cell agrees), merging
// methods that differ the same way. "env" is left out: datasets of other
// environments differ in it by definition. Datasets and methods follow the
// given orders.
func settingDifferences(rs []Result, datasets, methods []string) []SettingDifference {
	// cell settings: one run per (dataset, method), the first with a config.
	cell := map[[2]string]Settings{}
	for _, r := range rs {
		k := [2]string{r.Dataset, r.Method}
		if cell[k] == nil && r.Settings != nil {
			cell[k] = r.Settings
		}
	}
	type diff struct {
		key     string
		methods []string
		sig     string
		values  []SettingValue
	}
	var out []*diff
	for _, m := range methods {
		keys := Settings{}
		for _, d := range datasets {
			for k := range cell[[2]string{d, m}] {
				keys[k] = ""
			}
		}
		for _, key := range sortedKeys(keys) {
			if key == "env" {
				continue
			}
			var vals []SettingValue
			for _, d := range datasets {
				s := cell[[2]string{d, m}]
				v, ok := s[key]
				if !ok {
					continue
				}
				i := slices.IndexFunc(vals, func(sv SettingValue) bool { return sv.Value == v })
				if i < 0 {
					vals = append(vals, SettingValue{Value: v})
					i = len(vals) - 1
				}
				vals[i].Datasets = append(vals[i].Datasets, d)
			}
			if len(vals) < 2 {
				continue
			}
			sig := key + "\x00" + fmt.Sprint(vals)
			if i := slices.IndexFunc(out, func(d *diff) bool { return d.sig == sig }); i >= 0 {
				out[i].methods = append(out[i].methods, m)
				continue
			}
			out = append(out, &diff{key: key, methods: []string{m}, sig: sig, values: vals})
		}
	}
	var res []SettingDifference
	for _, d := range out {
		res = append(res, SettingDifference{Key: d.key, Methods: d.methods, Values: d.values})
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].Key < res[j].Key })
	return res
}
