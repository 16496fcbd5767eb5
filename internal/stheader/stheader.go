// Package stheader reads the header of a safetensors file: an 8-byte
// little-endian length, then a JSON object of tensor entries and string
// metadata. nn.LoadSafetensors parses it before the tensors; sweep reads
// only it to learn a checkpoint's step without loading the weights.
package stheader

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/koopq/koopq/internal/regfile"
)

// maxHeader bounds the JSON header (100 MiB): a larger length is a corrupt
// file, not one to allocate for.
const maxHeader = 100 << 20

// Header is a parsed safetensors header.
type Header struct {
	// Entries maps each tensor name to its JSON entry (dtype, shape,
	// data_offsets); "__metadata__" is not among them.
	Entries map[string]json.RawMessage
	// Meta is the "__metadata__" object (empty when the file has none).
	Meta map[string]string
	// DataLen is the number of bytes after the header: the tensor data.
	DataLen int64
}

// Open opens path for reading and reads its header, leaving the file
// positioned at the first data byte. Errors name path and the problem
// ("file too short for a header", "header length … exceeds file size …",
// "bad header JSON", "bad metadata", "is a directory").
func Open(path string) (*os.File, Header, error) {
	// Regular files only: a named pipe would block the open forever.
	f, err := regfile.Open(path)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err // "no such file or directory", "too many levels of symbolic links", ...
		}
		if errors.Is(err, regfile.ErrDir) {
			return nil, Header{}, fmt.Errorf("safetensors %s: is a directory, want a .safetensors file", path)
		}
		return nil, Header{}, fmt.Errorf("safetensors %s: %w", path, err)
	}
	h, err := read(f, path)
	if err != nil {
		f.Close()
		return nil, Header{}, err
	}
	return f, h, nil
}

// Read reads only the header of the safetensors file at path.
func Read(path string) (Header, error) {
	f, h, err := Open(path)
	if err != nil {
		return Header{}, err
	}
	f.Close()
	return h, nil
}

func read(f *os.File, path string) (Header, error) {
	st, err := f.Stat()
	if err != nil {
		return Header{}, fmt.Errorf("safetensors %s: %w", path, err)
	}
	if st.IsDir() {
		return Header{}, fmt.Errorf("safetensors %s: is a directory, want a .safetensors file", path)
	}
	var lb [8]byte
	if _, err := io.ReadFull(f, lb[:]); err != nil {
		return Header{}, fmt.Errorf("safetensors %s: file too short for a header", path)
	}
	hl := binary.LittleEndian.Uint64(lb[:])
	if hl > uint64(st.Size())-8 || hl > maxHeader {
		return Header{}, fmt.Errorf("safetensors %s: header length %d exceeds file size %d", path, hl, st.Size())
	}
	hb := make([]byte, hl)
	if _, err := io.ReadFull(f, hb); err != nil {
		return Header{}, fmt.Errorf("safetensors %s: reading header: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hb, &raw); err != nil {
		return Header{}, fmt.Errorf("safetensors %s: bad header JSON: %w", path, err)
	}
	h := Header{Entries: raw, Meta: map[string]string{}, DataLen: st.Size() - 8 - int64(hl)}
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &h.Meta); err != nil {
			return Header{}, fmt.Errorf("safetensors %s: bad metadata: %w", path, err)
		}
		delete(raw, "__metadata__")
	}
	return h, nil
}
