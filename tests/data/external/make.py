"""Small models saved with external data, for tests/js/external*.test.mjs, tests/browser/
external.test.mjs and the CLI tests. Run: /usr/bin/python3 tests/data/external/make.py
(deterministic: the same bytes every run).

  mlp.onnx + mlp.onnx.data        X[N,4] -> MatMul/Add/Relu/MatMul/Add -> logits[N,3], every
                                  initializer in one side file (onnx.save_model's
                                  save_as_external_data=True, all_tensors_to_one_file=True,
                                  size_threshold=0)
  mlp-embedded.onnx               the same model with its weights inside
  sub.onnx + weights/sub.data     the side file in a subfolder (location 'weights/sub.data')
  bad-dotdot.onnx                 a location that leaves the folder ('../mlp.onnx.data')
  bad-absolute.onnx               an absolute location ('/etc/passwd')
  bad-offset.onnx                 W2's offset past the end of mlp.onnx.data
  missing.onnx                    a location with no file ('missing.onnx.data')
  wide.onnx                       X[N,64] -> MatMul(W1: 64 x 32, 8 KiB)/Add/Relu/MatMul/Add ->
                                  logits[N,3] with its weights inside (W1 is referenced in place
                                  with keepExternalData: true: js/inside.js)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def model(inputs=4, hidden=8):
    rng = np.random.default_rng(17)
    inits = [
        numpy_helper.from_array(rng.standard_normal((inputs, hidden)).astype(np.float32) * 0.5, 'W1'),
        numpy_helper.from_array(rng.standard_normal(hidden).astype(np.float32) * 0.1, 'B1'),
        numpy_helper.from_array(rng.standard_normal((hidden, 3)).astype(np.float32) * 0.5, 'W2'),
        numpy_helper.from_array(rng.standard_normal(3).astype(np.float32) * 0.1, 'B2'),
    ]
    nodes = [
        helper.make_node('MatMul', ['X', 'W1'], ['h0']),
        helper.make_node('Add', ['h0', 'B1'], ['h1']),
        helper.make_node('Relu', ['h1'], ['h2']),
        helper.make_node('MatMul', ['h2', 'W2'], ['h3']),
        helper.make_node('Add', ['h3', 'B2'], ['logits']),
    ]
    g = helper.make_graph(nodes, 'mlp', [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['N', inputs])],
                          [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', 3])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='webtrain-tests')
    m.ir_version = 8
    return m


def save_external(m, name, location):
    side = os.path.join(HERE, location)
    if os.path.exists(side):
        os.remove(side)  # onnx.save_model appends to an existing side file
    onnx.save_model(m, os.path.join(HERE, name), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=0)


def relocate(name, edit):
    m = onnx.load_model(os.path.join(HERE, 'mlp.onnx'), load_external_data=False)
    for t in m.graph.initializer:
        edit(t)
    onnx.save_model(m, os.path.join(HERE, name))


def set_entry(t, key, value):
    for e in t.external_data:
        if e.key == key:
            e.value = value


onnx.save_model(model(), os.path.join(HERE, 'mlp-embedded.onnx'))
save_external(model(), 'mlp.onnx', 'mlp.onnx.data')
os.makedirs(os.path.join(HERE, 'weights'), exist_ok=True)
save_external(model(), 'sub.onnx', 'weights/sub.data')
relocate('bad-dotdot.onnx', lambda t: set_entry(t, 'location', '../mlp.onnx.data'))
relocate('bad-absolute.onnx', lambda t: set_entry(t, 'location', '/etc/passwd'))
relocate('bad-offset.onnx', lambda t: set_entry(t, 'offset', '4096') if t.name == 'W2' else None)
relocate('missing.onnx', lambda t: set_entry(t, 'location', 'missing.onnx.data'))
onnx.save_model(model(64, 32), os.path.join(HERE, 'wide.onnx'))
