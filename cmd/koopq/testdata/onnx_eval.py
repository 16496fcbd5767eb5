"""Independent check of an ONNX file written by `koopq export` (used by
export_test.go; run with Debian's /usr/bin/python3 and python3-onnx).

    onnx_eval.py MODEL STATES.npy ACTIONS.npy [LOG_STD.npy]

It runs onnx.checker.check_model (full check, with shape inference), checks
opset >= 13 and a symbolic batch dimension, then evaluates the graph with
the small NumPy interpreter below (koopq's forward pass is not involved) on
STATES and on its first row alone, and prints one JSON line: the largest
absolute differences from the expected outputs and the operators used.
"""
import json
import sys

import numpy as np
import onnx
import onnx.checker
from onnx import numpy_helper


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def gemm(node, a, b, c=None):
    at = attrs(node)
    if at.get("transA", 0):
        a = a.T
    if at.get("transB", 0):
        b = b.T
    y = np.float32(at.get("alpha", 1.0)) * (a @ b)
    if c is not None:
        y = y + np.float32(at.get("beta", 1.0)) * c
    return y


OPS = {
    "Gemm": gemm,
    "MatMul": lambda n, a, b: a @ b,
    "Add": lambda n, a, b: a + b,
    "Sub": lambda n, a, b: a - b,
    "Mul": lambda n, a, b: a * b,
    "Div": lambda n, a, b: a / b,
    "Relu": lambda n, x: np.maximum(x, np.float32(0)),
    "Tanh": lambda n, x: np.tanh(x),
    "Clip": lambda n, x, lo=None, hi=None: np.clip(x, lo if lo is not None else -np.inf,
                                                   hi if hi is not None else np.inf).astype(np.float32),
}


def evaluate(model, feeds):
    env = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            raise SystemExit("unsupported domain %r" % node.domain)
        if node.op_type not in OPS:
            raise SystemExit("unsupported op %s" % node.op_type)
        args = [env[i] if i else None for i in node.input]
        out = OPS[node.op_type](node, *args)
        assert out.dtype == np.float32, (node.op_type, out.dtype)
        env[node.output[0]] = out
    return [env[o.name] for o in model.graph.output]


def main():
    model = onnx.load(sys.argv[1])
    onnx.checker.check_model(model, full_check=True)
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset < 13:
        raise SystemExit("opset %d < 13" % opset)
    for v in list(model.graph.input) + list(model.graph.output):
        d0 = v.type.tensor_type.shape.dim[0]
        if not d0.dim_param or d0.dim_value:
            raise SystemExit("%s: batch dimension is not symbolic" % v.name)
    states = np.load(sys.argv[2])
    want = [np.load(p) for p in sys.argv[3:]]
    inp = model.graph.input[0].name
    got = evaluate(model, {inp: states})
    one = evaluate(model, {inp: states[:1]})
    if len(got) != len(want):
        raise SystemExit("model has %d outputs, expected %d" % (len(got), len(want)))
    diffs = [float(np.max(np.abs(g.astype(np.float64) - w))) for g, w in zip(got, want)]
    diffs_one = [float(np.max(np.abs(g.astype(np.float64) - w[:1]))) for g, w in zip(one, want)]
    print(json.dumps({
        "max_abs_diff": diffs, "max_abs_diff_batch1": diffs_one, "rows": int(states.shape[0]),
        "outputs": [o.name for o in model.graph.output], "inputs": [i.name for i in model.graph.input],
        "ops": sorted({n.op_type for n in model.graph.node}), "opset": int(opset),
        "metadata": {p.key: p.value for p in model.metadata_props},
    }))


if __name__ == "__main__":
    main()
