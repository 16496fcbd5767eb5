package koopman

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// Every row of TrainParams writes the TrainConfig field whose JSON name is
// its key, and the defaults are in range.
func TestTrainParamsKeys(t *testing.T) {
	tab := TrainParams()
	def := DefaultTrainConfig()
	if err := tab.Validate(&def); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, r := range tab {
		c := DefaultTrainConfig()
		switch v := r.Field(&c).(type) {
		case *int:
			*v = 7
		case *float64:
			*v = 7
		default:
			t.Fatalf("--%s: field %T", r.Flag, v)
		}
		var tree map[string]any
		b, _ := json.Marshal(c)
		if err := json.Unmarshal(b, &tree); err != nil {
			t.Fatal(err)
		}
		if tree[r.Key] != 7.0 {
			t.Errorf("--%s = 7 gives %s = %v", r.Flag, r.Key, tree[r.Key])
		}
	}
}

// Validate's errors are SettingErrors naming the key at fault, and in a
// rule across settings the keys it is checked against.
func TestValidateNamesKeys(t *testing.T) {
	for _, c := range []struct {
		mut  func(*TrainConfig)
		key  string
		want string
	}{
		{func(c *TrainConfig) { c.LRFactor = 1.5 }, "lr_factor", "koopman train: lr_factor 1.5: must be in (0, 1) when lr_patience is set"},
		{func(c *TrainConfig) { c.MinLR = 1 }, "min_lr", "koopman train: min_lr 1: must be in [0, lr 0.0003] when lr_patience is set"},
		{func(c *TrainConfig) { c.MinDelta = math.NaN() }, "min_delta", "koopman train: min_delta NaN: must be >= 0"},
		{func(c *TrainConfig) { c.HuberDelta = 0 }, "huber_delta", "koopman train: huber_delta 0: must be positive"},
	} {
		cfg := DefaultTrainConfig()
		c.mut(&cfg)
		err := cfg.Validate()
		var se *SettingError
		if !errors.As(err, &se) || se.Key != c.key || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.key, err, c.want)
			continue
		}
		if _, ok := TrainParams().Lookup(strings.ReplaceAll(se.Key, "_", "-")); !ok && c.key != "huber_delta" {
			t.Errorf("%s: no row", c.key)
		}
	}
}
