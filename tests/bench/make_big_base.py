"""A frozen base of configurable size saved with external data, for tests/bench/big-base.mjs
(issue 17's benchmark rows). Run: /usr/bin/python3 tests/bench/make_big_base.py OUT.onnx
[LAYERS] [WIDTH] [CLASSES]  (default 24 2048 10: ~100M parameters, 403 MB of float32).

  X[N,WIDTH] -> LAYERS x (Gemm(transB=1) + Relu) -> Gemm head -> logits[N,CLASSES]

Base layers are l{i}.weight / l{i}.bias, the head head.weight / head.bias; every initializer of
1 KiB or more lives in OUT.onnx.data (onnx.save_model's save_as_external_data=True). Weights
are He-scaled normals from a fixed seed, so activations stay finite at any depth.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    width = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
    classes = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    rng = np.random.default_rng(17)
    inits, nodes = [], []
    x = 'X'
    for i in range(layers):
        w = rng.standard_normal((width, width), dtype=np.float32)
        w *= np.float32(np.sqrt(2.0 / width))
        inits.append(numpy_helper.from_array(w, f'l{i}.weight'))
        inits.append(numpy_helper.from_array(np.zeros(width, np.float32) + np.float32(0.01), f'l{i}.bias'))
        nodes.append(helper.make_node('Gemm', [x, f'l{i}.weight', f'l{i}.bias'], [f'h{i}'], transB=1))
        nodes.append(helper.make_node('Relu', [f'h{i}'], [f'a{i}']))
        x = f'a{i}'
    hw = (rng.standard_normal((classes, width), dtype=np.float32) * np.float32(1 / np.sqrt(width)))
    inits.append(numpy_helper.from_array(hw, 'head.weight'))
    inits.append(numpy_helper.from_array(np.zeros(classes, np.float32), 'head.bias'))
    nodes.append(helper.make_node('Gemm', [x, 'head.weight', 'head.bias'], ['logits'], transB=1))
    g = helper.make_graph(nodes, 'big_base', [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['N', width])],
                          [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', classes])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='webtrain-bench')
    m.ir_version = 8
    location = os.path.basename(out) + '.data'
    side = os.path.join(os.path.dirname(os.path.abspath(out)), location)
    if os.path.exists(side):
        os.remove(side)  # onnx.save_model appends to an existing side file
    onnx.save_model(m, out, save_as_external_data=True, all_tensors_to_one_file=True, location=location,
                    size_threshold=1024)
    params = sum(int(np.prod(t.dims)) for t in g.initializer)
    print(f'{out}: {layers} x {width}, {params} parameters, side file {os.path.getsize(side)} bytes')


if __name__ == '__main__':
    main()
