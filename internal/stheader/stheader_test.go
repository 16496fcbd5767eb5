package stheader

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// file writes a safetensors-layout file: the 8-byte length of header, the
// header, then data.
func file(t *testing.T, header string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.safetensors")
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(append(b, header...), data...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A well-formed header gives the tensor entries without "__metadata__",
// the metadata and the data length; Open leaves the file at the data.
func TestRead(t *testing.T) {
	p := file(t, `{"__metadata__":{"state":"{\"steps\":5000}"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8))
	h, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Entries["__metadata__"]; ok || len(h.Entries) != 1 || h.Entries["w"] == nil {
		t.Errorf("entries %v", h.Entries)
	}
	if h.Meta["state"] != `{"steps":5000}` || h.DataLen != 8 {
		t.Errorf("meta %v, data length %d", h.Meta, h.DataLen)
	}
	f, _, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rest, err := f.Seek(0, 1)
	if err != nil || rest != 8+int64(len(`{"__metadata__":{"state":"{\"steps\":5000}"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`)) {
		t.Errorf("Open left the file at %d (%v), want the first data byte", rest, err)
	}
	if h, err := Read(file(t, `{}`, nil)); err != nil || len(h.Meta) != 0 || h.Meta == nil {
		t.Errorf("no metadata: %+v %v", h, err)
	}
}

// Malformed files give an error that names the problem, never a panic.
func TestReadMalformed(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte{1, 2, 3}, 0o644)
	long := filepath.Join(t.TempDir(), "long")
	os.WriteFile(long, binary.LittleEndian.AppendUint64(nil, 1<<40), 0o644)
	for _, c := range []struct{ path, want string }{
		{short, "too short for a header"},
		{long, "exceeds file size"},
		{file(t, `{"a":`, nil), "bad header JSON"},
		{file(t, `{"__metadata__":{"state":5}}`, nil), "bad metadata"},
		{t.TempDir(), "is a directory"},
		{filepath.Join(t.TempDir(), "missing"), "no such file"},
	} {
		if _, err := Read(c.path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want an error naming it with %q", c.path, err, c.want)
		}
	}
}
