package nn

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadSafetensors feeds corrupted checkpoints to LoadSafetensors: it
// must return an error or tensors whose data matches their shapes, never
// panic. Seeds: a valid file, its truncations and a few hand-made headers.
// Run: go test -run '^$' -fuzz FuzzLoadSafetensors -fuzztime 2m ./nn/
func FuzzLoadSafetensors(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewMLP("q", []int{3, 4, 1}, ReLU, Identity, rng)
	path := filepath.Join(f.TempDir(), "seed.safetensors")
	if err := SaveSafetensors(path, m.Params(), map[string]string{"seed": "1"}); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(valid[:9])
	f.Add([]byte{})
	for _, h := range []string{
		`{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`,
		`{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`,
		`{"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`,
		`{"w":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`,
		`{"__metadata__":{"a":1}}`,
		`[1,2,3]`,
	} {
		b := make([]byte, 8, 8+len(h)+8)
		b[0] = byte(len(h))
		b = append(b, h...)
		b = append(b, 0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x3f) // NaN, 1.0
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.safetensors")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ts, _, err := LoadSafetensors(p)
		if err != nil {
			return
		}
		for name, tn := range ts {
			n := 1
			for _, s := range tn.Shape {
				n *= s
			}
			if n != len(tn.Data) {
				t.Fatalf("tensor %q: shape %v but %d elements", name, tn.Shape, len(tn.Data))
			}
			for i, v := range tn.Data {
				if v != v || v-v != 0 {
					t.Fatalf("tensor %q element %d is %v: non-finite values must be an error", name, i, v)
				}
			}
		}
		_ = fmt.Sprint(ts)
	})
}
