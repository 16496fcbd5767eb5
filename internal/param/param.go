// Package param is the one mechanism behind every command's settings: a
// table of rows, each naming a flag, an optional config-file key, its help
// text, the field of the command's options (or config) struct it sets, and
// the values it accepts. A command registers its flags from its table
// (Table.Register, the defaults taken from a default struct value) and
// validates its struct with it (Table.Validate), so a setting's flag, key,
// default, help, check and error message are written once.
//
// Checks that a range cannot express (one setting requiring another, names
// looked up in a registry, files on disk) stay as code beside the table.
package param

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// kind is the sort of check a Range makes.
type kind int

const (
	anyValue kind = iota
	positive
	nonNegative
	fraction
	discount
	openUnit
	openFraction
	between
	atLeast
	oneOf
)

// Range is the set of values a row accepts. Numeric ranges apply to every
// number type and to each element of a numeric slice; every float must also
// be finite (NaN and ±Inf are always errors, whatever the range). OneOf
// applies to strings (and each element of a []string). A Range is a value:
// compare ranges with Equal, not ==.
type Range struct {
	kind    kind
	lo, hi  float64  // Between's closed interval
	choices []string // OneOf's accepted values
}

// The ranges of numeric settings.
var (
	AnyValue     = Range{kind: anyValue}     // any finite number (any string)
	Positive     = Range{kind: positive}     // > 0 (for integers: at least 1)
	NonNegative  = Range{kind: nonNegative}  // >= 0
	Fraction     = Range{kind: fraction}     // in [0, 1]
	Discount     = Range{kind: discount}     // in [0, 1)
	OpenUnit     = Range{kind: openUnit}     // in (0, 1]
	OpenFraction = Range{kind: openFraction} // in (0, 1)
)

// Between is the closed interval [lo, hi], e.g. Between(0, 256) for a
// thread count.
func Between(lo, hi float64) Range { return Range{kind: between, lo: lo, hi: hi} }

// AtLeast is [lo, ∞), e.g. AtLeast(1) for a count whose error should say
// "must be at least 1".
func AtLeast(lo float64) Range { return Range{kind: atLeast, lo: lo} }

// OneOf accepts exactly the given strings (case-sensitive). Include "" to
// accept an empty value (a "not set" default); the error message lists the
// non-empty choices only.
func OneOf(choices ...string) Range { return Range{kind: oneOf, choices: slices.Clone(choices)} }

// Equal reports whether r and s accept the same values.
func (r Range) Equal(s Range) bool {
	return r.kind == s.kind && r.lo == s.lo && r.hi == s.hi && slices.Equal(r.choices, s.choices)
}

// Choices is OneOf's accepted values (nil for numeric ranges).
func (r Range) Choices() []string { return slices.Clone(r.choices) }

// String is the range as it ends "must be …" in an error message.
func (r Range) String() string {
	switch r.kind {
	case positive:
		return "a positive number"
	case nonNegative:
		return "a non-negative number"
	case fraction:
		return "in [0, 1]"
	case discount:
		return "in [0, 1)"
	case openUnit:
		return "in (0, 1]"
	case openFraction:
		return "in (0, 1)"
	case between:
		return fmt.Sprintf("%v to %v", r.lo, r.hi)
	case atLeast:
		return fmt.Sprintf("at least %v", r.lo)
	case oneOf:
		return "one of " + listChoices(r.choices)
	}
	return "a finite number"
}

// listChoices writes the non-empty choices as "a, b or c".
func listChoices(choices []string) string {
	var c []string
	for _, s := range choices {
		if s != "" {
			c = append(c, s)
		}
	}
	if len(c) <= 1 {
		return strings.Join(c, "")
	}
	return strings.Join(c[:len(c)-1], ", ") + " or " + c[len(c)-1]
}

// Contains reports whether the number v is in the range (false for NaN and
// ±Inf). OneOf accepts no number.
func (r Range) Contains(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	switch r.kind {
	case positive:
		return v > 0
	case nonNegative:
		return v >= 0
	case fraction:
		return v >= 0 && v <= 1
	case discount:
		return v >= 0 && v < 1
	case openUnit:
		return v > 0 && v <= 1
	case openFraction:
		return v > 0 && v < 1
	case between:
		return v >= r.lo && v <= r.hi
	case atLeast:
		return v >= r.lo
	case oneOf:
		return false
	}
	return true
}

// ContainsString reports whether the string s is in the range: every
// string is, except for OneOf, which accepts its choices.
func (r Range) ContainsString(s string) bool {
	return r.kind != oneOf || slices.Contains(r.choices, s)
}

// Row is one setting of the struct type T (a command's options, or a config
// file's struct): its flag, its config key, its help text, the field it
// sets and the values it accepts.
type Row[T any] struct {
	Flag  string       // flag name without dashes, e.g. "lr-actor"
	Key   string       // dotted config-file key, e.g. "cql.lr_actor"; "" for a flag-only setting
	Usage string       // help text (the default is printed by pflag from the default struct)
	Field func(*T) any // pointer to the field: *string, *bool, *int, *int64, *uint64, *float64, *time.Duration, *[]int, *[]float64 or *[]string
	Range Range        // the accepted numbers (each element of a slice), or OneOf strings
}

// New is a Row with its fields in order, T inferred from field: tables
// outside this package list rows as calls (go vet rejects unkeyed
// literals of another package's struct).
func New[T any](flag, key, usage string, field func(*T) any, r Range) Row[T] {
	return Row[T]{Flag: flag, Key: key, Usage: usage, Field: field, Range: r}
}

// Name is how errors name the row: "--flag (key)", or "--flag" without a
// key.
func (r Row[T]) Name() string {
	if r.Key == "" {
		return "--" + r.Flag
	}
	return fmt.Sprintf("--%s (%s)", r.Flag, r.Key)
}

// Check validates the row's field of v against its range. The message
// names the row; with a config key the value follows " = " ("--gamma
// (cql.gamma) = 1: must be in [0, 1)"), without one it follows the flag
// as it is typed ("--batch 0: must be a positive number", "--hidden 64,0:
// every entry must be a positive number").
func (r Row[T]) Check(v *T) error {
	switch x := r.Field(v).(type) {
	case *float64:
		return r.num(*x, *x)
	case *int:
		return r.num(*x, float64(*x))
	case *int64:
		return r.num(*x, float64(*x))
	case *uint64:
		return r.num(*x, float64(*x))
	case *time.Duration:
		return r.num(*x, float64(*x))
	case *string:
		if !r.Range.ContainsString(*x) {
			return fmt.Errorf("%s %q: want %s", r.Name(), *x, listChoices(r.Range.choices))
		}
	case *bool:
	case *[]int:
		return eachNum(r, *x, func(e int) float64 { return float64(e) })
	case *[]float64:
		return eachNum(r, *x, func(e float64) float64 { return e })
	case *[]string:
		for _, e := range *x {
			if !r.Range.ContainsString(e) {
				return fmt.Errorf("%s %q: every entry must be %s", r.Name(), e, listChoices(r.Range.choices))
			}
		}
	default:
		return fmt.Errorf("%s: unsupported field type %T (a bug in the settings table)", r.Name(), x)
	}
	return nil
}

// num checks one number shown as shown.
func (r Row[T]) num(shown any, v float64) error {
	if r.Range.kind == oneOf {
		return fmt.Errorf("%s: a number cannot be checked against %s (a bug in the settings table)", r.Name(), r.Range)
	}
	if r.Range.Contains(v) {
		return nil
	}
	return fmt.Errorf("%s%v: must be %s", r.valueSep(), shown, r.Range)
}

// valueSep is the row's name and what separates it from a value.
func (r Row[T]) valueSep() string {
	if r.Key == "" {
		return r.Name() + " "
	}
	return r.Name() + " = "
}

// eachNum checks every element of a numeric slice.
func eachNum[T, E any](r Row[T], xs []E, f func(E) float64) error {
	if r.Range.kind == oneOf {
		return fmt.Errorf("%s: numbers cannot be checked against %s (a bug in the settings table)", r.Name(), r.Range)
	}
	for _, e := range xs {
		if !r.Range.Contains(f(e)) {
			return fmt.Errorf("%s%s: every entry must be %s", r.valueSep(), r.list(xs), r.Range)
		}
	}
	return nil
}

// list writes a slice value as an error shows it: "[2 0]" after a config
// key, else as typed on the command line, "2,0".
func (r Row[T]) list(xs any) string {
	if r.Key != "" {
		return fmt.Sprint(xs)
	}
	v := reflect.ValueOf(xs)
	s := make([]string, v.Len())
	for i := range s {
		s[i] = fmt.Sprint(v.Index(i).Interface())
	}
	return strings.Join(s, ",")
}

// Copy sets the row's field in dst to its value in src (a slice is copied,
// not shared, and an empty one is non-nil).
func (r Row[T]) Copy(dst, src *T) {
	d, s := reflect.ValueOf(r.Field(dst)).Elem(), reflect.ValueOf(r.Field(src)).Elem()
	if s.Kind() == reflect.Slice {
		// Never nil, as config.json has always recorded flag-set lists.
		d.Set(reflect.AppendSlice(reflect.MakeSlice(s.Type(), 0, s.Len()), s))
		return
	}
	d.Set(s)
}

// Table is the rows of one struct type, in the order of its help text.
type Table[T any] []Row[T]

// Lookup returns the row of a flag name.
func (t Table[T]) Lookup(flag string) (Row[T], bool) {
	for _, r := range t {
		if r.Flag == flag {
			return r, true
		}
	}
	return Row[T]{}, false
}

// Validate checks every row of v in table order and returns the first
// error (nil when all are in range).
func (t Table[T]) Validate(v *T) error {
	for _, r := range t {
		if err := r.Check(v); err != nil {
			return err
		}
	}
	return nil
}

// Register adds a flag for every row to f, bound to the row's field of
// dst, with the default taken from the same field of def (the rows'
// fields of dst are set to def's; other fields of dst are left alone, so
// start dst from def when fields without a flag need their defaults too).
// A field type Register cannot bind is an error naming the flag (a bug in
// the table, caught by the table's test).
func (t Table[T]) Register(f *pflag.FlagSet, dst *T, def T) error {
	for _, r := range t {
		r.Copy(dst, &def)
		switch v := r.Field(dst).(type) {
		case *string:
			f.StringVar(v, r.Flag, *v, r.Usage)
		case *bool:
			f.BoolVar(v, r.Flag, *v, r.Usage)
		case *int:
			f.IntVar(v, r.Flag, *v, r.Usage)
		case *int64:
			f.Int64Var(v, r.Flag, *v, r.Usage)
		case *uint64:
			f.Uint64Var(v, r.Flag, *v, r.Usage)
		case *float64:
			f.Float64Var(v, r.Flag, *v, r.Usage)
		case *time.Duration:
			f.DurationVar(v, r.Flag, *v, r.Usage)
		case *[]int:
			f.IntSliceVar(v, r.Flag, *v, r.Usage)
		case *[]float64:
			f.Float64SliceVar(v, r.Flag, *v, r.Usage)
		case *[]string:
			f.StringSliceVar(v, r.Flag, *v, r.Usage)
		default:
			return fmt.Errorf("flag --%s: unsupported field type %T", r.Flag, v)
		}
	}
	return nil
}

// MustRegister is Register for a command's fixed table: an unsupported
// field type is a programming error (every table is registered by its
// command's tests), so it panics.
func (t Table[T]) MustRegister(f *pflag.FlagSet, dst *T, def T) {
	if err := t.Register(f, dst, def); err != nil {
		panic(err)
	}
}
