package dataset

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// valid3 is a 3-transition dataset with 2-D states and 1-D actions.
func valid3() *Dataset {
	return &Dataset{ObsDim: 2, ActDim: 1,
		Observations: []float32{0, 1, 2, 3, 4, 5}, NextObservations: []float32{2, 3, 4, 5, 6, 7},
		Actions: []float32{0, 0, 0}, Rewards: []float32{1, 1, 1}, Terminals: []float32{0, 0, 1}, Timeouts: []float32{0, 0, 0}}
}

// Validate refuses zero dimensions and names the field, the expected
// length (rows × width) and the offending row in its errors.
func TestValidateDimensionsAndMessages(t *testing.T) {
	if err := valid3().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		mutate func(d *Dataset)
		want   string
	}{
		{"zero obs dim", func(d *Dataset) { d.ObsDim = 0 }, "invalid dimensions obs=0 act=1"},
		{"zero act dim", func(d *Dataset) { d.ActDim = 0 }, "invalid dimensions obs=2 act=0"},
		{"short observations", func(d *Dataset) { d.Observations = d.Observations[:5] }, "observations has 5 values, want 3 rows × 2 = 6"},
		{"NaN in row 2", func(d *Dataset) { d.NextObservations[5] = float32(math.NaN()) }, "next_observations row 2 holds a non-finite value"},
		{"Inf in row 1", func(d *Dataset) { d.Observations[3] = float32(math.Inf(1)) }, "observations row 1 holds a non-finite value"},
	} {
		d := valid3()
		c.mutate(d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// humanBytes switches unit at exactly 1024 of the smaller one and divides
// by the unit's size.
func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		1<<20 - 1: "1024.0 KiB", 1 << 20: "1.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// The summary lists only the drops that happened.
func TestInfoTextListsOnlyDrops(t *testing.T) {
	in := &Info{Path: "x.hdf5", Format: "d4rl", ObsDim: 2, ActDim: 1, Rows: 10}
	in.Conversion.Kept = 10
	var b bytes.Buffer
	if err := in.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "dropped") || strings.Contains(s, "time-limit steps;") {
		t.Errorf("nothing dropped, but the summary says:\n%s", s)
	}
	in.Conversion.DroppedTimeouts, in.Conversion.DroppedLast = 3, 1
	b.Reset()
	if err := in.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "dropped 3 time-limit steps, the last row") {
		t.Errorf("drops not listed:\n%s", s)
	}
}

// A conversion that drops nothing records no dropped_invalid in the
// dataset's metadata (only a real drop does, see TestNaNHandling).
func TestQLearningCleanHasNoDropRecord(t *testing.T) {
	r := &Raw{Path: "mem", N: 4, ObsDim: 1, ActDim: 1, Observations: []float32{0, 1, 2, 3}, Actions: []float32{0, 0, 0, 0},
		Rewards: []float32{1, 1, 1, 1}, Terminals: []float32{0, 0, 0, 1}, Timeouts: []float32{0, 0, 0, 0}, Meta: map[string]string{}}
	d, conv, err := r.QLearning(ReadOptions{DropInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Meta["dropped_invalid"]; ok || conv.DroppedInvalid != 0 {
		t.Errorf("clean data: meta %v, dropped %d", d.Meta, conv.DroppedInvalid)
	}
}

// The metadata block appears only when there is metadata, and a value is
// shortened only beyond 100 characters.
func TestInfoTextMetadata(t *testing.T) {
	in := &Info{Path: "x.hdf5", Format: "d4rl", ObsDim: 2, ActDim: 1, Rows: 10}
	var b bytes.Buffer
	if err := in.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "metadata") {
		t.Errorf("no metadata, but a metadata block:\n%s", b.String())
	}
	in.Meta = map[string]string{"a": strings.Repeat("x", 100), "b": strings.Repeat("y", 101)}
	b.Reset()
	if err := in.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, strings.Repeat("x", 100)) || !strings.Contains(s, strings.Repeat("y", 97)+"...") || strings.Contains(s, strings.Repeat("y", 98)) {
		t.Errorf("metadata values:\n%s", s)
	}
}

// Without DropInvalid, the conversion names the stored row that holds the
// non-finite observation: the next row when it is the transition's s′
// (d4rl's s′ = observations[i+1]), the transition's own row when it is s.
func TestQLearningNamesTheInvalidRow(t *testing.T) {
	raw := func(bad int) *Raw {
		obs := []float32{0, 0, 1, 1, 2, 2, 3, 3}
		obs[2*bad+1] = float32(math.NaN())
		return &Raw{Path: "mem", N: 4, ObsDim: 2, ActDim: 1, Observations: obs, Actions: []float32{0, 0, 0, 0},
			Rewards: []float32{1, 1, 1, 1}, Terminals: []float32{0, 0, 0, 1}, Timeouts: []float32{0, 0, 0, 0}, Meta: map[string]string{}}
	}
	for bad, want := range map[int]string{2: "row 2 holds NaN or Inf (transition 1)", 0: "row 0 holds NaN or Inf (transition 0)"} {
		_, _, err := raw(bad).QLearning(ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NaN in observation row %d: %v, want %q", bad, err, want)
		}
	}
}
