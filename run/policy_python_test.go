package run

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/sac"
)

// debianPython is the interpreter CI installs python3-numpy for (Makefile
// APT_PKGS); the test fails, not skips, when it is missing.
const debianPython = "/usr/bin/python3"

// TestPythonExampleMatchesPolicy runs examples/python/policy_numpy.py (the
// NumPy-only reader docs/policy-format.md describes) on a saved policy of
// unusual shape (5 → 2, three hidden layers, non-trivial normalizer and
// asymmetric bounds) and checks its actions on 1,000 states against the
// policy's own Act within 1e-5.
func TestPythonExampleMatchesPolicy(t *testing.T) {
	const rows, obs, act = 1000, 5, 2
	rng := rand.New(rand.NewPCG(70, 3))
	net := sac.NetConfig{Hidden: []int{64, 256, 32}, Init: "xavier"}
	actor := sac.NewActor(net, obs, act, rng)
	norm := dataset.Identity(obs)
	for i := range norm.Mean {
		norm.Mean[i] = float32(3 * rng.NormFloat64())
		norm.Std[i] = float32(0.1 + 3*rng.Float64())
	}
	scale := sac.ActionScale{Low: []float32{-0.4, 2}, High: []float32{1.5, 7}}
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.safetensors")
	if err := sac.SavePolicy(path, sac.NewPolicy(actor, norm, scale), net, "", nil); err != nil {
		t.Fatal(err)
	}
	p, _, err := sac.ReadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	states := make([]float32, rows*obs)
	for k := range states {
		j := k % obs
		states[k] = norm.Mean[j] + 2*norm.Std[j]*float32(rng.NormFloat64())
	}
	writeNPY32(t, filepath.Join(dir, "obs.npy"), rows, obs, states)

	script, err := filepath.Abs("../examples/python/policy_numpy.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(debianPython, script, path, "--obs", filepath.Join(dir, "obs.npy"), "--out", filepath.Join(dir, "act.npy"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v (CI installs python3-numpy: make deps)\n%s", debianPython, script, err, out)
	}
	got := readNPY64(t, filepath.Join(dir, "act.npy"), rows, act)
	want := make([]float64, act)
	x := make([]float64, obs)
	var worst float64
	for k := 0; k < rows; k++ {
		for j := range x {
			x[j] = float64(states[k*obs+j])
		}
		p.Act(x, want)
		for j := range want {
			worst = math.Max(worst, math.Abs(got[k*act+j]-want[j]))
			if !(math.Abs(got[k*act+j]-want[j]) <= 1e-5) {
				t.Fatalf("state %d action %d: python %v, koopq %v", k, j, got[k*act+j], want[j])
			}
		}
	}
	t.Logf("max |python − koopq| over %d states: %.3g", rows, worst)

	// The script refuses a corrupted file (its checksum check).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 0x40
	bad := filepath.Join(dir, "bad.safetensors")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(debianPython, script, bad).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("checksum mismatch")) {
		t.Errorf("corrupted policy: err %v, output %s; want a checksum mismatch", err, out)
	}
}

// writeNPY32 writes x [rows, cols] as a float32 .npy file (format 1.0).
func writeNPY32(t *testing.T, path string, rows, cols int, x []float32) {
	t.Helper()
	h := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	binary.Write(&b, binary.LittleEndian, x)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readNPY64 reads a float64 C-order .npy file of shape [rows, cols].
func readNPY64(t *testing.T, path string, rows, cols int) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		t.Fatalf("%s: not a .npy file", path)
	}
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	h := string(b[10 : 10+hl])
	m := regexp.MustCompile(`'descr': '<f8', 'fortran_order': False, 'shape': \((\d+), (\d+)\)`).FindStringSubmatch(h)
	if m == nil {
		t.Fatalf("%s: header %q, want float64 C-order 2-D", path, h)
	}
	if r, _ := strconv.Atoi(m[1]); r != rows {
		t.Fatalf("%s: %s rows, want %d", path, m[1], rows)
	}
	if c, _ := strconv.Atoi(m[2]); c != cols {
		t.Fatalf("%s: %s cols, want %d", path, m[2], cols)
	}
	out := make([]float64, rows*cols)
	if err := binary.Read(bytes.NewReader(b[10+hl:]), binary.LittleEndian, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}
