"""A frozen base of configurable size saved with external data, for tests/bench/big-base.mjs
(docs/performance.md's large-base rows). Run: /usr/bin/python3 tests/bench/make_big_base.py OUT.onnx
[LAYERS] [WIDTH] [CLASSES] [--float16 | --float16-as-float32 | --inside]  (default 24 2048 10:
~100M parameters, 403 MB of float32).

  X[N,WIDTH] -> LAYERS x (Gemm(transB=1) + Relu) -> Gemm head -> logits[N,CLASSES]

Base layers are l{i}.weight / l{i}.bias, the head head.weight / head.bias; every initializer of
1 KiB or more lives in OUT.onnx.data (onnx.save_model's save_as_external_data=True). Weights
are He-scaled normals from a fixed seed, so activations stay finite at any depth.

--inside: the same model with every weight inside OUT.onnx (no side file: how torch.onnx.export
saves a model under 2 GB); the same bytes as the external-data form holds in its side file.

--float16: the base's weights are float16 initializers read through Cast(to=FLOAT) (as a
float16 export is), written straight to the side file layer by layer (one layer in memory at a
time: a 16 x 8192 base, 1.07B parameters, is a 2.1 GB side file), the model's tensors
referring to it (data_location EXTERNAL, offsets past 2 GB). --float16-as-float32: the same
weights, rounded to float16, stored as float32 (the float16 run's twin, for comparing them).
The head and biases are float32 in every form and identical between them.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def streamed(out, layers, width, classes, as_float32):
    """Writes OUT + OUT.data one tensor at a time; the model refers to the side file."""
    rng = np.random.default_rng(17)
    location = os.path.basename(out) + '.data'
    side = os.path.join(os.path.dirname(os.path.abspath(out)), location)
    inits, nodes = [], []
    with open(side, 'wb') as f:
        def put(name, arr, dtype):
            offset = f.tell()
            f.write(arr.tobytes())
            t = TensorProto()
            t.name = name
            t.data_type = dtype
            t.dims.extend(arr.shape)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (('location', location), ('offset', str(offset)), ('length', str(arr.nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
        x = 'X'
        for i in range(layers):
            w = rng.standard_normal((width, width), dtype=np.float32)
            w *= np.float32(np.sqrt(2.0 / width))
            w = w.astype(np.float16)
            if as_float32:
                put(f'l{i}.weight', w.astype(np.float32), TensorProto.FLOAT)
                wname = f'l{i}.weight'
            else:
                put(f'l{i}.weight', w, TensorProto.FLOAT16)
                wname = f'l{i}.weight_f'
                nodes.append(helper.make_node('Cast', [f'l{i}.weight'], [wname], to=TensorProto.FLOAT))
            del w
            put(f'l{i}.bias', np.zeros(width, np.float32) + np.float32(0.01), TensorProto.FLOAT)
            nodes.append(helper.make_node('Gemm', [x, wname, f'l{i}.bias'], [f'h{i}'], transB=1))
            nodes.append(helper.make_node('Relu', [f'h{i}'], [f'a{i}']))
            x = f'a{i}'
        hw = (rng.standard_normal((classes, width), dtype=np.float32) * np.float32(1 / np.sqrt(width)))
        put('head.weight', hw, TensorProto.FLOAT)
    inits.append(numpy_helper.from_array(np.zeros(classes, np.float32), 'head.bias'))
    nodes.append(helper.make_node('Gemm', [x, 'head.weight', 'head.bias'], ['logits'], transB=1))
    g = helper.make_graph(nodes, 'big_base', [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['N', width])],
                          [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', classes])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='webtrain-bench')
    m.ir_version = 8
    with open(out, 'wb') as f:
        f.write(m.SerializeToString())
    onnx.checker.check_model(out)
    params = sum(int(np.prod(t.dims)) for t in g.initializer)
    kind = 'float16 weights as float32' if as_float32 else 'float16 weights'
    print(f'{out}: {layers} x {width}, {params} parameters ({kind}), side file {os.path.getsize(side)} bytes')


def main():
    argv = [a for a in sys.argv[1:] if not a.startswith('--')]
    if '--float16' in sys.argv or '--float16-as-float32' in sys.argv:
        out = argv[0]
        layers, width, classes = [int(a) for a in argv[1:]] + [24, 2048, 10][len(argv) - 1:]
        streamed(out, layers, width, classes, '--float16-as-float32' in sys.argv)
        return
    out = argv[0]
    layers = int(argv[1]) if len(argv) > 1 else 24
    width = int(argv[2]) if len(argv) > 2 else 2048
    classes = int(argv[3]) if len(argv) > 3 else 10
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
    params = sum(int(np.prod(t.dims)) for t in g.initializer)
    if '--inside' in sys.argv:
        onnx.save_model(m, out)
        print(f'{out}: {layers} x {width}, {params} parameters, weights inside ({os.path.getsize(out)} bytes)')
        return
    location = os.path.basename(out) + '.data'
    side = os.path.join(os.path.dirname(os.path.abspath(out)), location)
    if os.path.exists(side):
        os.remove(side)  # onnx.save_model appends to an existing side file
    onnx.save_model(m, out, save_as_external_data=True, all_tensors_to_one_file=True, location=location,
                    size_threshold=1024)
    print(f'{out}: {layers} x {width}, {params} parameters, side file {os.path.getsize(side)} bytes')


if __name__ == '__main__':
    main()
