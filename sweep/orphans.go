package sweep

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/koopq/koopq/rundir"
)

// Orphans lists the run slots in the sweep directory out (subdirectories
// holding a sweep-run.json) that are not runs of the spec (runs: its whole
// expansion, not a selection), sorted: slots of a method or dataset that was
// renamed or removed from the spec. `sweep status` and `sweep run` name
// them, and `koopq report` leaves them out of a sweep's tables, so the
// table holds exactly the runs the spec describes.
func Orphans(out string, runs []Run) []string {
	names := make(map[string]bool, len(runs))
	for _, r := range runs {
		names[r.Name] = true
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil
	}
	var orphans []string
	for _, e := range entries {
		if !e.IsDir() || names[e.Name()] {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, e.Name(), rundir.SweepRunFile)); err == nil {
			orphans = append(orphans, e.Name())
		}
	}
	sort.Strings(orphans)
	return orphans
}
