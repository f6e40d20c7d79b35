#!/usr/bin/python3
"""Writes tests/data/name-clash-*.onnx: small forward models whose values already carry names the
artifact generator creates (regression cases). x[batch,4] -> MatMul W[4,3] -> Add b
-> out; the MatMul's output is named after a name the generator would give:

  name-clash-grad.onnx    'W_grad'                     (internal: the generator picks another)
  name-clash-buffer.onnx  'W_grad.accumulation.buffer' (ONNX Runtime's name: a clear error)

Run: /usr/bin/python3 scripts/make_name_clash_models.py (python3-onnx)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def model(hidden_name):
    rng = np.random.default_rng(14)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((3,)).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "W"], [hidden_name], name="matmul"),
        helper.make_node("Add", [hidden_name, "b"], ["out"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "name_clash",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 3])],
        [w, b],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="webtrain-tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


for file, name in [("name-clash-grad.onnx", "W_grad"), ("name-clash-buffer.onnx", "W_grad.accumulation.buffer")]:
    onnx.save(model(name), os.path.join(HERE, file))
    print("wrote", file)
