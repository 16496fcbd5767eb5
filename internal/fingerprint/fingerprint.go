// Package fingerprint names koopq's input files by content: the sha256 of a
// dataset, Koopman model or policy file (or of every file of a Minari
// dataset directory), so that a run, a sweep and a report can tell whether
// two runs read the same inputs and refuse a resume or a cell that mixes
// different ones. It reads only regular files (a FIFO or device in place
// of an input is an error, never a hang).
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// File is the fingerprint of one input as a run records it.
type File struct {
	Path   string `json:"path"`   // as given (absolute in run configs)
	SHA256 string `json:"sha256"` // hex sha256 of the content (see Of)
	Bytes  int64  `json:"bytes"`  // total size in bytes
}

// Short is the first 12 hex digits of the digest, for messages.
func (f File) Short() string { return Short(f.SHA256) }

// Short abbreviates a hex digest to 12 digits for messages.
func Short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// Of fingerprints path. A regular file is hashed as it is (its sha256 is
// what `sha256sum` prints). A directory (a Minari dataset) is hashed as
// the sequence, in lexical order of their slash-separated relative paths,
// of every regular file's path, a NUL byte, its size and content.
// Anything else (FIFO, device, socket) is an error.
func Of(path string) (File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return File{}, fmt.Errorf("fingerprint: %w", err)
	}
	if st.IsDir() {
		return ofDir(path)
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("fingerprint %s: not a regular file (%s)", path, st.Mode().Type())
	}
	h := sha256.New()
	n, err := hashFile(h, path)
	if err != nil {
		return File{}, err
	}
	return File{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

func ofDir(root string) (File, error) {
	var rels []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rels = append(rels, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return File{}, fmt.Errorf("fingerprint %s: %w", root, err)
	}
	sort.Strings(rels)
	h := sha256.New()
	var total int64
	for _, rel := range rels {
		p := filepath.Join(root, filepath.FromSlash(rel))
		st, err := os.Stat(p)
		if err != nil {
			return File{}, fmt.Errorf("fingerprint: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, st.Size())
		n, err := hashFile(h, p)
		if err != nil {
			return File{}, err
		}
		total += n
	}
	return File{Path: root, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: total}, nil
}

func hashFile(w io.Writer, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("fingerprint: %w", err)
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("fingerprint %s: %w", path, err)
	}
	return n, nil
}
