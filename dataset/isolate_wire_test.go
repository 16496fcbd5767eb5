package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestFloatsWireRoundTrip: nil, empty, short and longer-than-a-chunk
// arrays survive writeFloats/readFloats exactly, nil and empty staying
// distinct; a length that claims more values than the stream holds is an
// error naming the claim, not a huge allocation.
func TestFloatsWireRoundTrip(t *testing.T) {
	long := make([]float32, 1<<20+3)
	for i := range long {
		long[i] = float32(i) * 0.5
	}
	for _, x := range [][]float32{nil, {}, {1, -2.5, 3e30}, long} {
		var b bytes.Buffer
		if err := writeFloats(&b, x); err != nil {
			t.Fatal(err)
		}
		got, err := readFloats(&b)
		if err != nil {
			t.Fatalf("len %d: %v", len(x), err)
		}
		if (got == nil) != (x == nil) || !reflect.DeepEqual(got, x) && len(x) > 0 {
			t.Errorf("len %d (nil %v): read back len %d (nil %v)", len(x), x == nil, len(got), got == nil)
		}
		if b.Len() != 0 {
			t.Errorf("len %d: %d bytes left unread", len(x), b.Len())
		}
	}
	var b bytes.Buffer
	b.Write(binary.AppendUvarint(nil, 1<<40+1)) // claims 2^40 values
	b.Write(make([]byte, 12))                   // holds 3
	if _, err := readFloats(&b); err == nil || !strings.Contains(err.Error(), "array of 1099511627776 values") {
		t.Errorf("a damaged length: got %v", err)
	}
}

// TestChildTimeout: the option wins; otherwise one minute plus one second
// per whole 2 MiB of the file, and one minute for a file that is absent.
func TestChildTimeout(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.hdf5")
	if err := os.WriteFile(p, make([]byte, 5<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := childTimeout(ReadOptions{}, p); got != time.Minute+2*time.Second {
		t.Errorf("5 MiB file: %v, want 1m2s", got)
	}
	if got := childTimeout(ReadOptions{}, p+".absent"); got != time.Minute {
		t.Errorf("absent file: %v, want 1m", got)
	}
	if got := childTimeout(ReadOptions{Timeout: 3 * time.Second}, p); got != 3*time.Second {
		t.Errorf("with Timeout: %v, want 3s", got)
	}
}

// TestFixKeys: gob drops empty slices, so a scalar's shape comes back nil
// from the worker; fixKeys restores [] (JSON "[]", as in-process) and
// leaves other shapes alone.
func TestFixKeys(t *testing.T) {
	keys := []Key{{Name: "s"}, {Name: "v", Shape: []int{3}}}
	fixKeys(keys)
	if keys[0].Shape == nil || len(keys[0].Shape) != 0 || !reflect.DeepEqual(keys[1].Shape, []int{3}) {
		t.Errorf("fixKeys: %+v", keys)
	}
}

// TestNewBatchSizes: every buffer of a batch of 5 has its row count times
// its width, with widths that differ from one another.
func TestNewBatchSizes(t *testing.T) {
	b := NewBatch(5, 3, 2)
	if len(b.Obs) != 15 || len(b.NextObs) != 15 || len(b.Act) != 10 || len(b.Rew) != 5 || len(b.Done) != 5 || len(b.Idx) != 5 {
		t.Errorf("NewBatch(5, 3, 2): obs %d next %d act %d rew %d done %d idx %d",
			len(b.Obs), len(b.NextObs), len(b.Act), len(b.Rew), len(b.Done), len(b.Idx))
	}
}

// TestReadMinariOneStepEpisodes reads a Minari file with 2-D actions whose
// first episodes have one step each (two observation rows), the last two, checks the values
// row by row and that a clean read records no dropped_invalid.
func TestReadMinariOneStepEpisodes(t *testing.T) {
	needH5py(t)
	dir := filepath.Join(t.TempDir(), "toy")
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	py(t, "-c", `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1] + "/data/main_data.hdf5", "w") as f:
    for i in range(2):
        g = f.create_group("episode_%d" % i)
        g["observations"] = np.array([[i, 10 + i], [20 + i, 30 + i]], np.float32)
        g["actions"] = np.array([[i + 0.5, -i - 0.5]], np.float32)
        g["rewards"] = np.array([i * 2.0])
        g["terminations"] = np.array([i == 1])
        g["truncations"] = np.array([i != 1])
    g = f.create_group("episode_2")
    g["observations"] = np.array([[2, 12], [22, 32], [42, 52]], np.float32)
    g["actions"] = np.array([[2.5, -2.5], [3.5, -3.5]], np.float32)
    g["rewards"] = np.array([4.0, 5.0])
    g["terminations"] = np.zeros(2, bool)
    g["truncations"] = np.array([False, True])
`, dir)
	d, err := ReadMinari(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Dataset{ObsDim: 2, ActDim: 2,
		Observations:     []float32{0, 10, 1, 11, 2, 12, 22, 32},
		NextObservations: []float32{20, 30, 21, 31, 22, 32, 42, 52},
		Actions:          []float32{0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5},
		Rewards:          []float32{0, 2, 4, 5},
		Terminals:        []float32{0, 1, 0, 0},
		Timeouts:         []float32{1, 0, 0, 1},
		Meta:             d.Meta,
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got  %+v\nwant %+v", d, want)
	}
	if v, ok := d.Meta["dropped_invalid"]; ok {
		t.Errorf("a clean read records dropped_invalid = %q", v)
	}
}
