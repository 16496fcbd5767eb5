package param

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/pflag"
)

// inner is a sub-struct with its own table; outer holds it.
type inner struct {
	Rate, Floor float64
	Wait        int
	Slack       float64
}

type outer struct {
	Name string
	In   inner
}

func innerTable() Table[inner] {
	return Table[inner]{
		New("rate", "rate", "step size", func(c *inner) any { return &c.Rate }, Positive),
		New("floor", "floor", "lowest --rate; see --rate-x and --slack", func(c *inner) any { return &c.Floor }, NonNegative),
		New("wait", "wait", "epochs before --floor (--wait 0: never)", func(c *inner) any { return &c.Wait }, NonNegative),
		New("slack", "slack", "tolerance", func(c *inner) any { return &c.Slack }, NonNegative),
	}
}

// checkInner is a rule across settings, as code beside the table writes it.
func checkInner(c inner) error {
	if c.Wait > 0 && c.Floor > c.Rate {
		return &RuleError{Scope: "inner", Key: "floor", Value: c.Floor, Must: fmt.Sprintf("at most {rate} %v when {wait} is set", c.Rate)}
	}
	if c.Slack > 1 {
		return &RuleError{Scope: "inner", Key: "slack", Value: c.Slack, Must: "at most 1"}
	}
	return nil
}

var (
	keyed   = Prefix{Flag: "in-", Key: "in.", Usage: "inner: ", Omit: []string{"slack"}}
	flagged = Prefix{NoKey: true}
)

func nested(p Prefix) Table[outer] {
	return Nest(innerTable(), func(o *outer) *inner { return &o.In }, p)
}

// Nest renames flags, keys and the flags named in usage texts, leaves out
// Omit's rows, and binds the sub-struct's fields inside the outer struct.
func TestNestRenames(t *testing.T) {
	tab := nested(keyed)
	if len(tab) != 3 {
		t.Fatalf("%d rows, want 3 (slack omitted)", len(tab))
	}
	want := []struct{ flag, key, usage string }{
		{"in-rate", "in.rate", "inner: step size"},
		{"in-floor", "in.floor", "inner: lowest --in-rate; see --rate-x and in.slack"},
		{"in-wait", "in.wait", "inner: epochs before --in-floor (--in-wait 0: never)"},
	}
	for i, w := range want {
		if r := tab[i]; r.Flag != w.flag || r.Key != w.key || r.Usage != w.usage {
			t.Errorf("row %d: %q %q %q, want %q %q %q", i, r.Flag, r.Key, r.Usage, w.flag, w.key, w.usage)
		}
	}
	plain := nested(flagged)
	if len(plain) != 4 || plain[1].Flag != "floor" || plain[1].Key != "" || plain[1].Usage != innerTable()[1].Usage {
		t.Errorf("NoKey rows: %+v", plain[1])
	}

	var o outer
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	tab.MustRegister(fs, &o, outer{In: inner{Rate: 0.5, Floor: 0.1}})
	if o.In.Rate != 0.5 || fs.Lookup("in-rate").DefValue != "0.5" {
		t.Fatalf("defaults: %+v, flag default %q", o.In, fs.Lookup("in-rate").DefValue)
	}
	if err := fs.Parse([]string{"--in-rate", "0.25", "--in-wait", "3"}); err != nil {
		t.Fatal(err)
	}
	if o.In.Rate != 0.25 || o.In.Wait != 3 {
		t.Errorf("parsed into %+v", o.In)
	}
	o.In.Rate = 0
	if err := tab.Validate(&o); err == nil || err.Error() != "--in-rate (in.rate) = 0: must be a positive number" {
		t.Errorf("range error %v", err)
	}
}

// A RuleError names keys by itself, and Explain renames them to the nested
// flags (and keys); other errors pass unchanged.
func TestExplainRuleError(t *testing.T) {
	err := checkInner(inner{Rate: 0.1, Floor: 0.5, Wait: 2})
	if got, want := err.Error(), "inner: floor 0.5: must be at most rate 0.1 when wait is set"; got != want {
		t.Errorf("Error() %q, want %q", got, want)
	}
	cases := []struct {
		p    Prefix
		err  error
		want string
	}{
		{keyed, err, "--in-floor (in.floor) = 0.5: must be at most --in-rate (in.rate) 0.1 when --in-wait (in.wait) is set"},
		{flagged, err, "--floor 0.5: must be at most --rate 0.1 when --wait is set"},
		{keyed, checkInner(inner{Slack: 2}), "in.slack = 2: must be at most 1"},
		{flagged, checkInner(inner{Slack: 2}), "--slack 2: must be at most 1"},
		{keyed, fmt.Errorf("wrapped: %w", err), "--in-floor (in.floor) = 0.5: must be at most --in-rate (in.rate) 0.1 when --in-wait (in.wait) is set"},
		{keyed, &RuleError{Key: "other", Value: 1, Must: "{nope}"}, "in.other = 1: must be in.nope"},
	}
	for _, c := range cases {
		if got := Explain(c.err, innerTable(), c.p); got == nil || got.Error() != c.want {
			t.Errorf("Explain(%v) = %v, want %q", c.err, got, c.want)
		}
	}
	plain := errors.New("plain")
	if got := Explain(plain, innerTable(), keyed); got != plain {
		t.Errorf("Explain(plain) = %v", got)
	}
	if Explain(nil, innerTable(), keyed) != nil {
		t.Error("Explain(nil) is not nil")
	}
}
