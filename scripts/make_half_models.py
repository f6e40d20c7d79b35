#!/usr/bin/python3
"""Writes the float16 test models of tests/data (half-precision frozen weights, limits):

  half-mlp.onnx        a float16 model's weights as they are: x[batch,8] -> MatMul(Cast(W1 float16
                       [8,16])) -> Add b1 (float) -> Relu -> Gemm(A, Cast(W2 float16 [4,16]),
                       transB=1) + b2 -> out [batch,4]; an Embedding-like Gather of a float16
                       table E[10,4] by ids[batch] added to the output. W1 in raw_data, W2 in
                       int32_data (the other storage form ONNX allows for float16).
  half-mlp-f32.onnx    the same with every float16 weight widened to float32 (no Casts): the
                       reference the float16 model must agree with.
  half-mlp-ext.onnx    half-mlp.onnx saved with external data (half-mlp-ext.onnx.data, every
                       initializer in it: float16 ones too)
  half-mlp-ext-len.onnx  the same with W1's external length 2 bytes short (float16 [8,16] needs
                       256)
  over-4gb.onnx        x[batch,1] -> three Expand to [batch, 2^24] -> Sum: at batch 24 the three
                       Expands alone need 4.5 GiB (each 1.5 GiB, below the 2 GiB a single
                       value may have in wasm32), more than a wasm32 heap; tiny as a file.

Run: /usr/bin/python3 scripts/make_half_models.py (python3-onnx)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def half_mlp(widened):
    rng = np.random.default_rng(17)
    w1 = (rng.standard_normal((8, 16)) * 0.5).astype(np.float16)
    w2 = (rng.standard_normal((4, 16)) * 0.5).astype(np.float16)
    emb = rng.standard_normal((10, 4)).astype(np.float16)
    b1 = rng.standard_normal((16,)).astype(np.float32)
    b2 = rng.standard_normal((4,)).astype(np.float32)
    inits = [numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(b2, "b2")]
    nodes = []
    if widened:
        inits += [numpy_helper.from_array(w.astype(np.float32), n) for w, n in ((w1, "W1"), (w2, "W2"), (emb, "E"))]
        w1n, w2n, en = "W1", "W2", "E"
    else:
        inits.append(numpy_helper.from_array(w1, "W1"))
        t = helper.make_tensor("W2", TensorProto.FLOAT16, w2.shape, w2.flatten().tolist())
        assert len(t.int32_data) == w2.size and not t.raw_data
        inits.append(t)  # int32_data: the bits of each float16
        inits.append(numpy_helper.from_array(emb, "E"))
        for n in ("W1", "W2", "E"):
            nodes.append(helper.make_node("Cast", [n], [n + "_f"], to=TensorProto.FLOAT, name="cast_" + n))
        w1n, w2n, en = "W1_f", "W2_f", "E_f"
    nodes += [
        helper.make_node("MatMul", ["x", w1n], ["h"], name="mm1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="add1"),
        helper.make_node("Relu", ["hb"], ["a"], name="relu"),
        helper.make_node("Gemm", ["a", w2n, "b2"], ["g"], transB=1, name="gemm2"),
        helper.make_node("Gather", [en, "ids"], ["e"], axis=0, name="gather"),
        helper.make_node("Add", ["g", "e"], ["out"], name="add2"),
    ]
    graph = helper.make_graph(
        nodes, "half_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 4])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_half_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def over_4gb():
    k = 1 << 24
    shape = numpy_helper.from_array(np.array([1, k], dtype=np.int64), "shape")
    nodes = [helper.make_node("Expand", ["x", "shape"], [f"e{i}"], name=f"expand{i}") for i in range(3)]
    nodes.append(helper.make_node("Sum", ["e0", "e1", "e2"], ["y"], name="sum"))
    graph = helper.make_graph(
        nodes, "over_4gb", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", k])], [shape])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_half_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


if __name__ == "__main__":
    onnx.save(half_mlp(False), os.path.join(HERE, "half-mlp.onnx"))
    onnx.save(half_mlp(True), os.path.join(HERE, "half-mlp-f32.onnx"))
    onnx.save(over_4gb(), os.path.join(HERE, "over-4gb.onnx"))
    side = os.path.join(HERE, "half-mlp-ext.onnx.data")
    if os.path.exists(side):
        os.remove(side)  # onnx.save_model appends to an existing side file
    onnx.save_model(half_mlp(False), os.path.join(HERE, "half-mlp-ext.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="half-mlp-ext.onnx.data", size_threshold=0)
    m = onnx.load_model(os.path.join(HERE, "half-mlp-ext.onnx"), load_external_data=False)
    for t in m.graph.initializer:
        if t.name == "W1":
            for e in t.external_data:
                if e.key == "length":
                    e.value = str(int(e.value) - 2)
    onnx.save_model(m, os.path.join(HERE, "half-mlp-ext-len.onnx"))
