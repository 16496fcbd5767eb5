package meter

import (
	"fmt"
	"reflect"
	"testing"
)

// record is a Staged that keeps every report as "stage done/total msg".
type record []string

func (r *record) staged() Staged {
	return func(stage string, done, total int, msg string) {
		*r = append(*r, fmt.Sprintf("%s %d/%d %s", stage, done, total, msg))
	}
}

func TestStage(t *testing.T) {
	var got record
	p := Stage(got.staged(), "hopper-medium-v2 episodes")
	p(0, 10, "")
	p(10, 10, "done")
	want := record{"hopper-medium-v2 episodes 0/10 ", "hopper-medium-v2 episodes 10/10 done"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stage reported %q, want %q", got, want)
	}
}

func TestWithin(t *testing.T) {
	var got record
	s := Within(got.staged(), "medium/kfc/s1")
	s("bc", 3, 5, "q 1")
	Stage(s, "cql")(7, 9, "")
	want := record{"medium/kfc/s1 bc 3/5 q 1", "medium/kfc/s1 cql 7/9 "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Within reported %q, want %q", got, want)
	}
}

func TestFlat(t *testing.T) {
	var got []string
	s := Flat(func(done, total int, msg string) { got = append(got, fmt.Sprintf("%d/%d %s", done, total, msg)) })
	s("cql", 4, 8, "q 0.5 gap 1")
	s("koopman", 1, 2, "")
	want := []string{"4/8 cql q 0.5 gap 1", "1/2 koopman "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Flat reported %q, want %q", got, want)
	}
}

// TestNilStaysNil checks that the helpers keep "no reporting" nil, so work
// that tests its callback against nil skips the reports.
func TestNilStaysNil(t *testing.T) {
	if Stage(nil, "x") != nil {
		t.Error("Stage(nil, name) is not nil")
	}
	if Within(nil, "x") != nil {
		t.Error("Within(nil, prefix) is not nil")
	}
	if Flat(nil) != nil {
		t.Error("Flat(nil) is not nil")
	}
}
