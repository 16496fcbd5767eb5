package nn

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/koopq/koopq/internal/stheader"
)

// SaveSafetensors writes tensors (name → param values and shape) plus string
// metadata in the safetensors format: an 8-byte little-endian header length,
// a JSON header, then the raw little-endian float32 data. The file is written
// to a temporary name in the same directory and renamed into place, so a
// crash never leaves a half-written checkpoint.
func SaveSafetensors(path string, ps []*Param, meta map[string]string) error {
	type entry struct {
		Dtype   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]any{}
	if len(meta) > 0 {
		header["__metadata__"] = meta
	}
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
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		tmp.Close()
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	buf := make([]byte, 8, 8+len(hb))
	binary.LittleEndian.PutUint64(buf, uint64(len(hb)))
	buf = append(buf, hb...)
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	for _, p := range ps {
		b := make([]byte, 4*len(p.Data))
		for i, v := range p.Data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		if _, err := tmp.Write(b); err != nil {
			tmp.Close()
			return fmt.Errorf("safetensors %s: %w", path, err)
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
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
	body := make([]byte, dataLen)
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, nil, fmt.Errorf("safetensors %s: reading data: %w", path, err)
	}
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
