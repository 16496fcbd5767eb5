package sac

import (
	"bytes"
	"reflect"
	"testing"
)

// filledReplay holds n transitions whose every value says where it came
// from (row, field, column), so a misplaced row or column shows.
func filledReplay(t *testing.T, n int) *Replay {
	t.Helper()
	const S, A, NQ, NV = 2, 3, 2, 3
	r := NewReplay(S, A, NQ, NV, n+7)
	vec := func(i, field, w int) []float64 {
		v := make([]float64, w)
		for j := range v {
			v[j] = float64(1000*i + 10*field + j)
		}
		return v
	}
	for i := range n {
		if err := r.Add(vec(i, 1, S), vec(i, 2, A), float64(i), vec(i, 3, S), i%97 == 96, i%50 == 49,
			vec(i, 4, NQ), vec(i, 5, NV), -float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestReplaySliceAndView: the view holds every stored row; Slice(from, to)
// at from > 0 copies the rows, qpos, qvel and log-probabilities of exactly
// those transitions (multi-column infos, where an offset computed wrongly
// reads another row), and a full buffer refuses another row.
func TestReplaySliceAndView(t *testing.T) {
	r := filledReplay(t, 300)
	v := r.View()
	if v.Len() != 300 || v.Observations[2*299+1] != 1000*299+10+1 || v.Actions[3*299+2] != 1000*299+20+2 ||
		v.NextObservations[2*299] != 1000*299+30 || v.Rewards[299] != 299 {
		t.Fatalf("view: %d rows, last obs %v", v.Len(), v.Observations[2*299:])
	}
	d, infos := r.Slice(100, 103)
	if d.Len() != 3 || d.Observations[0] != 100010 || d.Actions[3*2+1] != 102021 {
		t.Fatalf("slice rows: obs %v act %v", d.Observations, d.Actions)
	}
	qp, qv, lp := infos["qpos"], infos["qvel"], infos["action_log_probs"]
	if !reflect.DeepEqual(qp.Shape, []int{3, 2}) || !reflect.DeepEqual(qv.Shape, []int{3, 3}) || !reflect.DeepEqual(lp.Shape, []int{3}) {
		t.Fatalf("info shapes %v %v %v", qp.Shape, qv.Shape, lp.Shape)
	}
	if qp.Data[0] != 100040 || qp.Data[5] != 102041 || qv.Data[0] != 100050 || qv.Data[8] != 102052 || lp.Data[2] != -102 {
		t.Errorf("infos: qpos %v qvel %v logp %v", qp.Data, qv.Data, lp.Data)
	}
	if _, infos := NewReplay(2, 1, 0, 0, 4).Slice(0, 0); len(infos) != 1 {
		t.Errorf("a buffer without MuJoCo state: infos %v, want action_log_probs only", infos)
	}
	for range 7 {
		if err := r.Add(make([]float64, 2), make([]float64, 3), 0, make([]float64, 2), false, false,
			make([]float64, 2), make([]float64, 3), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Add(make([]float64, 2), make([]float64, 3), 0, make([]float64, 2), false, false,
		make([]float64, 2), make([]float64, 3), 0); err == nil {
		t.Error("a full buffer took another row")
	}
}

// TestReplayFileRoundTrip: rows written by writeRows (more than one
// 4096-row chunk, starting at a row > 0) and read by readRows into a fresh
// buffer are the same rows, flags, infos and log-probabilities.
func TestReplayFileRoundTrip(t *testing.T) {
	src := filledReplay(t, 9000)
	var buf bytes.Buffer
	if err := src.writeRows(&buf, 10, 9000); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.Len(), 8990*src.rowFloats()*4; got != want {
		t.Fatalf("wrote %d bytes, want %d", got, want)
	}
	dst := NewReplay(2, 3, 2, 3, 8990) // exactly full
	if err := dst.readRows(&buf, 8990); err != nil {
		t.Fatal(err)
	}
	want, wantInfos := src.Slice(10, 9000)
	got, gotInfos := dst.Slice(0, 8990)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotInfos, wantInfos) {
		t.Error("rows read back differ from the rows written")
	}
	if err := NewReplay(2, 3, 2, 3, 5).readRows(&buf, 6); err == nil {
		t.Error("readRows accepted more rows than the capacity")
	}
}
