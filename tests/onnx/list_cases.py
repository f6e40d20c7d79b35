#!/usr/bin/python3
"""List the generated ONNX node test cases with their ops and dtypes.

Usage:
  /usr/bin/python3 tests/onnx/list_cases.py [DIR]               one line per case
  /usr/bin/python3 tests/onnx/list_cases.py --candidates [DIR]  cases the runtime could run
  /usr/bin/python3 tests/onnx/list_cases.py --check [DIR]       validate tests/onnx/allowlist.txt

DIR defaults to build/onnx-node-tests (made by tests/onnx/generate.py).

Per case: the op types of the graph (nested graphs included), and the element
types of graph inputs, outputs, initializers/attribute tensors and inferred
intermediate values, as ONNX TensorProto codes (float32=1, int32=6, int64=7,
bool=9 are the ones the runtime supports). A non-tensor value (sequence,
optional, map) shows as "seq", "opt" or "map".
"""

import os
import re
import sys
from collections import OrderedDict, defaultdict

import onnx
from onnx import shape_inference

HERE = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.realpath(os.path.join(HERE, "..", ".."))
DEFAULT_DIR = os.path.join(REPO, "build", "onnx-node-tests")
ALLOWLIST = os.path.join(HERE, "allowlist.txt")

SUPPORTED_DTYPES = {1, 6, 7, 9}
SUPPORTED_OPS = """
Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool
BatchNormalization Cast CastLike Ceil Celu Clip Concat Constant ConstantOfShape Conv
ConvTranspose Cos Cosh CumSum Div Dropout Einsum Elu Equal Erf Exp Expand Flatten Floor Gather
GatherElements GatherND Gelu Gemm GroupNormalization GlobalAveragePool GlobalMaxPool Greater GRU
GreaterOrEqual HardSigmoid HardSwish Identity InstanceNormalization IsInf IsNaN LayerNormalization LeakyRelu
Less LessOrEqual Log LogSoftmax LSTM MatMul Max MaxPool Mean Min Mish Mod Mul Neg
NegativeLogLikelihoodLoss Not Or PRelu Pad Pow Range Reciprocal ReduceL1 ReduceL2
ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum
ReduceSumSquare Relu Reshape Resize RNN Round Scatter ScatterElements ScatterND Selu Shape Shrink
Sigmoid Sign Sin Sinh Size Slice Softmax SoftmaxCrossEntropyLoss Softplus Softsign Swish
Split Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK Transpose Trilu Unsqueeze Upsample
Where Xor
""".split()

# Cases whose expected outputs come from numpy's random generator inside the
# reference implementation: no other runtime can reproduce them.
RANDOM_OUTPUT = re.compile(r"^test_training_dropout(?!_zero_ratio)")


def value_kind(type_proto):
    if type_proto.HasField("tensor_type"):
        return type_proto.tensor_type.elem_type
    if type_proto.HasField("sequence_type"):
        return "seq"
    if type_proto.HasField("optional_type"):
        return "opt"
    if type_proto.HasField("map_type"):
        return "map"
    return "?"


def walk_graph(graph, ops, tensor_dtypes, depth, info):
    for init in graph.initializer:
        tensor_dtypes.append(init.data_type)
    for sp in graph.sparse_initializer:
        tensor_dtypes.append(sp.values.data_type)
    for node in graph.node:
        ops.append(node.op_type if not node.domain or node.domain == "ai.onnx"
                   else f"{node.domain}:{node.op_type}")
        for attr in node.attribute:
            if attr.HasField("t"):
                tensor_dtypes.append(attr.t.data_type)
            for t in attr.tensors:
                tensor_dtypes.append(t.data_type)
            subgraphs = ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
            for g in subgraphs:
                info["nested"] = True
                walk_graph(g, ops, tensor_dtypes, depth + 1, info)


def describe(case_dir):
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    g = model.graph
    ops, tensor_dtypes, info = [], [], {"nested": False}
    walk_graph(g, ops, tensor_dtypes, 0, info)
    inner = []
    try:
        inferred = shape_inference.infer_shapes(model)
        inner = [value_kind(v.type) for v in inferred.graph.value_info]
    except Exception:  # inference is best effort; unknown stays unknown
        pass
    opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
    return OrderedDict(
        name=os.path.basename(case_dir),
        ops=list(OrderedDict.fromkeys(ops)),
        inputs=[value_kind(v.type) for v in g.input],
        outputs=[value_kind(v.type) for v in g.output],
        tensors=sorted(set(tensor_dtypes)),
        inner=sorted(set(inner), key=str),
        nested=info["nested"],
        opset=opsets.get("ai.onnx"),
        domains=sorted(d for d in opsets if d != "ai.onnx"),
    )


def group_op(desc):
    """The operator a case tests: the op of the plain (non-expanded) case."""
    name = re.sub(r"_dup\d+$", "", desc["name"])
    if name.endswith("_expanded"):
        return None  # resolved by the caller from the base case
    return desc["ops"][0] if len(desc["ops"]) == 1 else "+".join(desc["ops"])


def load_all(root):
    names = sorted(n for n in os.listdir(root)
                   if os.path.isfile(os.path.join(root, n, "model.onnx")))
    descs = [describe(os.path.join(root, n)) for n in names]
    by_name = {d["name"]: d for d in descs}
    for d in descs:
        op = group_op(d)
        if op is None:
            base = by_name.get(re.sub(r"_expanded$", "", re.sub(r"_dup\d+$", "", d["name"])))
            op = group_op(base) if base else d["ops"][0]
        d["op"] = op
    return descs


def rejection(d):
    """Why the runtime cannot run this case, or None if it could."""
    bad_ops = [o for o in d["ops"] if o not in SUPPORTED_OPS]
    if bad_ops:
        return "ops " + ",".join(bad_ops)
    if d["nested"]:
        return "nested graph"
    if d["domains"]:
        return "domain " + ",".join(d["domains"])
    for what in ("inputs", "outputs", "tensors", "inner"):
        bad = [t for t in d[what] if t not in SUPPORTED_DTYPES]
        if bad:
            return f"{what} dtype " + ",".join(map(str, sorted(set(bad), key=str)))
    if RANDOM_OUTPUT.match(d["name"]):
        return "random output"
    return None


def fmt(values):
    return ",".join(map(str, values)) or "-"


def read_allowlist(path=ALLOWLIST):
    entries = OrderedDict()
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            tol = {}
            for p in parts[1:]:
                m = re.fullmatch(r"(rtol|atol)=([0-9.eE+-]+)", p)
                if not m:
                    raise SystemExit(f"{path}:{lineno}: bad token {p!r}")
                tol[m.group(1)] = float(m.group(2))
            if parts[0] in entries:
                raise SystemExit(f"{path}:{lineno}: duplicate {parts[0]}")
            entries[parts[0]] = tol
    return entries


def main(argv):
    args = argv[1:]
    mode = "list"
    if args and args[0] in ("--candidates", "--check", "-h", "--help"):
        mode = args.pop(0)
    if mode in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = os.path.abspath(args[0] if args else DEFAULT_DIR)
    if not os.path.isdir(root):
        sys.stderr.write(f"list_cases.py: no {root}; run tests/onnx/generate.py first\n")
        return 1
    descs = load_all(root)

    if mode == "list":
        for d in descs:
            why = rejection(d)
            print(f"{d['name']}  op={d['op']} ops={fmt(d['ops'])} opset={d['opset']} "
                  f"in={fmt(d['inputs'])} out={fmt(d['outputs'])} "
                  f"tensors={fmt(d['tensors'])} inner={fmt(d['inner'])}"
                  + ("  nested" if d["nested"] else "")
                  + (f"  # {why}" if why else "  # ok"))
        return 0

    if mode == "--candidates":
        # Grouped by tested op, in SUPPORTED_OPS order, then the function
        # expansions of other ops that only use supported ops.
        groups = defaultdict(list)
        for d in descs:
            groups[d["op"]].append(d)
        others = sorted(op for op in groups if op not in SUPPORTED_OPS)
        total = 0
        for op in SUPPORTED_OPS + others:
            cases = groups.get(op, [])
            ok = [d for d in cases if rejection(d) is None]
            if op not in SUPPORTED_OPS and not ok:
                continue
            total += len(ok)
            if not cases:
                note = "no case in this onnx version's node suite"
            else:
                note = f"{len(ok)} of {len(cases)} cases"
                opsets = sorted({d["opset"] for d in ok if d["opset"] is not None})
                if opsets:
                    note += ", opset " + ",".join(map(str, opsets))
                if op not in SUPPORTED_OPS:
                    note += ", function expansions of an unsupported op"
            print(f"\n# --- {op}: {note}")
            for d in ok:
                print(d["name"])
            for d in cases:
                if rejection(d) is None or op not in SUPPORTED_OPS:
                    continue
                print(f"#   not runnable: {d['name']}  ({rejection(d)})")
        print(f"\n# total runnable: {total}")
        return 0

    # --check
    entries = read_allowlist()
    known = {d["name"]: d for d in descs}
    errors = 0
    for name in entries:
        if name not in known:
            print(f"allowlist: unknown case {name}")
            errors += 1
        elif rejection(known[name]):
            print(f"allowlist: {name} is not runnable: {rejection(known[name])}")
            errors += 1
    print(f"allowlist: {len(entries)} cases, {errors} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
