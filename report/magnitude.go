package report

import (
	"encoding/json"
	"math"

	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/stats"
)

// MagnitudeColumns are the results.json keys of a run's augmentation size
// (written by koopq train: --shift-l2's calibrated scale, the training
// distances ‖s̃ − s‖₂, the Koopman shift's two parts) that the magnitude
// table shows beside the scores, with their titles.
var MagnitudeColumns = []struct{ Key, Title string }{
	{rundir.ShiftL2Mean, "‖s̃ − s‖ mean"},
	{rundir.ShiftL2Median, "‖s̃ − s‖ median"},
	{rundir.ShiftL2P95, "‖s̃ − s‖ p95"},
	{rundir.ShiftNextL2Mean, "‖s̃′ − s′‖ mean"},
	{rundir.ShiftScale, "calibrated scale"},
	{rundir.ModelErrorL2Mean, "model-error part"},
	{rundir.SymmetryL2Mean, "symmetry part"},
}

// readMagnitude picks MagnitudeColumns' keys out of a results.json (nil
// when it has none: runs from before koopq measured them).
func readMagnitude(b []byte) map[string]float64 {
	var all map[string]json.RawMessage
	if json.Unmarshal(b, &all) != nil {
		return nil
	}
	var out map[string]float64
	for _, c := range MagnitudeColumns {
		var v float64
		if raw, ok := all[c.Key]; ok && json.Unmarshal(raw, &v) == nil {
			if out == nil {
				out = map[string]float64{}
			}
			out[c.Key] = v
		}
	}
	return out
}

// magnitudeTable puts each dataset × method's score beside its
// augmentation size (mean ± std over seeds of each run's value; the score
// as the main table counts it); nil when no run recorded shift_l2_mean.
func magnitudeTable(rs []Result, datasets, methods []string) *Diagnostics {
	d := &Diagnostics{Columns: []string{"score"}, Titles: []string{"score"}}
	var keys []string
	for _, c := range MagnitudeColumns {
		for _, r := range rs {
			if _, ok := r.Magnitude[c.Key]; ok {
				d.Columns, d.Titles = append(d.Columns, c.Key), append(d.Titles, c.Title)
				keys = append(keys, c.Key)
				break
			}
		}
	}
	if len(keys) == 0 || keys[0] != rundir.ShiftL2Mean {
		return nil
	}
	for _, ds := range datasets {
		for _, m := range methods {
			sel := runsOf(rs, ds, m)
			if len(sel) == 0 {
				continue
			}
			row := DiagRow{Dataset: ds, Method: m}
			var score Cell
			for _, r := range sel {
				score.Scores, score.Seeds = append(score.Scores, r.Score), append(score.Seeds, r.Seed)
			}
			score.Mean, score.Std = stats.Mean(score.Scores), stats.Std(score.Scores)
			row.Cells = append(row.Cells, score)
			for _, k := range keys {
				var c Cell
				for _, r := range sel {
					if v, ok := r.Magnitude[k]; ok && !math.IsNaN(v) {
						c.Scores, c.Seeds = append(c.Scores, v), append(c.Seeds, r.Seed)
					}
				}
				c.Mean, c.Std = stats.Mean(c.Scores), stats.Std(c.Scores)
				row.Cells = append(row.Cells, c)
			}
			d.Rows = append(d.Rows, row)
		}
	}
	return d
}
