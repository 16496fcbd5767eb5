package param

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Prefix says how Nest mounts the table of a sub-struct (e.g.
// koopman.TrainConfig) in a command's table: the sub-table's rows keep
// their fields, ranges and wording, and get these prefixes.
type Prefix struct {
	Flag  string // put before every flag, and before every "--flag" of the sub-table named in a usage text: "koopman-"
	Key   string // put before every key: "koopman_train."
	NoKey bool   // drop the keys: the rows become flag-only (a command without config files)
	Usage string // put before every usage text, e.g. "Koopman training: "
	// Omit is the flags of the sub-table the command does not have; a usage
	// text naming one ("--min-delta") names its key instead
	// ("koopman_train.min_delta"), or the bare key with NoKey.
	Omit []string
}

// key is the sub-table key k as the nested table writes it ("" when NoKey).
func (p Prefix) key(k string) string {
	if p.NoKey || k == "" {
		return ""
	}
	return p.Key + k
}

// Nest mounts the rows of sub, a table of the struct U that field points to
// inside T, as rows of T renamed by p: one table of a sub-struct's settings
// serves every command that sets them (koopman.TrainParams: 'koopq koopman
// train' with plain flags, 'koopq train' with --koopman-… and
// koopman_train.… keys).
func Nest[T, U any](sub Table[U], field func(*T) *U, p Prefix) Table[T] {
	var t Table[T]
	for _, r := range sub {
		if slices.Contains(p.Omit, r.Flag) {
			continue
		}
		f := r.Field
		t = append(t, Row[T]{
			Flag:  p.Flag + r.Flag,
			Key:   p.key(r.Key),
			Usage: p.Usage + renameFlags(r.Usage, sub, p),
			Field: func(v *T) any { return f(field(v)) },
			Range: r.Range,
		})
	}
	return t
}

// renameFlags writes every "--name" in s whose name is a flag of sub as
// the nested flag "--"+p.Flag+name, or for an omitted flag as its key
// ("--lr" in "--lr-factor" is not a flag: names are matched whole).
func renameFlags[U any](s string, sub Table[U], p Prefix) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "--")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i+2:]
		n := 0
		for n < len(s) && (s[n] == '-' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= '0' && s[n] <= '9') {
			n++
		}
		r, ok := sub.Lookup(s[:n])
		switch {
		case !ok || n == 0:
			b.WriteString("--")
		case slices.Contains(p.Omit, r.Flag) && r.Key != "":
			b.WriteString(p.Key + r.Key)
			s = s[n:]
		default:
			b.WriteString("--" + p.Flag)
		}
	}
}

// RuleError is an error about one setting of a struct that code beside
// its table finds: a rule a Range cannot express, such as one setting
// bounded by another (koopman.TrainConfig.Validate's min_lr ≤ lr). It
// names settings by their keys in the struct's own table, so that Explain
// can rename them to the flags (and keys) of the command that set them.
type RuleError struct {
	Scope string // what Error puts first, e.g. "koopman train"
	Key   string // key of the setting at fault, e.g. "min_lr"
	Value any    // its value
	// Must is what the value must be, with other settings of the table
	// written as {key}: "in [0, {lr} 0.0003] when {lr_patience} is set".
	Must string
}

// Error names the settings by their keys: "koopman train: min_lr 0.1:
// must be in [0, lr 0.0003] when lr_patience is set".
func (e *RuleError) Error() string {
	s := fmt.Sprintf("%s %v: must be %s", e.Key, e.Value, e.explainMust(func(k string) string { return k }))
	if e.Scope == "" {
		return s
	}
	return e.Scope + ": " + s
}

// explainMust is Must with every {key} written as name(key).
func (e *RuleError) explainMust(name func(string) string) string {
	var b strings.Builder
	s := e.Must
	for {
		i := strings.IndexByte(s, '{')
		j := strings.IndexByte(s[i+1:], '}')
		if i < 0 || j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(name(s[i+1 : i+1+j]))
		s = s[i+2+j:]
	}
}

// Explain rewrites a *RuleError in err about a setting of sub, mounted in a
// command's table as p (Nest), into the table's own wording, naming the
// flags (and keys): "--koopman-min-lr (koopman_train.min_lr) = 0.1: must be
// in [0, --koopman-lr (koopman_train.lr) 0.0003] when --koopman-lr-patience
// (koopman_train.lr_patience) is set". A setting without a row in sub, or
// omitted (p.Omit), is named by its (prefixed) key. Other errors come back unchanged.
func Explain[U any](err error, sub Table[U], p Prefix) error {
	var re *RuleError
	if !errors.As(err, &re) {
		return err
	}
	row := func(k string) (Row[U], bool) {
		for _, r := range sub {
			if r.Key == k && !slices.Contains(p.Omit, r.Flag) {
				return Row[U]{Flag: p.Flag + r.Flag, Key: p.key(r.Key)}, true
			}
		}
		return Row[U]{}, false
	}
	name := func(k string) string {
		if r, ok := row(k); ok {
			return r.Name()
		}
		if p.NoKey {
			return k
		}
		return p.Key + k
	}
	at := name(re.Key) + " "
	if r, ok := row(re.Key); ok {
		at = r.valueSep()
	} else if !p.NoKey {
		at = name(re.Key) + " = "
	}
	return fmt.Errorf("%s%v: must be %s", at, re.Value, re.explainMust(name))
}
