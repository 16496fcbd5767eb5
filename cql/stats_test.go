package cql

import (
	"encoding/json"
	"testing"

	"github.com/koopq/koopq/rundir"
)

// Stats.Row holds every statistic under its rundir metric name (the keys
// report reads), the same value as Stats' own JSON field, and none of the
// caller's bookkeeping keys.
func TestStatsRowKeys(t *testing.T) {
	st := Stats{QLoss: 1, CQLGap: 2, AlphaPrime: 3, Alpha: 4, ActorLoss: 5, QData: 6, QRandom: 7, QPolicy: 8,
		LogPi: 9, BC: true, ShiftL2: 10, ShiftNextL2: 11}
	row := st.Row()
	b, _ := json.Marshal(st)
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if len(row) != len(fields) {
		t.Errorf("row has %d keys, Stats %d fields: %v", len(row), len(fields), row)
	}
	for k, v := range fields {
		want, ok := v.(float64)
		if k == rundir.BC {
			want, ok = 1, v == true
		}
		if got, in := row[k]; !ok || !in || got != want {
			t.Errorf("%s: row %v (present %v), Stats %v", k, got, in, v)
		}
	}
	for _, k := range []string{rundir.Step, rundir.WallSeconds, rundir.ModelBatch} {
		if _, in := row[k]; in {
			t.Errorf("row has the caller's key %s", k)
		}
	}
	for k := range row {
		found := false
		for _, m := range rundir.MetricKeys {
			found = found || m == k
		}
		if !found {
			t.Errorf("row key %s is not one of rundir.MetricKeys", k)
		}
	}
	if (Stats{}).Row()[rundir.BC] != 0 {
		t.Error("BC false is not 0")
	}
}
