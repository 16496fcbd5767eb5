package nn

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func checksumFixture(t *testing.T) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.safetensors")
	ps := []*Param{{Name: "a", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}}, {Name: "b", Shape: []int{2}, Data: []float32{-1, 0.5}}}
	if err := SaveSafetensors(p, ps, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// Every single flipped byte of a saved file, in the length, the header
// (metadata, entries, the checksum itself, the padding) or the tensors, is
// refused on load: no corrupt file is read as a valid one.
func TestSafetensorsEveryFlippedByteIsRefused(t *testing.T) {
	p, orig := checksumFixture(t)
	ts, meta, err := LoadSafetensors(p)
	if err != nil {
		t.Fatal(err)
	}
	if meta["k"] != "v" || len(meta) != 1 {
		t.Fatalf("metadata %v, want exactly the saved {k: v}", meta)
	}
	if got := ts["a"].Data[5]; got != 6 {
		t.Fatalf("a[5] = %v", got)
	}
	for i := range orig {
		for _, mask := range []byte{0x01, 0x80} {
			b := append([]byte(nil), orig...)
			b[i] ^= mask
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := LoadSafetensors(p); err == nil {
				t.Fatalf("byte %d ^ %#x of %d: corrupt file loaded without error", i, mask, len(orig))
			}
		}
	}
}

// A tensor byte flipped in a file gives an error that says the file is
// corrupt (not a shape or JSON complaint).
func TestSafetensorsChecksumMismatchMessage(t *testing.T) {
	p, orig := checksumFixture(t)
	b := append([]byte(nil), orig...)
	b[len(b)-2] ^= 0x04 // inside tensor b: still a finite float
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadSafetensors(p)
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v, want a checksum mismatch naming the file", err)
	}
}

// Files written before koopq recorded checksums (no ChecksumKey) still load.
func TestSafetensorsWithoutChecksumLoads(t *testing.T) {
	hdr, _ := json.Marshal(map[string]any{"__metadata__": map[string]string{"x": "y"},
		"t": map[string]any{"dtype": "F32", "shape": []int{2}, "data_offsets": []int{0, 8}}})
	for len(hdr)%8 != 0 {
		hdr = append(hdr, ' ')
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	b = append(b, hdr...)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(1.5))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(-2))
	p := filepath.Join(t.TempDir(), "old.safetensors")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ts, meta, err := LoadSafetensors(p)
	if err != nil {
		t.Fatal(err)
	}
	if ts["t"].Data[1] != -2 || meta["x"] != "y" {
		t.Fatalf("got %v %v", ts, meta)
	}
}
