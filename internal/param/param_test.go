package param

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Each range at and beyond its boundaries; NaN and ±Inf are out of every
// numeric range.
func TestRangeBoundaries(t *testing.T) {
	cases := []struct {
		r       Range
		in, out []float64
		text    string
	}{
		{AnyValue, []float64{-1e308, 0, 1e308}, nil, "a finite number"},
		{Positive, []float64{1e-300, 1}, []float64{0, -1e-300}, "a positive number"},
		{NonNegative, []float64{0, 5}, []float64{-1e-300}, "a non-negative number"},
		{Fraction, []float64{0, 0.5, 1}, []float64{-1e-9, 1 + 1e-9}, "in [0, 1]"},
		{Discount, []float64{0, 0.999}, []float64{-1e-9, 1}, "in [0, 1)"},
		{OpenUnit, []float64{1e-9, 1}, []float64{0, 1 + 1e-9}, "in (0, 1]"},
		{OpenFraction, []float64{1e-9, 1 - 1e-9}, []float64{0, 1}, "in (0, 1)"},
		{Between(0, 256), []float64{0, 256}, []float64{-1, 257}, "0 to 256"},
		{AtLeast(1), []float64{1, 1e308}, []float64{0.999, -1}, "at least 1"},
	}
	for _, c := range cases {
		for _, v := range c.in {
			if !c.r.Contains(v) {
				t.Errorf("%s: %v rejected", c.r, v)
			}
		}
		for _, v := range append(c.out, math.NaN(), math.Inf(1), math.Inf(-1)) {
			if c.r.Contains(v) {
				t.Errorf("%s: %v accepted", c.r, v)
			}
		}
		if c.r.String() != c.text {
			t.Errorf("String %q, want %q", c.r, c.text)
		}
		if !c.r.ContainsString("anything") {
			t.Errorf("%s rejects a string", c.r)
		}
	}
	e := OneOf("", "l2", "sign", "raw")
	for s, want := range map[string]bool{"": true, "l2": true, "raw": true, "L2": false, "x": false} {
		if e.ContainsString(s) != want {
			t.Errorf("OneOf %q: %v, want %v", s, !want, want)
		}
	}
	if e.Contains(0) || e.String() != "one of l2, sign or raw" {
		t.Errorf("OneOf: Contains(0) %v, String %q", e.Contains(0), e)
	}
	if !OneOf("a").Equal(OneOf("a")) || OneOf("a").Equal(OneOf("b")) || Positive.Equal(NonNegative) || !Between(0, 1).Equal(Between(0, 1)) || AtLeast(1).Equal(Between(1, 1)) {
		t.Error("Equal")
	}
}

// opts has a field of every supported type.
type opts struct {
	S  string
	B  bool
	I  int
	I6 int64
	U  uint64
	F  float64
	D  time.Duration
	IS []int
	FS []float64
	SS []string
	Ch chan int // unsupported
}

func table() Table[opts] {
	return Table[opts]{
		{"s", "", "a string", func(o *opts) any { return &o.S }, OneOf("", "x", "y")},
		{"b", "", "a bool", func(o *opts) any { return &o.B }, AnyValue},
		{"i", "sect.i", "an int", func(o *opts) any { return &o.I }, Positive},
		{"i6", "", "an int64", func(o *opts) any { return &o.I6 }, NonNegative},
		{"u", "", "a uint64", func(o *opts) any { return &o.U }, Between(1, 10)},
		{"f", "sect.f", "a float", func(o *opts) any { return &o.F }, Discount},
		{"d", "", "a duration", func(o *opts) any { return &o.D }, Positive},
		{"is", "", "ints", func(o *opts) any { return &o.IS }, Positive},
		{"fs", "fs", "floats", func(o *opts) any { return &o.FS }, Fraction},
		{"ss", "", "strings", func(o *opts) any { return &o.SS }, OneOf("a", "b")},
	}
}

func good() opts {
	return opts{S: "x", B: true, I: 3, I6: 0, U: 10, F: 0.5, D: time.Second, IS: []int{2, 3}, FS: []float64{0, 1}, SS: []string{"a"}}
}

// Register binds every field type with the default struct's values as
// defaults; parsing sets the fields.
func TestRegisterDefaultsAndParse(t *testing.T) {
	var o opts
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	if err := table().Register(f, &o, good()); err != nil {
		t.Fatal(err)
	}
	defs := map[string]string{"s": "x", "b": "true", "i": "3", "i6": "0", "u": "10", "f": "0.5", "d": "1s", "is": "[2,3]", "fs": "[0.000000,1.000000]", "ss": "[a]"}
	for name, want := range defs {
		fl := f.Lookup(name)
		if fl == nil {
			t.Fatalf("no flag --%s", name)
		}
		if fl.DefValue != want {
			t.Errorf("--%s default %q, want %q", name, fl.DefValue, want)
		}
	}
	if f.Lookup("i").Usage != "an int" {
		t.Errorf("usage %q", f.Lookup("i").Usage)
	}
	if o.I != 3 || len(o.IS) != 2 {
		t.Errorf("fields not set to the defaults: %+v", o)
	}
	err := f.Parse([]string{"--s", "y", "--b=false", "--i", "7", "--i6", "8", "--u", "2", "--f", "0.25", "--d", "2m",
		"--is", "4,5,6", "--fs", "0.5", "--ss", "b,a"})
	if err != nil {
		t.Fatal(err)
	}
	want := opts{S: "y", I: 7, I6: 8, U: 2, F: 0.25, D: 2 * time.Minute, IS: []int{4, 5, 6}, FS: []float64{0.5}, SS: []string{"b", "a"}}
	if o.S != want.S || o.B || o.I != 7 || o.I6 != 8 || o.U != 2 || o.F != 0.25 || o.D != want.D ||
		len(o.IS) != 3 || o.IS[2] != 6 || len(o.FS) != 1 || len(o.SS) != 2 || o.SS[0] != "b" {
		t.Errorf("parsed %+v, want %+v", o, want)
	}
	if err := table().Validate(&o); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

// An unsupported field type is an error naming the flag, not a panic
// (MustRegister panics, for fixed tables).
func TestRegisterUnsupported(t *testing.T) {
	tab := Table[opts]{{"ch", "", "", func(o *opts) any { return &o.Ch }, AnyValue}}
	var o opts
	err := tab.Register(pflag.NewFlagSet("t", pflag.ContinueOnError), &o, opts{})
	if err == nil || !strings.Contains(err.Error(), "--ch") {
		t.Errorf("err %v, want one naming --ch", err)
	}
	if err := tab.Validate(&o); err == nil || !strings.Contains(err.Error(), "--ch: unsupported field type") {
		t.Errorf("Validate: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRegister did not panic")
		}
	}()
	tab.MustRegister(pflag.NewFlagSet("t", pflag.ContinueOnError), &o, opts{})
}

// Each field type's error text: with a key "--flag (key) = value",
// without one "--flag value".
func TestValidateErrors(t *testing.T) {
	cases := []struct {
		set  func(*opts)
		want string
	}{
		{func(o *opts) { o.S = "z" }, `--s "z": want x or y`},
		{func(o *opts) { o.I = 0 }, "--i (sect.i) = 0: must be a positive number"},
		{func(o *opts) { o.I6 = -1 }, "--i6 -1: must be a non-negative number"},
		{func(o *opts) { o.U = 11 }, "--u 11: must be 1 to 10"},
		{func(o *opts) { o.F = 1 }, "--f (sect.f) = 1: must be in [0, 1)"},
		{func(o *opts) { o.F = math.NaN() }, "--f (sect.f) = NaN: must be in [0, 1)"},
		{func(o *opts) { o.D = 0 }, "--d 0s: must be a positive number"},
		{func(o *opts) { o.IS = []int{2, 0} }, "--is 2,0: every entry must be a positive number"},
		{func(o *opts) { o.FS = []float64{0.5, 2} }, "--fs (fs) = [0.5 2]: every entry must be in [0, 1]"},
		{func(o *opts) { o.SS = []string{"a", "c"} }, `--ss "c": every entry must be a or b`},
	}
	for _, c := range cases {
		o := good()
		c.set(&o)
		err := table().Validate(&o)
		if err == nil || err.Error() != c.want {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
	// The first row out of range is reported.
	o := good()
	o.I, o.F = 0, 2
	if err := table().Validate(&o); err == nil || !strings.HasPrefix(err.Error(), "--i (sect.i)") {
		t.Errorf("two errors: %v, want the first row's", err)
	}
	// A numeric field with a OneOf range is a table bug, reported as such.
	bad := Table[opts]{{"i", "", "", func(o *opts) any { return &o.I }, OneOf("1")}, {"is", "", "", func(o *opts) any { return &o.IS }, OneOf("1")}}
	for _, r := range bad {
		if err := r.Check(&o); err == nil || !strings.Contains(err.Error(), "a bug in the settings table") {
			t.Errorf("--%s with OneOf: %v", r.Flag, err)
		}
	}
}

// Copy copies values and clones slices; an empty slice stays non-nil.
func TestCopyAndLookup(t *testing.T) {
	src, dst := good(), opts{}
	for _, r := range table() {
		r.Copy(&dst, &src)
	}
	src.IS[0] = 99
	if dst.S != "x" || dst.U != 10 || dst.D != time.Second || dst.IS[0] != 2 || len(dst.SS) != 1 {
		t.Errorf("copied %+v", dst)
	}
	r, ok := table().Lookup("is")
	if !ok || r.Name() != "--is" {
		t.Fatalf("Lookup is: %v %v", r.Name(), ok)
	}
	src.IS = nil
	r.Copy(&dst, &src)
	if dst.IS == nil || len(dst.IS) != 0 {
		t.Errorf("nil slice copied as %#v, want empty non-nil", dst.IS)
	}
	if _, ok := table().Lookup("nope"); ok {
		t.Error("Lookup of an unknown flag succeeded")
	}
	if r, _ := table().Lookup("f"); r.Name() != "--f (sect.f)" {
		t.Errorf("Name %q", r.Name())
	}
}
