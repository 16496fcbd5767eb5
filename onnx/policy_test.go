package onnx

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
	"google.golang.org/protobuf/encoding/protowire"
)

func testPolicy(obs, act int) *sac.Policy {
	actor := sac.NewActor(sac.DefaultNetConfig(), obs, act, rand.New(rand.NewPCG(1, 2)))
	sc := sac.ActionScale{Low: make([]float32, act), High: make([]float32, act)}
	for i := range sc.High {
		sc.Low[i], sc.High[i] = -1, 1
	}
	return sac.NewPolicy(actor, dataset.Identity(obs), sc)
}

// TestExportPolicyRefusesMalformed: policies that are not koopq's actor
// shape are errors, not panics or wrong graphs.
func TestExportPolicyRefusesMalformed(t *testing.T) {
	cases := map[string]struct {
		mod  func(p *sac.Policy) *sac.Policy
		want string
	}{
		"nil":          {func(*sac.Policy) *sac.Policy { return nil }, "no actor"},
		"tanh hidden":  {func(p *sac.Policy) *sac.Policy { p.Actor.Hidden = nn.Tanh; return p }, "activations"},
		"odd output":   {func(p *sac.Policy) *sac.Policy { p.ActDim = 3; return p }, "want 2·3"},
		"nan weight":   {func(p *sac.Policy) *sac.Policy { p.Actor.Layers[1].W.Data[5] = float32(math.NaN()); return p }, "non-finite"},
		"no bias":      {func(p *sac.Policy) *sac.Policy { p.Actor.Layers[0].B = nil; return p }, "biased"},
		"short bounds": {func(p *sac.Policy) *sac.Policy { p.Scale.Low = p.Scale.Low[:1]; return p }, "bounds"},
		"inf bound":    {func(p *sac.Policy) *sac.Policy { p.Scale.High[0] = float32(math.Inf(1)); return p }, "not finite"},
		"bad norm":     {func(p *sac.Policy) *sac.Policy { p.Norm.Std[0] = 0; return p }, "normalizer"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ExportPolicy(c.mod(testPolicy(4, 2)), Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestExportPolicyWire: the output is deterministic, parses as protobuf,
// and --stochastic adds one output and its Clip node.
func TestExportPolicyWire(t *testing.T) {
	p := testPolicy(4, 2)
	a, err := ExportPolicy(p, Options{Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ExportPolicy(p, Options{Version: "v"})
	if !bytes.Equal(a, b) {
		t.Fatal("two exports of one policy differ")
	}
	s, err := ExportPolicy(p, Options{Version: "v", Stochastic: true})
	if err != nil {
		t.Fatal(err)
	}
	count := func(model []byte) (nodes, outputs int) {
		graph := field(t, model, modelGraph)
		for len(graph) > 0 {
			num, typ, n := protowire.ConsumeTag(graph)
			if n < 0 {
				t.Fatal("bad tag")
			}
			m := protowire.ConsumeFieldValue(num, typ, graph[n:])
			if m < 0 {
				t.Fatal("bad field")
			}
			switch num {
			case graphNode:
				nodes++
			case graphOutput:
				outputs++
			}
			graph = graph[n+m:]
		}
		return
	}
	nd, od := count(a)
	ns, os := count(s)
	// identity normalizer: 2×(Gemm, Relu), Gemm, Tanh, Add, Mul, Add.
	if nd != 9 || od != 1 || ns != 11 || os != 2 {
		t.Fatalf("nodes/outputs: deterministic %d/%d, stochastic %d/%d; want 9/1, 11/2", nd, od, ns, os)
	}
}

// field returns the bytes of the first length-delimited field num of msg.
func field(t *testing.T, msg []byte, num protowire.Number) []byte {
	t.Helper()
	for len(msg) > 0 {
		n, typ, k := protowire.ConsumeTag(msg)
		if k < 0 {
			t.Fatal("bad tag")
		}
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg[k:])
			if m < 0 {
				t.Fatal("bad bytes")
			}
			return v
		}
		m := protowire.ConsumeFieldValue(n, typ, msg[k:])
		if m < 0 {
			t.Fatal("bad field")
		}
		msg = msg[k+m:]
	}
	t.Fatalf("field %d missing", num)
	return nil
}
