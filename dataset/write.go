package dataset

import (
	"fmt"
	"sort"
	"strings"

	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/hdf5"
	"github.com/koopq/koopq/internal/version"
)

// WriteOption configures WriteD4RL.
type WriteOption func(*writeConfig)

type writeConfig struct {
	gzip    int
	shuffle bool
	chunk   int
	infos   map[string]Array
}

// WithGzip sets the deflate level (1..9; 0 stores uncompressed and
// contiguous). Default 4, h5py's level for compression="gzip".
func WithGzip(level int) WriteOption { return func(c *writeConfig) { c.gzip = level } }

// WithShuffle switches the byte-shuffle filter (default on; h5py reads it).
func WithShuffle(on bool) WriteOption { return func(c *writeConfig) { c.shuffle = on } }

// WithChunkRows sets the rows per chunk (default: about 256 KiB per chunk).
func WithChunkRows(n int) WriteOption { return func(c *writeConfig) { c.chunk = n } }

// WithInfo adds infos/<name> (e.g. "qpos" [N, nq], "qvel" [N, nv],
// "action_log_probs" [N]); its first dimension must be N.
func WithInfo(name string, a Array) WriteOption {
	return func(c *writeConfig) {
		if c.infos == nil {
			c.infos = map[string]Array{}
		}
		c.infos[name] = a
	}
}

// Version returns koopq's version as recorded in metadata/koopq_version:
// "<module>+<commit[:12]>[-dirty]" (internal/version), e.g.
// "devel+b6fac10892fb"; "devel" when neither the build nor git can tell.
func Version() string { return version.Get().String() }

// WriteD4RL writes d in the D4RL layout that h5py users expect:
// observations [N, ObsDim], actions [N, ActDim], rewards [N],
// next_observations [N, ObsDim] as float32; terminals, timeouts [N] as
// h5py bool; infos/* from WithInfo; metadata/<key> as UTF-8 strings for
// every d.Meta entry (env, policy, seed, ...) plus metadata/koopq_version.
// Arrays are chunked with gzip and shuffle by default. Rows should be in
// episode order, so that d4rl-style readers (s' = observations[i+1]) work.
//
// d is validated first. The file is written atomically (internal/atomicfile:
// a temporary file in the same directory, synced and renamed over path), so
// readers never see half a file.
func WriteD4RL(path string, d *Dataset, opts ...WriteOption) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	cfg := writeConfig{gzip: 4, shuffle: true}
	for _, o := range opts {
		o(&cfg)
	}
	n := d.Len()
	for name, a := range cfg.infos {
		if len(a.Shape) == 0 || a.Shape[0] != n || shapeLen(a.Shape) != len(a.Data) || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("write %s: info %q has shape %v and %d values, want %d rows", path, name, a.Shape, len(a.Data), n)
		}
	}
	// libhdf5 opens the file by name: atomicfile hands it a temporary path
	// beside path, then syncs that file and renames it over path.
	if err := atomicfile.WithTempPath(path, func(tmp string) error { return writeD4RL(tmp, d, n, cfg) }, nil); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeD4RL writes the file of WriteD4RL at tmp, whose name is only a
// temporary one; d and cfg are already checked.
func writeD4RL(tmp string, d *Dataset, n int, cfg writeConfig) error {
	f, err := hdf5.Create(tmp)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
	}()
	wo := func(width int) *hdf5.WriteOptions {
		if cfg.gzip <= 0 && !cfg.shuffle && cfg.chunk <= 0 {
			return nil
		}
		o := &hdf5.WriteOptions{Gzip: cfg.gzip, Shuffle: cfg.shuffle}
		if cfg.chunk > 0 {
			o.Chunk = []int{cfg.chunk}
			if width > 0 {
				o.Chunk = append(o.Chunk, width)
			}
		}
		return o
	}
	flags := func(x []float32) []bool {
		b := make([]bool, len(x))
		for i, v := range x {
			b[i] = v != 0
		}
		return b
	}
	steps := []func() error{
		func() error {
			return f.WriteFloat32("observations", d.Observations, []int{n, d.ObsDim}, wo(d.ObsDim))
		},
		func() error { return f.WriteFloat32("actions", d.Actions, []int{n, d.ActDim}, wo(d.ActDim)) },
		func() error { return f.WriteFloat32("rewards", d.Rewards, []int{n}, wo(0)) },
		func() error {
			return f.WriteFloat32("next_observations", d.NextObservations, []int{n, d.ObsDim}, wo(d.ObsDim))
		},
		func() error { return f.WriteBool("terminals", flags(d.Terminals), []int{n}, wo(0)) },
		func() error { return f.WriteBool("timeouts", flags(d.Timeouts), []int{n}, wo(0)) },
	}
	infoNames := make([]string, 0, len(cfg.infos))
	for name := range cfg.infos {
		infoNames = append(infoNames, name)
	}
	sort.Strings(infoNames)
	for _, name := range infoNames {
		a := cfg.infos[name]
		w := 0
		if len(a.Shape) == 2 {
			w = a.Shape[1]
		}
		o := wo(w)
		if o != nil && len(a.Shape) > 2 {
			o.Chunk = nil
		}
		steps = append(steps, func() error { return f.WriteFloat32("infos/"+name, a.Data, a.Shape, o) })
	}
	meta := map[string]string{}
	for k, v := range d.Meta {
		if k == "source" || k == "" {
			continue // where it was read from, not provenance of the data
		}
		meta[strings.ReplaceAll(k, "/", "_")] = v
	}
	if _, ok := meta["koopq_version"]; !ok {
		meta["koopq_version"] = Version()
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		steps = append(steps, func() error { return f.WriteString("metadata/"+k, meta[k]) })
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	closed = true
	return f.Close()
}
