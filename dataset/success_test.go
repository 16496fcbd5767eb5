package dataset

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// Inspect counts the episodes with a success flag on any row and the
// flagged rows of a file that stores infos/success, and reports nothing of
// the kind for a file without it.
func TestInspectSuccessFraction(t *testing.T) {
	d := &Dataset{ObsDim: 1, ActDim: 1}
	for i := range 12 {
		d.Append([]float64{float64(i)}, []float64{0}, 1, []float64{float64(i + 1)}, false, i%4 == 3)
	}
	// Three episodes of four rows: the first reaches the goal at row 2, the
	// third at rows 9 and 10, the second never.
	succ := make([]float32, 12)
	succ[2], succ[9], succ[10] = 1, 1, 1
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.hdf5"), filepath.Join(dir, "without.hdf5")
	if err := WriteD4RL(with, d, WithInfo("success", Array{Data: succ, Shape: []int{12}})); err != nil {
		t.Fatal(err)
	}
	if err := WriteD4RL(without, d); err != nil {
		t.Fatal(err)
	}
	in, err := Inspect(with, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := SuccessInfo{Episodes: 3, SuccessEpisodes: 2, EpisodeFraction: 2.0 / 3, Rows: 12, SuccessRows: 3, RowFraction: 0.25}
	if in.Success == nil || *in.Success != want {
		t.Fatalf("success %+v, want %+v", in.Success, want)
	}
	var buf bytes.Buffer
	if err := in.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if s := "2 of 3 episodes (66.7%) reach the goal at some step; 3 of 12 rows (25.0%)"; !strings.Contains(buf.String(), s) {
		t.Errorf("text lacks %q:\n%s", s, buf.String())
	}
	in, err = Inspect(without, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Success != nil {
		t.Errorf("success %+v for a file without %s", in.Success, SuccessKey)
	}
	buf.Reset()
	if err := in.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "success") {
		t.Errorf("text of a file without success flags mentions success:\n%s", buf.String())
	}
}
