package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// debianPython is the interpreter CI installs python3-numpy and
// python3-onnx for (Makefile APT_PKGS); tests that need it fail, not skip,
// when it or its modules are missing.
const debianPython = "/usr/bin/python3"

// writeNPY writes x [rows, cols] as a little-endian float32 (or float64
// with f64) .npy file, NumPy format version 1.0.
func writeNPY(t *testing.T, path string, rows, cols int, x []float64, f64 bool) {
	t.Helper()
	descr := "<f4"
	if f64 {
		descr = "<f8"
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr, rows, cols)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	for _, v := range x {
		if f64 {
			binary.Write(&b, binary.LittleEndian, v)
		} else {
			binary.Write(&b, binary.LittleEndian, float32(v))
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// randomPolicy makes a 2×256 actor for obs → act with random weights, a
// random normalizer (identity when identity is set) and bounds scale,
// saved as a policy file at path.
func randomPolicy(t *testing.T, path, envName string, obs, act int, scale sac.ActionScale, identity bool, seed uint64) *sac.Policy {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	actor := sac.NewActor(sac.DefaultNetConfig(), obs, act, rng)
	norm := dataset.Identity(obs)
	if !identity {
		for i := range norm.Mean {
			norm.Mean[i] = float32(rng.NormFloat64())
			norm.Std[i] = float32(0.3 + 2*rng.Float64())
		}
	}
	p := sac.NewPolicy(actor, norm, scale)
	if err := sac.SavePolicy(path, p, sac.DefaultNetConfig(), envName, nil); err != nil {
		t.Fatal(err)
	}
	q, _, err := sac.ReadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

type onnxCheck struct {
	MaxAbsDiff       []float64         `json:"max_abs_diff"`
	MaxAbsDiffBatch1 []float64         `json:"max_abs_diff_batch1"`
	Rows             int               `json:"rows"`
	Outputs          []string          `json:"outputs"`
	Inputs           []string          `json:"inputs"`
	Ops              []string          `json:"ops"`
	Opset            int               `json:"opset"`
	Metadata         map[string]string `json:"metadata"`
}

// TestExportONNXMatchesPolicy exports policies of every env's shape and a
// normalizer-free one through the CLI and has an independent reader
// (python3-onnx's checker and a NumPy evaluator of the graph's nodes,
// testdata/onnx_eval.py) compute the actions of 10,000 states, which must
// equal the policy's own Act within 1e-5; --stochastic's log_std output
// must equal the actor's clamped log σ.
func TestExportONNXMatchesPolicy(t *testing.T) {
	const rows = 10000
	cases := []struct {
		env        string
		identity   bool
		stochastic bool
	}{
		{"pendulum", false, true}, {"hopper", false, false}, {"halfcheetah", false, true},
		{"walker2d", false, false}, {"ant", false, true}, {"pendulum", true, false},
	}
	script, err := filepath.Abs("testdata/onnx_eval.py")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		name := c.env
		if c.identity {
			name += "-identity"
		}
		t.Run(name, func(t *testing.T) {
			e, err := env.Make(c.env)
			if err != nil {
				t.Fatal(err)
			}
			scale, err := sac.Scale(e)
			if err != nil {
				t.Fatal(err)
			}
			obs, act := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
			dir := t.TempDir()
			pf := filepath.Join(dir, "policy.safetensors")
			p := randomPolicy(t, pf, c.env, obs, act, scale, c.identity, uint64(i))

			args := []string{"export", "--policy", pf, "--out", filepath.Join(dir, "p.onnx")}
			if c.stochastic {
				args = append(args, "--stochastic")
			}
			if c.identity { // --policy as a run directory
				args[2] = dir
			}
			r := runCLI(t, dir, time.Minute, args...)
			if r.Code != 0 {
				t.Fatalf("export: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}

			rng := rand.New(rand.NewPCG(uint64(i), 99))
			states := make([]float64, rows*obs)
			for k := range states {
				j := k % obs
				states[k] = float64(float32(float64(p.Norm.Mean[j]) + 1.5*float64(p.Norm.Std[j])*rng.NormFloat64()))
			}
			actions := make([]float64, rows*act)
			logStd := make([]float64, rows*act)
			var cache nn.Cache
			x := make([]float32, obs)
			for k := 0; k < rows; k++ {
				p.Act(states[k*obs:(k+1)*obs], actions[k*act:(k+1)*act])
				for j := range x {
					x[j] = float32(states[k*obs+j])
				}
				p.Norm.Apply(x)
				out := p.Actor.Forward(&cache, x, 1)
				for j := 0; j < act; j++ {
					logStd[k*act+j] = float64(max(nn.LogStdMin, min(nn.LogStdMax, out[act+j])))
				}
			}
			writeNPY(t, filepath.Join(dir, "s.npy"), rows, obs, states, false)
			writeNPY(t, filepath.Join(dir, "a.npy"), rows, act, actions, true)
			writeNPY(t, filepath.Join(dir, "ls.npy"), rows, act, logStd, true)
			pyArgs := []string{script, filepath.Join(dir, "p.onnx"), filepath.Join(dir, "s.npy"), filepath.Join(dir, "a.npy")}
			if c.stochastic {
				pyArgs = append(pyArgs, filepath.Join(dir, "ls.npy"))
			}
			cmd := exec.Command(debianPython, pyArgs...)
			cmd.Dir = dir
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s %s: %v (CI installs python3-numpy and python3-onnx: make deps)\n%s%s",
					debianPython, script, err, so.String(), se.String())
			}
			var got onnxCheck
			if err := json.Unmarshal(so.Bytes(), &got); err != nil {
				t.Fatalf("onnx_eval.py output %q: %v", so.String(), err)
			}
			wantOut := []string{"action"}
			if c.stochastic {
				wantOut = append(wantOut, "log_std")
			}
			if strings.Join(got.Outputs, ",") != strings.Join(wantOut, ",") || got.Rows != rows || got.Opset < 13 {
				t.Fatalf("model: outputs %v rows %d opset %d, want %v, %d, ≥ 13", got.Outputs, got.Rows, got.Opset, wantOut, rows)
			}
			for k, d := range append(got.MaxAbsDiff, got.MaxAbsDiffBatch1...) {
				if !(d <= 1e-5) {
					t.Errorf("output %d: max |onnx − koopq| = %.3g, want ≤ 1e-5", k%len(wantOut), d)
				}
			}
			hasNorm := strings.Contains(strings.Join(got.Ops, ","), "Sub")
			if hasNorm == c.identity {
				t.Errorf("ops %v: normalization nodes present = %v for identity normalizer = %v", got.Ops, hasNorm, c.identity)
			}
			if got.Metadata["env"] != c.env || got.Metadata["obs_dim"] != fmt.Sprint(obs) || len(got.Metadata["source_sha256"]) != 64 ||
				len(got.Metadata["koopq.commit"]) != 40 {
				t.Errorf("metadata %v", got.Metadata)
			}
			t.Logf("%s %d→%d: max |Δaction| %.3g (batch 1: %.3g), ops %v", c.env, obs, act, got.MaxAbsDiff[0], got.MaxAbsDiffBatch1[0], got.Ops)
		})
	}
}

// TestExportBadInput: not a policy, a truncated policy, a missing file, a
// directory without a policy and a missing --policy are clear errors, and
// no output file is left behind.
func TestExportBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "policy.safetensors")
	randomPolicy(t, good, "pendulum", 3, 1, sac.ActionScale{Low: []float32{-2}, High: []float32{2}}, false, 1)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notPolicy := filepath.Join(dir, "model.safetensors")
	if err := nn.SaveSafetensors(notPolicy, []*nn.Param{nn.NewParam("w", 2, 2)}, map[string]string{"koopq.kind": "koopman"}); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"text file", []string{"--policy", write("notes.txt", []byte("hello, not a policy\n"))}, []string{"notes.txt"}},
		{"other safetensors", []string{"--policy", notPolicy}, []string{"not a koopq policy file"}},
		{"truncated", []string{"--policy", write("trunc.safetensors", b[:len(b)/2])}, []string{"trunc.safetensors"}},
		{"header only", []string{"--policy", write("head.safetensors", b[:8])}, []string{"head.safetensors"}},
		{"missing", []string{"--policy", filepath.Join(dir, "nope.safetensors")}, []string{"nope.safetensors", "no such file"}},
		{"empty run dir", []string{"--policy", empty}, []string{"without policy.safetensors"}},
		{"no policy", nil, []string{"--policy is required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-")+".onnx")
			r := runCLI(t, dir, time.Minute, append([]string{"export", "--out", out}, c.args...)...)
			expectCLIError(t, r, c.want...)
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written despite the error", out)
			}
		})
	}
}
