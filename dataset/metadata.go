package dataset

import (
	"encoding/gob"
	"io"
)

// Metadata returns the metadata a full read of path would put in
// Dataset.Meta (metadata/* scalars and root attributes of a D4RL file;
// root attributes and metadata.json's entries of a Minari dataset; plus
// "source", the HDF5 file read) without reading the transitions, so that
// a caller can check what a file says it is (its recorded env, its
// collector's version) in milliseconds before committing to a run.
// D4RL and Minari are told apart as Read does (Format). Unless
// opts.InProcess is set, libhdf5 parses the file in a child process (see
// ReadOptions.InProcess); the other options are ignored.
func Metadata(path string, opts ReadOptions) (map[string]string, error) {
	format, err := Format(path, opts)
	if err != nil {
		return nil, err
	}
	if !isolated(opts) {
		return metadata(path, format)
	}
	h5 := path
	if format == "minari" {
		if h5, _, err = MinariFiles(path); err != nil {
			return nil, err
		}
	}
	if err := precheckH5(h5); err != nil {
		return nil, err
	}
	var meta map[string]string
	err = runIsolated(workerMeta, path, h5, opts, func(rd io.Reader) error {
		return gob.NewDecoder(rd).Decode(&meta)
	})
	if err != nil {
		return nil, err
	}
	return nonNilMap(meta), nil
}

// metadata is Metadata in this process, for a file of the given format.
func metadata(path, format string) (map[string]string, error) {
	if format == "minari" {
		h5, metaJSON, err := MinariFiles(path)
		if err != nil {
			return nil, err
		}
		f, err := openH5(h5)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		meta := readMeta(h5, f, nil, "")
		if metaJSON != "" {
			if err := readMinariMeta(metaJSON, meta); err != nil {
				return nil, err
			}
		}
		meta["source"] = h5
		return meta, nil
	}
	f, err := openH5(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys, err := listKeys(path, f)
	if err != nil {
		return nil, err
	}
	meta := readMeta(path, f, keys, "metadata/")
	meta["source"] = path
	return meta, nil
}
