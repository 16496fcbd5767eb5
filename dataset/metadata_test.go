package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMetadataIsWhatReadRecords: Metadata returns the Meta a full read
// gives (D4RL metadata/* scalars and Minari attributes and metadata.json),
// in this process and in a child process, and refuses what Read refuses.
func TestMetadataIsWhatReadRecords(t *testing.T) {
	d4rl := fixture(t, "bool", true, true, "")
	minari := minariFixture(t, "")
	for _, in := range []bool{true, false} {
		opts := ReadOptions{InProcess: in}
		for _, path := range []string{d4rl, minari} {
			d, err := Read(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Metadata(path, opts)
			if err != nil {
				t.Fatalf("InProcess %v: Metadata(%s): %v", in, path, err)
			}
			if !reflect.DeepEqual(got, d.Meta) {
				t.Errorf("InProcess %v: Metadata(%s) = %v, want Read's %v", in, path, got, d.Meta)
			}
		}
		if got, _ := Metadata(d4rl, opts); got["algorithm"] != "SAC" || got["iteration"] != "7" {
			t.Errorf("InProcess %v: D4RL metadata = %v, want algorithm SAC, iteration 7", in, got)
		}
		if got, _ := Metadata(minari, opts); !strings.Contains(got["env_spec"], "Toy-v5") {
			t.Errorf("InProcess %v: Minari metadata = %v, want env_spec naming Toy-v5", in, got)
		}
		bad := filepath.Join(t.TempDir(), "bad.hdf5")
		if err := os.WriteFile(bad, []byte("not hdf5"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Metadata(bad, opts); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("InProcess %v: Metadata of a non-HDF5 file: %v, want an error naming it", in, err)
		}
	}
}
