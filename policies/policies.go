// Package policies holds koopq's committed behaviour policies: the SAC
// actors (medium, expert) from which `koopq collect <env>-<kind>-v2`
// regenerates D4RL-style datasets without training. The files live in
// data/ with a manifest (env, role, SAC steps, seed, returns, sha256) and
// are embedded in the binary.
package policies

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed data
var files embed.FS

// Entry is one committed policy.
type Entry struct {
	Env         string  `json:"env"`               // environment name, e.g. "hopper"
	Role        string  `json:"role"`              // "medium" or "expert"
	File        string  `json:"file"`              // file name under data/
	SACSteps    int     `json:"sac_steps"`         // env steps of the SAC run when the actor was captured
	Seed        uint64  `json:"seed"`              // the SAC run's seed
	Return      float64 `json:"return"`            // mean deterministic (tanh μ) return at capture
	StochReturn float64 `json:"stochastic_return"` // mean stochastic return (as measured by the medium rule)
	SHA256      string  `json:"sha256"`            // of the file
	Made        string  `json:"made"`              // the command that made the SAC run
}

// Manifest returns the committed policies, sorted by env and role.
func Manifest() ([]Entry, error) { return manifestIn(files) }

func manifestIn(fsys fs.FS) ([]Entry, error) {
	b, err := fs.ReadFile(fsys, "data/manifest.json")
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	var es []Entry
	if err := json.Unmarshal(b, &es); err != nil {
		return nil, fmt.Errorf("policies: manifest.json: %w", err)
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].Env != es[j].Env {
			return es[i].Env < es[j].Env
		}
		return es[i].Role < es[j].Role
	})
	return es, nil
}

// Lookup returns the entry and file bytes of env's role policy, checking
// the file's sha256 against the manifest. The error lists what exists.
func Lookup(env, role string) (Entry, []byte, error) { return lookupIn(files, env, role) }

func lookupIn(fsys fs.FS, env, role string) (Entry, []byte, error) {
	es, err := manifestIn(fsys)
	if err != nil {
		return Entry{}, nil, err
	}
	var have []string
	for _, e := range es {
		if e.Env == env && e.Role == role {
			b, err := fs.ReadFile(fsys, "data/"+e.File)
			if err != nil {
				return e, nil, fmt.Errorf("policies: %s: %w", e.File, err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != e.SHA256 {
				return e, nil, fmt.Errorf("policies: %s has sha256 %s, manifest says %s", e.File, got, e.SHA256)
			}
			return e, b, nil
		}
		have = append(have, e.Env+"-"+e.Role)
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	return Entry{}, nil, fmt.Errorf("no committed %s policy for %s (committed: %s)", role, env, strings.Join(have, ", "))
}
