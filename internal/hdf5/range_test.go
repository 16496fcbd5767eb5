//go:build cgo && !nohdf5

package hdf5

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
)

// TestReadFloat32Range: a finite float64 beyond float32's range is a
// RangeError naming the first such element, while values stored as ±Inf
// (or NaN) come back unchanged for the caller's own NaN/Inf checks, and
// float32's largest value converts exactly.
func TestReadFloat32Range(t *testing.T) {
	path := filepath.Join(t.TempDir(), "range.h5")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	big := float64(math.MaxFloat32)
	for name, v := range map[string][]float64{
		"fits":     {1, -big, big, 0},
		"stored":   {1, math.Inf(1), math.NaN(), math.Inf(-1)},
		"overflow": {1, 2, math.Inf(1), -1e300, 1e39, 3},
	} {
		if err := f.WriteFloat64(name, v, []int{2, len(v) / 2}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	x, _, err := r.ReadFloat32("fits")
	if err != nil || x[1] != -math.MaxFloat32 || x[2] != math.MaxFloat32 {
		t.Errorf("fits: %v, %v", x, err)
	}
	x, _, err = r.ReadFloat32("stored")
	if err != nil || !math.IsInf(float64(x[1]), 1) || !math.IsNaN(float64(x[2])) || !math.IsInf(float64(x[3]), -1) {
		t.Errorf("stored: %v, %v", x, err)
	}
	_, _, err = r.ReadFloat32("overflow")
	var re *RangeError
	if !errors.As(err, &re) {
		t.Fatalf("overflow: got %v, want a *RangeError", err)
	}
	if re.Index != 3 || re.Value != -1e300 || re.Stored != "float64" || re.Want != "float32" {
		t.Errorf("overflow: %+v", re)
	}
}
