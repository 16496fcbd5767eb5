package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/koopq/koopq/internal/hdf5"
)

// FuzzReadD4RL feeds corrupted files to the readers: they must return
// errors, never panic or crash, and whatever they accept must validate.
// Seeds live in testdata/fuzz/FuzzReadD4RL (koopq- and h5py-written files,
// regenerate with KOOPQ_WRITE_FUZZ_SEEDS=1 go test -run TestWriteFuzzSeeds).
// Run: go test -run '^$' -fuzz FuzzReadD4RL -fuzztime 3m ./dataset/
func FuzzReadD4RL(f *testing.F) {
	hdf5.SkipWithoutIsolation(f, "the seed corpus and fuzzed inputs include files that crash or hang libhdf5")
	f.Add([]byte{})
	f.Add([]byte("\x89HDF\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.hdf5")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, o := range []ReadOptions{{}, {UseNextObservations: true}, {TerminateOnEnd: true, DropInvalid: true, Infos: true, MaxEpisodeSteps: 3}} {
			d, err := ReadD4RL(path, o)
			if err == nil {
				if verr := d.Validate(); verr != nil {
					t.Errorf("ReadD4RL(%+v) accepted a dataset that does not validate: %v", o, verr)
				}
			}
		}
		if in, err := Inspect(path, ReadOptions{DropInvalid: true}); err == nil {
			if in.Conversion.Kept <= 0 {
				t.Errorf("Inspect accepted a file with no transitions: %+v", in)
			}
		}
		_, _ = ReadMinari(path, ReadOptions{DropInvalid: true})
	})
}

// TestWriteFuzzSeeds (re)writes the committed seed corpus when
// KOOPQ_WRITE_FUZZ_SEEDS=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("KOOPQ_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set KOOPQ_WRITE_FUZZ_SEEDS=1 to regenerate testdata/fuzz/FuzzReadD4RL")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzReadD4RL")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(name, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", name, len(b))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	d := toyDataset(6)
	p := filepath.Join(tmp, "plain.hdf5")
	if err := WriteD4RL(p, d, WithGzip(0), WithShuffle(false)); err != nil {
		t.Fatal(err)
	}
	save("koopq-plain", p)
	p = filepath.Join(tmp, "gzip.hdf5")
	if err := WriteD4RL(p, d, WithChunkRows(4), WithInfo("qpos", Array{Data: make([]float32, 12), Shape: []int{6, 2}})); err != nil {
		t.Fatal(err)
	}
	save("koopq-gzip-shuffle", p)
	save("h5py-uint8-terminals", fixture(t, "uint8", false, false, ""))
	save("h5py-float-terminals-nan", fixture(t, "float32", false, true, "nan"))
	dirM := minariFixture(t, "")
	save("h5py-minari", filepath.Join(dirM, "data", "main_data.hdf5"))
}

// TestLibhdf5CrasherIsAnError reads a file that makes libhdf5 1.10 fault
// (an object header that makes H5Oopen copy out of bounds, found by
// FuzzReadD4RL): in the default isolated mode every reader returns an
// error instead of taking the process down.
func TestLibhdf5CrasherIsAnError(t *testing.T) {
	hdf5.SkipWithoutIsolation(t, "the file makes libhdf5 fault")
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzReadD4RL", "regress-libhdf5-oh-memcpy"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		t.Fatalf("unexpected corpus file header %q", lines[0])
	}
	lit := strings.TrimSpace(lines[1])
	lit = strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")")
	data, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("decoding the corpus entry: %v", err)
	}
	path := filepath.Join(t.TempDir(), "crasher.hdf5")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadD4RL(path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadD4RL: got %v, want an error naming the file", err)
	}
	if _, err := Inspect(path, ReadOptions{}); err == nil {
		t.Error("Inspect accepted a file that crashes libhdf5")
	}
	if _, err := ReadMinari(path, ReadOptions{}); err == nil {
		t.Error("ReadMinari accepted a file that crashes libhdf5")
	}
}
