package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/koopq/koopq/internal/hdf5"
)

// MinariFiles resolves a Minari dataset location: either the dataset
// directory (holding data/main_data.hdf5 and metadata.json) or the HDF5
// file itself. metaJSON is "" when there is no metadata.json.
func MinariFiles(path string) (h5, metaJSON string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", statErr(path, err)
	}
	if st.IsDir() {
		h5 = filepath.Join(path, "data", "main_data.hdf5")
		if _, err := os.Stat(h5); err != nil {
			return "", "", fmt.Errorf("dataset %s: directory has no data/main_data.hdf5 (not a Minari HDF5 dataset)", path)
		}
		metaJSON = filepath.Join(path, "metadata.json")
	} else {
		h5 = path
		metaJSON = filepath.Join(filepath.Dir(filepath.Dir(path)), "metadata.json")
	}
	if _, err := os.Stat(metaJSON); err != nil {
		metaJSON = ""
	}
	return h5, metaJSON, nil
}

// minariEpisodes returns the episode_<id> groups of f sorted by id.
func minariEpisodes(f *hdf5.File) ([]string, error) {
	names, err := f.Members()
	if err != nil {
		return nil, err
	}
	type ep struct {
		name string
		id   int
	}
	var eps []ep
	for _, n := range names {
		if !strings.HasPrefix(n, "episode_") {
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(n, "episode_"))
		if err != nil || f.Kind(n) != hdf5.KindGroup {
			continue
		}
		eps = append(eps, ep{n, id})
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].id < eps[j].id })
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.name
	}
	return out, nil
}

// readMinariMeta flattens metadata.json's top level into strings (nested
// values stay JSON).
func readMinariMeta(file string, meta map[string]string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("dataset %s: %v", file, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("dataset %s: metadata.json is not a JSON object: %v", file, err)
	}
	for k, v := range m {
		switch x := v.(type) {
		case string:
			meta[k] = x
		case float64:
			meta[k] = strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			meta[k] = strconv.FormatBool(x)
		case nil:
			meta[k] = "null"
		default:
			b, _ := json.Marshal(x)
			meta[k] = string(b)
		}
	}
	return nil
}

// LoadMinari reads a Minari HDF5 dataset (see MinariFiles for path) and
// concatenates its episodes into transitions: for an episode with T steps,
// observations has T+1 rows, and step t gives (obs[t], actions[t],
// rewards[t], obs[t+1], terminations[t], truncations[t]) — terminations
// become Terminals, truncations Timeouts; the last kept step of an episode
// group that is not terminal is marked in Timeouts even when the file sets
// no flag there, so each group stays its own episode. Observation spaces must be flat
// (Box or Discrete); dict observations are an error. Meta holds the root
// attributes, metadata.json's top-level entries and "source".
// NaN/Inf are an error, or dropped and counted with opts.DropInvalid; the
// InProcess and Timeout choose how libhdf5 is run (see ReadOptions); the
// other options concern the D4RL layout and are ignored.
func LoadMinari(path string, opts ReadOptions) (*Dataset, Conversion, error) {
	d, conv, _, err := loadMinari(path, opts)
	return d, conv, err
}

// loadMinari is LoadMinari that also returns the stored episodes (one per
// episode group, returns over all its steps) and the keys of the file.
// Unless opts.InProcess is set, libhdf5 parses the file in a child process.
func loadMinari(path string, opts ReadOptions) (*Dataset, Conversion, minariExtra, error) {
	if isolated(opts) {
		return loadMinariIsolated(path, opts)
	}
	return loadMinariInProcess(path, opts)
}

// loadMinariInProcess is loadMinari in this process.
func loadMinariInProcess(path string, opts ReadOptions) (*Dataset, Conversion, minariExtra, error) {
	var conv Conversion
	var ex minariExtra
	h5, metaJSON, err := MinariFiles(path)
	if err != nil {
		return nil, conv, ex, err
	}
	f, err := openH5(h5)
	if err != nil {
		return nil, conv, ex, err
	}
	defer f.Close()
	eps, err := minariEpisodes(f)
	if err != nil {
		return nil, conv, ex, wrapH5(h5, "", err)
	}
	if len(eps) == 0 {
		return nil, conv, ex, errf(h5, "", "no episode_<id> groups: not a Minari dataset")
	}
	d := &Dataset{Meta: readMeta(h5, f, nil, "")}
	if metaJSON != "" {
		if err := readMinariMeta(metaJSON, d.Meta); err != nil {
			return nil, conv, ex, err
		}
	}
	d.Meta["source"] = h5
	ex.h5 = h5
	if ex.keys, err = listKeys(h5, f); err != nil {
		return nil, conv, ex, err
	}
	for _, ep := range eps {
		key := func(k string) string { return ep + "/" + k }
		if f.Kind(key("observations")) == hdf5.KindGroup {
			return nil, conv, ex, errf(h5, key("observations"), "is a group (dict observation space), which koopq does not support")
		}
		obs, rows, od, err := readMatrix(h5, f, key("observations"), -1, true)
		if err != nil {
			return nil, conv, ex, err
		}
		T := rows - 1
		if T < 1 {
			return nil, conv, ex, errf(h5, key("observations"), "has %d rows, want T+1 ≥ 2", rows)
		}
		act, _, ad, err := readMatrix(h5, f, key("actions"), T, true)
		if err != nil {
			return nil, conv, ex, fixRows(err, T)
		}
		rew, err := readVector(h5, f, key("rewards"), T, false)
		if err != nil {
			return nil, conv, ex, fixRows(err, T)
		}
		term, err := readVector(h5, f, key("terminations"), T, true)
		if err != nil {
			return nil, conv, ex, fixRows(err, T)
		}
		trunc, err := readVector(h5, f, key("truncations"), T, true)
		if err != nil {
			return nil, conv, ex, fixRows(err, T)
		}
		e := Episode{Start: conv.Rows, Len: T}
		for t := 0; t < T; t++ {
			if finite(rew[t : t+1]) { // a step --drop-invalid drops adds nothing
				e.Return += float64(rew[t])
			}
		}
		e.Terminal = term[T-1] != 0
		e.Timeout = !e.Terminal && trunc[T-1] != 0
		ex.episodes = append(ex.episodes, e)
		if d.ObsDim == 0 {
			d.ObsDim, d.ActDim = od, ad
			d.Observations = make([]float32, 0, T*od*len(eps))
			d.NextObservations = make([]float32, 0, T*od*len(eps))
		} else if od != d.ObsDim || ad != d.ActDim {
			return nil, conv, ex, errf(h5, ep, "has obs/action dims %d/%d, earlier episodes %d/%d", od, ad, d.ObsDim, d.ActDim)
		}
		kept := len(d.Rewards)
		for t := 0; t < T; t++ {
			conv.Rows++
			bad := ""
			switch {
			case !finite(obs[t*od : (t+2)*od]):
				bad = "observations"
			case !finite(act[t*ad : (t+1)*ad]):
				bad = "actions"
			case !finite(rew[t : t+1]):
				bad = "rewards"
			case math.IsNaN(float64(term[t])):
				bad = "terminations"
			case math.IsNaN(float64(trunc[t])):
				bad = "truncations"
			}
			if bad != "" {
				if !opts.DropInvalid {
					return nil, conv, ex, errf(h5, key(bad), "step %d holds NaN or Inf; use --drop-invalid (ReadOptions.DropInvalid) to drop such transitions", t)
				}
				conv.DroppedInvalid++
				continue
			}
			d.Observations = append(d.Observations, obs[t*od:(t+1)*od]...)
			d.NextObservations = append(d.NextObservations, obs[(t+1)*od:(t+2)*od]...)
			d.Actions = append(d.Actions, act[t*ad:(t+1)*ad]...)
			d.Rewards = append(d.Rewards, rew[t])
			d.Terminals = append(d.Terminals, term[t])
			d.Timeouts = append(d.Timeouts, trunc[t])
		}
		// The episode group ends here whatever its last step's flags say
		// (none set, or its flagged step dropped): unless its last kept
		// transition is terminal, mark it as cut, so that consecutive
		// episodes do not run together.
		if k := len(d.Rewards) - 1; k >= kept && d.Terminals[k] == 0 {
			d.Timeouts[k] = 1
		}
	}
	conv.Kept = d.Len()
	if conv.DroppedInvalid > 0 {
		d.Meta["dropped_invalid"] = strconv.Itoa(conv.DroppedInvalid)
	}
	if conv.Kept == 0 {
		return nil, conv, ex, errf(h5, "", "no transitions left (%d steps, %d invalid dropped)", conv.Rows, conv.DroppedInvalid)
	}
	return d, conv, ex, nil
}

type minariExtra struct {
	h5       string
	episodes []Episode
	keys     []Key
}

// fixRows rewrites readMatrix/readVector's "like observations" wording for
// Minari, where per-step keys have T rows and observations T+1.
func fixRows(err error, T int) error {
	return fmt.Errorf("%s", strings.Replace(err.Error(), "like observations", fmt.Sprintf("(T = %d: observations has T+1 rows)", T), 1))
}

// ReadMinari reads a Minari HDF5 dataset into transitions; see LoadMinari.
func ReadMinari(path string, opts ReadOptions) (*Dataset, error) {
	d, _, err := LoadMinari(path, opts)
	return d, err
}
