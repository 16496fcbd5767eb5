package report

import (
	"strings"
	"testing"
)

// RankOffline orders each dataset's runs by FQE value, best first, runs
// without an estimate last; estimates of different data or discount are
// refused.
func TestRankOffline(t *testing.T) {
	est := func(v float64) *FQEEstimate {
		return &FQEEstimate{Value: v, Fits: 1, Gamma: 0.99, Steps: 100, DataContentSHA256: "d1"}
	}
	runs := []OfflineRun{
		{Dir: "r1", Dataset: "x", FQE: est(1)},
		{Dir: "r2", Dataset: "x"},
		{Dir: "r3", Dataset: "x", FQE: est(3)},
		{Dir: "r4", Dataset: "w", FQE: est(-2)},
		{Dir: "r5", Dataset: "x", FQE: est(2)},
	}
	rk, err := RankOffline(runs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rk.Runs["x"] {
		got = append(got, r.Dir)
	}
	if strings.Join(got, ",") != "r3,r5,r1,r2" || strings.Join(rk.Datasets, ",") != "w,x" {
		t.Errorf("order %v, datasets %v; want r3,r5,r1,r2 and w,x", got, rk.Datasets)
	}
	md := rk.Markdown()
	if !strings.Contains(md, "| 1 |  | 0 | 3.00 (1×, γ 0.99)") || !strings.Contains(md, "| — |  | 0 | no fqe.json") {
		t.Errorf("markdown:\n%s", md)
	}
	for _, change := range []func(e *FQEEstimate){
		func(e *FQEEstimate) { e.DataContentSHA256 = "d2" },
		func(e *FQEEstimate) { e.Gamma = 0.995 },
		func(e *FQEEstimate) { e.Steps = 200 },
	} {
		e := est(5)
		change(e)
		if _, err := RankOffline(append(runs[:3:3], OfflineRun{Dir: "r6", Dataset: "x", FQE: e})); err == nil || !strings.Contains(err.Error(), "not comparable") {
			t.Errorf("incomparable estimates: err %v", err)
		}
	}
	if _, err := RankOffline(nil); err == nil {
		t.Error("no runs accepted")
	}
}
