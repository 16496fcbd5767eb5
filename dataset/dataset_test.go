package dataset

import "testing"

// Append stores one transition with its flags as given, in float32.
func TestAppend(t *testing.T) {
	d := &Dataset{ObsDim: 2, ActDim: 1}
	d.Append([]float64{1, 2}, []float64{0.5}, -1.5, []float64{3, 4}, true, false)
	d.Append([]float64{3, 4}, []float64{-0.5}, 2, []float64{5, 6}, false, true)
	if d.Len() != 2 || d.Observations[3] != 4 || d.NextObservations[1] != 4 || d.Actions[1] != -0.5 ||
		d.Rewards[0] != -1.5 || d.Terminals[0] != 1 || d.Terminals[1] != 0 || d.Timeouts[0] != 0 || d.Timeouts[1] != 1 {
		t.Fatalf("appended %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}
