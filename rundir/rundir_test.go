package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestNames pins the file names and keys: renaming one changes the format
// every reader of old run directories depends on.
func TestNames(t *testing.T) {
	want := map[string]string{
		ConfigFile: "config.json", InputsFile: "inputs.json", MetricsJSONL: "metrics.jsonl", MetricsCSV: "metrics.csv",
		HistoryFile: "history.json", ResultsFile: "results.json", CheckpointsDir: "checkpoints",
		CheckpointFile: "checkpoints/latest.safetensors", PolicyFile: "policy.safetensors",
		KoopmanFile: "koopman.safetensors", SweepRunFile: "sweep-run.json",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("file name %q, want %q", got, w)
		}
	}
	wantKeys := []string{"step", "q_loss", "cql_gap", "alpha_prime", "alpha", "actor_loss", "q_data", "q_random", "q_policy",
		"log_pi", "bc", "shift_l2", "shift_next_l2", "wall_seconds", "model_batch"}
	if !slices.Equal(MetricKeys, wantKeys) {
		t.Errorf("MetricKeys %q, want %q", MetricKeys, wantKeys)
	}
	for _, k := range MetricKeys {
		if IsStatistic(k) == (k == "step" || k == "wall_seconds") {
			t.Errorf("IsStatistic(%q) = %v", k, IsStatistic(k))
		}
	}
	wantMag := []string{"shift_scale", "shift_rows", "shift_l2_mean", "shift_l2_median", "shift_l2_p95", "shift_next_l2_mean",
		"shift_next_l2_median", "shift_next_l2_p95", "model_error_l2_mean", "symmetry_l2_mean"}
	if !slices.Equal(MagnitudeKeys, wantMag) {
		t.Errorf("MagnitudeKeys %q, want %q", MagnitudeKeys, wantMag)
	}
}

// magnitude is run.Magnitude's record (inline keys after Results'), the
// calibration kept raw: what a results.json holds besides Results.
type magnitude struct {
	ShiftCalibration  json.RawMessage `json:"shift_calibration,omitempty"`
	ShiftScale        float64         `json:"shift_scale,omitempty"`
	ShiftRows         int64           `json:"shift_rows"`
	ShiftL2Mean       float64         `json:"shift_l2_mean"`
	ShiftL2Median     float64         `json:"shift_l2_median"`
	ShiftL2P95        float64         `json:"shift_l2_p95"`
	ShiftNextL2Mean   float64         `json:"shift_next_l2_mean"`
	ShiftNextL2Median float64         `json:"shift_next_l2_median"`
	ShiftNextL2P95    float64         `json:"shift_next_l2_p95"`
	ModelErrorL2Mean  *float64        `json:"model_error_l2_mean,omitempty"`
	SymmetryL2Mean    *float64        `json:"symmetry_l2_mean,omitempty"`
	ShiftWarnings     []string        `json:"shift_warnings,omitempty"`
}

type fullResults struct {
	RawResults
	magnitude
}

// encode is run.Dir.WriteJSON's encoding.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestRoundTripCurrent decodes the files of three tiny runs written by
// koopq train (testdata: gaussian, kfc with its own Koopman model, and
// env none with offline diagnostics) and re-encodes them: the bytes are
// those written, except where a segment's augmenter record (decoded into
// a map, whose keys encode sorted) changes the key order, where the
// values are compared.
func TestRoundTripCurrent(t *testing.T) {
	for _, run := range []string{"gaussian", "kfc", "none"} {
		dir := filepath.Join("testdata", run)
		check := func(name string, v any, bytewise bool) {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s/%s: %v", run, name, err)
			}
			got := encode(t, v)
			if bytewise {
				if !bytes.Equal(got, b) {
					t.Errorf("%s/%s: re-encoded differs:\n%s\nwant\n%s", run, name, got, b)
				}
				return
			}
			var a, w any
			json.Unmarshal(got, &a)
			json.Unmarshal(b, &w)
			if !reflect.DeepEqual(a, w) {
				t.Errorf("%s/%s: re-encoded values differ:\n%s\nwant\n%s", run, name, got, b)
			}
		}
		var res fullResults
		check(ResultsFile, &res, run != "kfc")
		if run == "kfc" && (res.Segments[0].Augment == nil || res.Inputs.KoopmanModel == nil || res.ModelErrorL2Mean == nil) {
			t.Errorf("kfc: the fixture lacks what it is for: %+v", res)
		}
		if run == "none" && (res.Offline == nil || res.History[0].Offline == nil) {
			t.Errorf("none: no offline record")
		}
		var hist []HistoryPoint[json.RawMessage]
		check(HistoryFile, &hist, true)
		var in Inputs
		check(InputsFile, &in, true)
	}
}

// TestReadCommitted reads every results.json and history.json committed
// under results/ (written by koopq since the study began, some before
// fields were added): each decodes, and a round trip keeps every key and
// value it has (it may add the keys of fields added since, as zero values).
func TestReadCommitted(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join("..", "results"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || (e.Name() != ResultsFile && e.Name() != HistoryFile) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if e.Name() == HistoryFile {
			var h []HistoryPoint[json.RawMessage]
			if err := json.Unmarshal(b, &h); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			return nil
		}
		var res fullResults
		if err := json.Unmarshal(b, &res); err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		var orig, again map[string]any
		json.Unmarshal(b, &orig)
		json.Unmarshal(encode(t, res), &again)
		if where := lost(orig, again, ""); where != "" {
			t.Errorf("%s: %s is lost or changed by a round trip through Results", p, where)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("read %d committed files; the results/ tree moved?", n)
	}
}

// TestHistoryPointWithoutScore: a point that lacks normalized_score has
// no score (NaN), not a score of 0.
func TestHistoryPointWithoutScore(t *testing.T) {
	var h []HistoryPoint[json.RawMessage]
	if err := json.Unmarshal([]byte(`[{"step":5},{"step":10,"normalized_score":null},{"step":15,"normalized_score":0}]`), &h); err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || h[0].Normalized == h[0].Normalized || h[1].Normalized == h[1].Normalized || h[2].Normalized != 0 || h[0].Step != 5 {
		t.Errorf("got %+v", h)
	}
	if b := encode(t, h[:1]); !strings.Contains(string(b), `"normalized_score": null`) {
		t.Errorf("NaN encodes as %s", b)
	}
}

// lost is the path of the first value of was that is missing or different
// in now (generic JSON values), "" when was is contained in now: objects
// may have gained keys, everything else is equal.
func lost(was, now any, at string) string {
	switch w := was.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			return at
		}
		for k, v := range w {
			nv, ok := n[k]
			if !ok {
				return at + "." + k
			}
			if p := lost(v, nv, at+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		n, ok := now.([]any)
		if !ok || len(n) != len(w) {
			return at
		}
		for i := range w {
			if p := lost(w[i], n[i], fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(was, now) {
		return at
	}
	return ""
}

// Plain CQL is labelled "cql" under its current and its legacy name; other
// augment values are their own labels.
func TestMethodLabel(t *testing.T) {
	for in, want := range map[string]string{"cql": "cql", "none": "cql", "kfc++": "kfc++", "": ""} {
		if got := MethodLabel(in); got != want {
			t.Errorf("MethodLabel(%q) = %q, want %q", in, got, want)
		}
	}
	if !IsPlainCQL("none") || !IsPlainCQL("cql") || IsPlainCQL("gaussian") {
		t.Error("IsPlainCQL")
	}
}

// A history point records a success rate only for envs with a success
// test: other points marshal as before, and the rate reads back.
func TestHistoryPointSuccessRate(t *testing.T) {
	plain, err := json.Marshal(HistoryPoint[json.RawMessage]{Step: 5, Mean: 1, Normalized: Score(math.NaN())})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"step":5,"mean_return":1,"std_return":0,"normalized_score":null}`; string(plain) != want {
		t.Errorf("point without a success test: %s, want %s", plain, want)
	}
	sr := Score(0.25)
	b, err := json.Marshal(HistoryPoint[json.RawMessage]{Step: 5, Normalized: Score(math.NaN()), SuccessRate: &sr})
	if err != nil {
		t.Fatal(err)
	}
	var back HistoryPoint[json.RawMessage]
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.SuccessRate == nil || *back.SuccessRate != 0.25 {
		t.Fatalf("success rate read back from %s: %v", b, back.SuccessRate)
	}
}
