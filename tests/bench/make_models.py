#!/usr/bin/python3
"""Writes the benchmark's forward-only ONNX models (deterministic random weights) and the FLOP
counts of every benchmark model into OUT_DIR (default build/bench-models/):

  mlp_784_128_10.onnx, mlp_784_256_256_10.onnx, mlp_784_500_10.onnx  (PyTorch Linear export:
      Gemm transB=1, weight [out, in]; opset 14; input 'input' [batch, 784])
  frozen_base_1024x8.onnx  (a GEMM-bound frozen base: 8 x (Linear(1024,1024) + ReLU), then a
      Linear(1024, 10) head, PyTorch Linear export as the MLPs; opset 14; input 'input' [batch, 1024];
      the benchmark trains only the head: fc9.weight, fc9.bias)
  transformer_d256.onnx  (one pre-norm transformer block, d=256, seq 128, 4 heads, MLP 1024, then
      LayerNorm, mean over the sequence and Linear(256, 10); exported the way torch.onnx does:
      MatMul + Add for Linear on 3-D inputs, Reshape/Transpose for heads, Softmax, exact GELU as
      Div/Erf/Add/Mul/Mul, LayerNormalization; opset 17; input 'input' [batch, 128, 256])
  matmul_<n>.onnx  (a single MatMul [n,n] x [n,n] with B an initializer: the core's GEMM)
  meta.json  {forward_flops: {model key: forward FLOPs (2*M*N*K per MatMul/Gemm, 2*out*Cin/g*kh*kw
      per Conv) at the benchmark batch}, backward_flops: {model key: the same products' gradient
      FLOPs, only for operands that need a gradient}, params: {model key: trainable initializers},
      frozen: {model key: frozen initializers (kept in the checkpoint, not trained)}}

Run with Debian's python3-onnx: /usr/bin/python3 tests/bench/make_models.py [OUT_DIR]

  /usr/bin/python3 tests/bench/make_models.py --flag-without-shape IN OUT
      copies an optimizer model with its bool 'updated_flag' output declared without a shape
      (onnxruntime-web 1.19.2 rejects an SGDOptimizerV2 model declaring shape [1] at session
      creation, yet its kernel returns shape [1], warning on every step if declared scalar); the
      benchmark uses it only to time ORT when ORT rejects webtrain's own optimizer model.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) == 2 else os.path.join(ROOT, 'build', 'bench-models')
rng = np.random.default_rng(20261121)


# The frozen-base model's trainable head (its 9th Linear); every other initializer is frozen.
FROZEN_BASE_HEAD = ['fc9.weight', 'fc9.bias']


def init(name, shape, fan_in=None):
    if fan_in is None:
        a = np.zeros(shape, np.float32)
    else:
        bound = 1.0 / np.sqrt(fan_in)
        a = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    return numpy_helper.from_array(a, name)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name))


def mlp(sizes, name):
    nodes, inits = [], []
    x = 'input'
    for i in range(len(sizes) - 1):
        fi, fo = sizes[i], sizes[i + 1]
        w, b = f'fc{i + 1}.weight', f'fc{i + 1}.bias'
        inits += [init(w, [fo, fi], fi), init(b, [fo], fi)]
        y = 'output' if i == len(sizes) - 2 else f'/fc{i + 1}/Gemm_output_0'
        nodes.append(helper.make_node('Gemm', [x, w, b], [y], name=f'/fc{i + 1}/Gemm', alpha=1.0, beta=1.0, transB=1))
        if i < len(sizes) - 2:
            r = f'/relu{i + 1}/Relu_output_0'
            nodes.append(helper.make_node('Relu', [y], [r], name=f'/relu{i + 1}/Relu'))
            y = r
        x = y
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['batch', sizes[0]])],
                          [helper.make_tensor_value_info('output', TensorProto.FLOAT, ['batch', sizes[-1]])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 14)], producer_name='webtrain-bench')
    m.ir_version = 8
    save(m, f'{name}.onnx')


def transformer(d=256, seq=128, heads=4, ff=1024, classes=10, name='transformer_d256'):
    dh = d // heads
    nodes, inits = [], []
    n = [0]

    def node(op, ins, **attrs):
        n[0] += 1
        out = f'/{op}_{n[0]}_output_0'
        nodes.append(helper.make_node(op, ins, [out], name=f'/{op}_{n[0]}', **attrs))
        return out

    def linear(x, prefix, fi, fo, bias=True):
        # torch.onnx exports nn.Linear on a 3-D input as MatMul with the transposed weight + Add.
        inits.append(init(f'{prefix}.weight_t', [fi, fo], fi))
        y = node('MatMul', [x, f'{prefix}.weight_t'])
        if bias:
            inits.append(init(f'{prefix}.bias', [fo], fi))
            y = node('Add', [y, f'{prefix}.bias'])
        return y

    def layernorm(x, prefix):
        inits.append(numpy_helper.from_array(np.ones([d], np.float32), f'{prefix}.weight'))
        inits.append(init(f'{prefix}.bias', [d]))
        return node('LayerNormalization', [x, f'{prefix}.weight', f'{prefix}.bias'], axis=-1, epsilon=1e-5)

    inits += [const('shape_heads', [0, 0, heads, dh]), const('shape_merge', [0, 0, d]),
              numpy_helper.from_array(np.array(1.0 / np.sqrt(dh), np.float32), 'attn_scale'),
              numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), 'sqrt2'),
              numpy_helper.from_array(np.array(1.0, np.float32), 'one'),
              numpy_helper.from_array(np.array(0.5, np.float32), 'half')]
    x = 'input'
    h = layernorm(x, 'ln1')

    def split_heads(t, perm):
        return node('Transpose', [node('Reshape', [t, 'shape_heads'])], perm=perm)

    q = split_heads(linear(h, 'q_proj', d, d), [0, 2, 1, 3])      # [B, H, S, dh]
    k = split_heads(linear(h, 'k_proj', d, d), [0, 2, 3, 1])      # [B, H, dh, S]
    v = split_heads(linear(h, 'v_proj', d, d), [0, 2, 1, 3])      # [B, H, S, dh]
    s = node('Mul', [node('MatMul', [q, k]), 'attn_scale'])       # [B, H, S, S]
    p = node('Softmax', [s], axis=-1)
    a = node('MatMul', [p, v])                                    # [B, H, S, dh]
    a = node('Reshape', [node('Transpose', [a], perm=[0, 2, 1, 3]), 'shape_merge'])
    x = node('Add', [x, linear(a, 'out_proj', d, d)])
    h = layernorm(x, 'ln2')
    f = linear(h, 'ff1', d, ff)
    gelu = node('Mul', [node('Mul', [f, node('Add', [node('Erf', [node('Div', [f, 'sqrt2'])]), 'one'])]), 'half'])
    x = node('Add', [x, linear(gelu, 'ff2', ff, d)])
    x = layernorm(x, 'ln_f')
    pooled = node('ReduceMean', [x], axes=[1], keepdims=0)        # [B, d]
    inits += [init('head.weight', [classes, d], d), init('head.bias', [classes], d)]
    nodes.append(helper.make_node('Gemm', [pooled, 'head.weight', 'head.bias'], ['output'], name='/head/Gemm', transB=1))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['batch', seq, d])],
                          [helper.make_tensor_value_info('output', TensorProto.FLOAT, ['batch', classes])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='webtrain-bench')
    m.ir_version = 8
    save(m, f'{name}.onnx')


def matmul(nsize):
    b = init('B', [nsize, nsize], nsize)
    g = helper.make_graph([helper.make_node('MatMul', ['A', 'B'], ['C'])], f'matmul_{nsize}',
                          [helper.make_tensor_value_info('A', TensorProto.FLOAT, [nsize, nsize])],
                          [helper.make_tensor_value_info('C', TensorProto.FLOAT, [nsize, nsize])], [b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='webtrain-bench')
    m.ir_version = 8
    save(m, f'matmul_{nsize}.onnx')


def forward_flops(path, batch, trainable=None):
    """(forward, backward) FLOPs of MatMul/Gemm/Conv at a concrete batch: forward 2*M*N*K per
    product; backward adds the same amount for each operand that needs a gradient (depends on a
    trainable initializer), e.g. nothing for dX of a first layer fed by the graph input."""
    m = onnx.load(path)
    if trainable is None:
        trainable = {t.name for t in m.graph.initializer if t.data_type == TensorProto.FLOAT and len(t.dims) > 0}
    needs = set(trainable)
    for nd in m.graph.node:  # exported graphs are topologically sorted
        if any(i in needs for i in nd.input):
            needs.update(nd.output)
    init_names = {i.name for i in m.graph.initializer}
    for i in m.graph.input:
        if i.name in init_names:
            continue
        for dim in i.type.tensor_type.shape.dim:
            if dim.dim_param or not dim.HasField('dim_value'):
                dim.Clear()
                dim.dim_value = batch
                break
    m = shape_inference.infer_shapes(m, data_prop=True)
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        dims = [dd.dim_value for dd in vi.type.tensor_type.shape.dim]
        if dims and all(dims):
            shapes[vi.name] = dims
    for t in m.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    back = 0
    for nd in m.graph.node:
        before = total
        if nd.op_type in ('MatMul', 'Gemm'):
            a, b = shapes.get(nd.input[0]), shapes.get(nd.input[1])
            out = shapes.get(nd.output[0])
            if a is None or out is None:
                raise SystemExit(f'{path}: no shape for {nd.op_type} {nd.name}')
            attrs = {at.name: helper.get_attribute_value(at) for at in nd.attribute}
            k = (a[-2] if attrs.get('transA') else a[-1]) if nd.op_type == 'Gemm' else a[-1]
            total += 2 * int(np.prod(out)) * k
        elif nd.op_type == 'Conv':
            w, out = shapes[nd.input[1]], shapes.get(nd.output[0])
            total += 2 * int(np.prod(out)) * int(np.prod(w[1:]))
        back += (total - before) * sum(1 for i in nd.input[:2] if i in needs)
    return total, back


def main():
    os.makedirs(OUT, exist_ok=True)
    mlp([784, 128, 10], 'mlp_784_128_10')
    mlp([784, 256, 256, 10], 'mlp_784_256_256_10')
    mlp([784, 500, 10], 'mlp_784_500_10')
    mlp([1024] * 9 + [10], 'frozen_base_1024x8')
    transformer()
    for s in (256, 512, 1024):
        matmul(s)
    g = os.path.join(ROOT, 'tests', 'golden', 'cases')
    def case_trainable(name):
        with open(os.path.join(g, name, 'case.json')) as f:
            return set(json.load(f)['requires_grad'])

    counts = {
        'mlp_784_128_10': forward_flops(os.path.join(OUT, 'mlp_784_128_10.onnx'), 64),
        'mlp_784_256_256_10': forward_flops(os.path.join(OUT, 'mlp_784_256_256_10.onnx'), 64),
        'mnist_mlp_784_500_10': forward_flops(os.path.join(OUT, 'mlp_784_500_10.onnx'), 64),
        'cnn_bn': forward_flops(os.path.join(g, 'cnn_bn_ce_sgd', 'model.onnx'), 32, case_trainable('cnn_bn_ce_sgd')),
        'tiny_transformer': forward_flops(os.path.join(g, 'tiny_transformer_frozen_adamw', 'model.onnx'), 16,
                                          case_trainable('tiny_transformer_frozen_adamw')),
        'transformer_d256': forward_flops(os.path.join(OUT, 'transformer_d256.onnx'), 8),
        'frozen_base_1024x8': forward_flops(os.path.join(OUT, 'frozen_base_1024x8.onnx'), 64, set(FROZEN_BASE_HEAD)),
    }
    flops = {k: v[0] for k, v in counts.items()}
    backward = {k: v[1] for k, v in counts.items()}
    params = {}
    for key, fname in (('mlp_784_128_10', 'mlp_784_128_10'), ('mlp_784_256_256_10', 'mlp_784_256_256_10'),
                       ('mnist_mlp_784_500_10', 'mlp_784_500_10'), ('transformer_d256', 'transformer_d256')):
        m = onnx.load(os.path.join(OUT, f'{fname}.onnx'))
        params[key] = [t.name for t in m.graph.initializer if t.data_type == TensorProto.FLOAT and len(t.dims) > 0]
    params['frozen_base_1024x8'] = FROZEN_BASE_HEAD
    base = onnx.load(os.path.join(OUT, 'frozen_base_1024x8.onnx'))
    frozen = {'frozen_base_1024x8': [t.name for t in base.graph.initializer if t.name not in FROZEN_BASE_HEAD]}
    with open(os.path.join(OUT, 'meta.json'), 'w') as f:
        json.dump({'forward_flops': flops, 'backward_flops': backward, 'params': params, 'frozen': frozen}, f, indent=1)
    print(json.dumps(counts))


def flag_without_shape(src, dst):
    m = onnx.load(src)
    for o in m.graph.output:
        if o.type.HasField('tensor_type') and o.type.tensor_type.elem_type == TensorProto.BOOL:
            o.type.tensor_type.ClearField('shape')
    onnx.save(m, dst)


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == '--flag-without-shape':
        flag_without_shape(sys.argv[2], sys.argv[3])
    else:
        main()
