package run

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/rundir"
)

// TestMagnitudeKeysAreRundirs: the numeric keys of Magnitude, written
// inline in results.json, are rundir.MagnitudeKeys, in order (report's
// magnitude table reads them by those names).
func TestMagnitudeKeysAreRundirs(t *testing.T) {
	var keys []string
	ty := reflect.TypeFor[Magnitude]()
	for i := range ty.NumField() {
		f := ty.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if k := f.Type.Kind(); k == reflect.Float64 || k == reflect.Int64 || k == reflect.Pointer && f.Type.Elem().Kind() == reflect.Float64 {
			keys = append(keys, name)
		}
	}
	if !slices.Equal(keys, rundir.MagnitudeKeys) {
		t.Errorf("Magnitude's numeric keys %q, rundir.MagnitudeKeys %q", keys, rundir.MagnitudeKeys)
	}
}

// TestTrainResultKeyOrder: results.json has rundir.Results' keys, then
// Magnitude's, and nothing of TrainResult's own.
func TestTrainResultKeyOrder(t *testing.T) {
	one := 1.0
	var r TrainResult
	r.ModelErrorL2Mean, r.SymmetryL2Mean, r.AlreadyFinished = &one, &one, true
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"config", "seed", "provenance", "segments", "inputs", "dataset", "transitions", "final_eval", "history",
		"steps", "phase_steps", "final_phase", "wall_seconds", "steps_per_second", "last_stats"}
	for _, k := range rundir.MagnitudeKeys {
		if k != rundir.ShiftScale { // omitted when zero
			want = append(want, k)
		}
	}
	if !slices.Equal(keys, want) {
		t.Errorf("results.json keys\n%q, want\n%q", keys, want)
	}
}
