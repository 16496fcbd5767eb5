package nn

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafetensorsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	m := NewMLP("q", []int{4, 8, 1}, ReLU, Identity, rng)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := SaveSafetensors(path, m.Params(), map[string]string{"seed": "6"}); err != nil {
		t.Fatal(err)
	}
	ts, meta, err := LoadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta["seed"] != "6" {
		t.Fatalf("metadata %v", meta)
	}
	m2 := NewMLP("q", []int{4, 8, 1}, ReLU, Identity, rand.New(rand.NewPCG(9, 9)))
	if err := AssignParams(m2.Params(), ts); err != nil {
		t.Fatal(err)
	}
	for i, p := range m.Params() {
		for j := range p.Data {
			if p.Data[j] != m2.Params()[i].Data[j] {
				t.Fatalf("%s[%d] differs after round trip", p.Name, j)
			}
		}
	}
	// Wrong architecture is an error, not a silent partial load.
	m3 := NewMLP("q", []int{4, 9, 1}, ReLU, Identity, rng)
	if err := AssignParams(m3.Params(), ts); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Fatalf("want shape error, got %v", err)
	}
}

func TestSafetensorsCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "g.safetensors")
	rng := rand.New(rand.NewPCG(7, 7))
	if err := SaveSafetensors(good, NewMLP("q", []int{3, 4, 1}, ReLU, Identity, rng).Params(), nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	cases := map[string][]byte{
		"empty":     {},
		"short":     b[:5],
		"truncated": b[:len(b)-4],
		"hugehdr":   append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, b[8:]...),
		"badjson":   append(append([]byte{}, b[:8]...), []byte(strings.Repeat("x", len(b)-8))...),
	}
	for name, data := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		if _, _, err := LoadSafetensors(p); err == nil {
			t.Errorf("%s: expected an error", name)
		}
	}
}
