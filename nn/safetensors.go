package nn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/stheader"
)

// ChecksumKey is the metadata key under which SaveSafetensors records the
// sha256 (64 hex digits) of the whole file, computed with the key's value
// replaced by 64 zeros. LoadSafetensors verifies it, so one flipped byte
// anywhere in a checkpoint, policy or Koopman model (header or tensors) is
// an error instead of different numbers. Files written before koopq
// recorded it have no key and are read unverified.
const ChecksumKey = "koopq.sha256"

// checksumPlaceholder stands for the digest while the file is hashed.
var checksumPlaceholder = bytes.Repeat([]byte{'0'}, 64)

// SaveSafetensors writes tensors (name → param values and shape) plus string
// metadata in the safetensors format: an 8-byte little-endian header length,
// a JSON header, then the raw little-endian float32 data. The metadata gets
// the file's checksum (ChecksumKey; a caller's value under that key is
// replaced). The file is written atomically (internal/atomicfile: a
// temporary name in the same directory, synced and renamed into place), so
// a crash never leaves a half-written checkpoint.
func SaveSafetensors(path string, ps []*Param, meta map[string]string) error {
	type entry struct {
		Dtype   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]any{}
	md := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		md[k] = v
	}
	md[ChecksumKey] = string(checksumPlaceholder)
	header["__metadata__"] = md
	var off int64
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Name] {
			return fmt.Errorf("safetensors %s: duplicate tensor name %q", path, p.Name)
		}
		seen[p.Name] = true
		n := int64(len(p.Data)) * 4
		header[p.Name] = entry{Dtype: "F32", Shape: p.Shape, Offsets: [2]int64{off, off + n}}
		off += n
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hb)%8 != 0 { // the format pads the header with spaces to 8-byte alignment
		hb = append(hb, ' ')
	}
	buf := make([]byte, 8, 8+len(hb)+int(off))
	binary.LittleEndian.PutUint64(buf, uint64(len(hb)))
	buf = append(buf, hb...)
	for _, p := range ps {
		for _, v := range p.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	at := checksumAt(buf[8 : 8+len(hb)])
	if at < 0 {
		return fmt.Errorf("safetensors %s: checksum placeholder not found in the header", path)
	}
	sum := sha256.Sum256(buf)
	hex.Encode(buf[8+at:8+at+64], sum[:])
	if err := atomicfile.Write(path, buf, nil); err != nil {
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	return nil
}

// checksumAt returns the offset in the JSON header hb of the 64 characters
// of ChecksumKey's value, or -1 when the key is absent.
func checksumAt(hb []byte) int {
	key := []byte(`"` + ChecksumKey + `":"`)
	i := bytes.Index(hb, key)
	if i < 0 || i+len(key)+64 > len(hb) || hb[i+len(key)+64] != '"' {
		return -1
	}
	return i + len(key)
}

// verifyChecksum checks the file's recorded checksum (ChecksumKey) against
// its content; file is the whole file. A file without the key passes.
func verifyChecksum(path string, file []byte, meta map[string]string) error {
	want, ok := meta[ChecksumKey]
	if !ok {
		// A key one byte away from ChecksumKey is the checksum's own key
		// corrupted, not an old file.
		for k := range meta {
			k := strings.ReplaceAll(k, "\uFFFD", "?") // JSON decoding turns an invalid byte into U+FFFD
			if len(k) == len(ChecksumKey) && k != ChecksumKey {
				diff := 0
				for i := range len(k) {
					if k[i] != ChecksumKey[i] {
						diff++
					}
				}
				if diff == 1 {
					return fmt.Errorf("safetensors %s: metadata key %q is a corrupted %q: the file is corrupt", path, k, ChecksumKey)
				}
			}
		}
		return nil
	}
	hl := int(binary.LittleEndian.Uint64(file[:8]))
	at := checksumAt(file[8 : 8+hl])
	if at < 0 || len(want) != 64 {
		return fmt.Errorf("safetensors %s: malformed checksum %q: the file is corrupt", path, want)
	}
	work := bytes.Clone(file)
	copy(work[8+at:8+at+64], checksumPlaceholder)
	sum := sha256.Sum256(work)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("safetensors %s: checksum mismatch (recorded sha256 %s, content %s): the file is corrupt "+
			"(restore it from a copy, or make it again)", path, want[:12], got[:12])
	}
	return nil
}

// Tensor is one float32 tensor read from a safetensors file.
type Tensor struct {
	Shape []int
	Data  []float32
}

// LoadSafetensors reads every F32 tensor and the metadata of a safetensors file.
// Malformed or truncated files give an error naming the problem.
func LoadSafetensors(path string) (map[string]Tensor, map[string]string, error) {
	f, h, err := stheader.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	raw, meta, dataLen := h.Entries, h.Meta, h.DataLen
	out := map[string]Tensor{}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	file := make([]byte, start+dataLen)
	if _, err := f.ReadAt(file, 0); err != nil {
		return nil, nil, fmt.Errorf("safetensors %s: reading data: %w", path, err)
	}
	if err := verifyChecksum(path, file, meta); err != nil {
		return nil, nil, err
	}
	delete(meta, ChecksumKey) // callers see the metadata they saved
	body := file[start:]
	for _, name := range names {
		var e struct {
			Dtype   string  `json:"dtype"`
			Shape   []int   `json:"shape"`
			Offsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw[name], &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors %s: tensor %q: %w", path, name, err)
		}
		if e.Dtype != "F32" {
			return nil, nil, fmt.Errorf("safetensors %s: tensor %q has dtype %s, koopq reads F32 only", path, name, e.Dtype)
		}
		n := int64(1)
		for _, s := range e.Shape {
			if s < 0 {
				return nil, nil, fmt.Errorf("safetensors %s: tensor %q has negative shape %v", path, name, e.Shape)
			}
			if s > 0 && n > dataLen/4/int64(s) {
				return nil, nil, fmt.Errorf("safetensors %s: tensor %q shape %v needs more than the file's %d data bytes", path, name, e.Shape, dataLen)
			}
			n *= int64(s)
		}
		if len(e.Offsets) != 2 || e.Offsets[0] < 0 || e.Offsets[1] > dataLen || e.Offsets[1]-e.Offsets[0] != 4*n {
			return nil, nil, fmt.Errorf("safetensors %s: tensor %q offsets %v do not fit shape %v in %d data bytes", path, name, e.Offsets, e.Shape, dataLen)
		}
		t := Tensor{Shape: e.Shape, Data: make([]float32, n)}
		b := body[e.Offsets[0]:e.Offsets[1]]
		for i := range t.Data {
			v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("safetensors %s: tensor %q element %d is %v (a diverged or corrupt checkpoint)", path, name, i, v)
			}
			t.Data[i] = v
		}
		out[name] = t
	}
	return out, meta, nil
}

// AssignParams copies loaded tensors into ps by name, checking that every
// parameter is present with the right shape.
func AssignParams(ps []*Param, tensors map[string]Tensor) error {
	for _, p := range ps {
		t, ok := tensors[p.Name]
		if !ok {
			return fmt.Errorf("checkpoint lacks tensor %q", p.Name)
		}
		if fmt.Sprint(t.Shape) != fmt.Sprint(p.Shape) {
			return fmt.Errorf("checkpoint tensor %q has shape %v, model expects %v", p.Name, t.Shape, p.Shape)
		}
		copy(p.Data, t.Data)
	}
	return nil
}
