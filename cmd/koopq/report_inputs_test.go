package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 66 item 1: runs of one method on two datasets of the same name
// (another --data-root) were averaged into one cell. `koopq report` now
// refuses the cell, naming both run directories; each dataset alone is
// reported.
func TestReportRefusesCellOnDifferentData(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "runs")
	for i, root := range []string{"d1", "d2"} {
		if err := os.MkdirAll(filepath.Join(tmp, root), 0o755); err != nil {
			t.Fatal(err)
		}
		data := writePendulumData(t, filepath.Join(tmp, root, "p.hdf5"), 300, uint64(2+i))
		args := tinyTrain(data, filepath.Join(out, root), "r", "--steps", "20", "--seed", []string{"1", "2"}[i])
		if r := runCLI(t, tmp, 2*time.Minute, args...); r.Code != 0 {
			t.Fatalf("train: %s", r.Stderr)
		}
	}
	d1, d2 := runDir(t, filepath.Join(out, "d1")), runDir(t, filepath.Join(out, "d2"))
	r := runCLI(t, tmp, time.Minute, "report", out, "--out", filepath.Join(tmp, "rep"))
	expectCLIError(t, r, "p gaussian pools runs trained on different data", d1, d2)
	if strings.Contains(r.Stderr, "appears twice") {
		t.Errorf("refused as a duplicate: %s", r.Stderr)
	}
	if r := runCLI(t, tmp, time.Minute, "report", d1, "--out", filepath.Join(tmp, "rep1")); r.Code != 0 {
		t.Errorf("one dataset alone: %s", r.Stderr)
	}
}

// --reference whose dataset names match none of the report's wrote no
// table-vs-reference.md and said nothing; now a note names both sides.
func TestReportReferenceWithoutMatchSaysSo(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 300, 2)
	out := filepath.Join(tmp, "runs")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r", "--steps", "20")...); r.Code != 0 {
		t.Fatalf("train: %s", r.Stderr)
	}
	ref := filepath.Join(tmp, "ref.yaml")
	if err := os.WriteFile(ref, []byte("label: paper\nsource: Table 1\nscores: {hopper-medium-v2: {CQL: 58.5}, walker2d-medium-v2: {CQL: 72.5}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, tmp, time.Minute, "report", out, "--reference", ref, "--out", filepath.Join(tmp, "rep"))
	want := "--reference " + ref + " has scores for hopper-medium-v2, walker2d-medium-v2, none of them a dataset of this report (p)"
	if r.Code != 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("report: %d, want the note %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "rep", "table-vs-reference.md")); err == nil {
		t.Error("table-vs-reference.md written without a matching dataset")
	}
}
