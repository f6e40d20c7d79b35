// The webgpu backend in Node (the `webgpu` package; SwiftShader where there is no GPU): each
// kernel against the wasm backend's results under the tolerance policy of docs/architecture.md,
// a model against PyTorch, the same bits run to run, ops without a kernel named (or run on
// wasm with 'auto'), and a lost device.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { InferenceSession, Tensor, init, runtimeInfo, WebtrainError } from '../../js/index.js';
import { decodeTensorProto } from '../tensor-proto.mjs';
import { onnxModel } from './onnx-writer.mjs';
import { gpu, countCalls } from './webgpu-env.mjs';
import { EPS, fill, both, one, tensorOf, feedsOf, value, close } from './webgpu-check.mjs';

/** Elements of op(A) op(B) with op(A) [M, K] read from a (transposed when ta). */
function absProducts(a, b, M, N, K, ta, tb) {
  const out = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += Math.abs(a[ta ? k * M + i : i * K + k]) * Math.abs(b[tb ? j * K + k : k * N + j]);
      out[i * N + j] = s;
    }
  return out;
}

test('MatMul and Gemm: within 4 K eps (|A| |B|) of the wasm backend', async () => {
  const cases = [
    // [M, K, N]: inside one tile, across tiles and K slices, thin
    [7, 13, 5], [33, 65, 40], [1, 300, 3], [64, 16, 64], [70, 20, 130],
  ];
  for (const [M, K, N] of cases) {
    const a = value('a', [M, K], 1), b = value('b', [K, N], 2);
    const r = await both(one('MatMul', [a, b]), feedsOf([a, b]));
    const bound = absProducts(a.data, b.data, M, N, K, false, false);
    const d = r.gpu.y.data, c = r.cpu.y.data;
    assert.deepEqual(r.gpu.y.dims, [M, N]);
    for (let i = 0; i < M * N; i++) assert.ok(Math.abs(d[i] - c[i]) <= 4 * K * EPS * bound[i], `MatMul ${M}x${K}x${N} [${i}]: ${d[i]} vs ${c[i]}`);
  }
  // batched: A [2, 3, 9, 17] by a weight [17, 6] (broadcast), and batch dims broadcast both ways
  for (const [da, db] of [[[2, 3, 9, 17], [17, 6]], [[2, 1, 5, 8], [3, 8, 4]], [[17], [17, 5]], [[4, 6], [6]]]) {
    const a = value('a', da, 3), b = value('b', db, 4);
    const r = await both(one('MatMul', [a, b]), feedsOf([a, b]));
    assert.deepEqual(r.gpu.y.dims, r.cpu.y.dims);
    const K = da[da.length - 1];
    r.gpu.y.data.forEach((v, i) => assert.ok(Math.abs(v - r.cpu.y.data[i]) <= 4 * K * EPS * K, `MatMul ${da} x ${db} [${i}]: ${v} vs ${r.cpu.y.data[i]}`));
  }
  // Gemm: transposes, alpha, beta and the bias broadcast along rows, columns, or a scalar
  const M = 67, K = 23, N = 70; // past a 64 x 64 tile both ways
  for (const [ta, tb, cdims, alpha, beta] of [[0, 0, [N], 1, 1], [1, 0, [M, 1], 0.5, 2], [0, 1, [], 1, -1], [1, 1, [M, N], 1.5, 0.25], [0, 1, null, 1, 1]]) {
    const a = value('a', ta ? [K, M] : [M, K], 5), b = value('b', tb ? [N, K] : [K, N], 6, true);
    const inputs = cdims ? [a, b, value('c', cdims, 7, true)] : [a, b];
    const r = await both(one('Gemm', inputs, { transA: ta, transB: tb, alpha: { float: alpha }, beta: { float: beta } }), feedsOf(inputs));
    const bound = absProducts(a.data, b.data, M, N, K, ta, tb);
    r.gpu.y.data.forEach((v, i) => {
      const tol = 4 * K * EPS * Math.abs(alpha) * bound[i] + 2 * EPS * Math.abs(r.cpu.y.data[i]);
      assert.ok(Math.abs(v - r.cpu.y.data[i]) <= tol, `Gemm ta=${ta} tb=${tb} c=${cdims} [${i}]: ${v} vs ${r.cpu.y.data[i]}`);
    });
  }
});

test('float16 weights read through a Cast, widened as read: MatMul and Gemm give the wasm backend\'s bits, Conv and ConvGrad a float32 W\'s', async () => {
  const half = (n) => Uint16Array.from({ length: n }, (_, i) => 0x3800 + ((i * 97) % 1024) + (i % 3 ? 0 : 0x8000));
  const cases = [
    // [op, x dims, w dims, attrs, w first]: odd element counts, transB, batches, a float16 A
    ['MatMul', [3, 4], [4, 5]], ['Gemm', [2, 7], [3, 7], { transB: 1 }], ['Gemm', [2, 7], [7, 3]],
    ['MatMul', [2, 3, 5], [2, 5, 3]], ['MatMul', [3, 4], [2, 4, 3]], ['MatMul', [5, 3], [2, 4, 5], undefined, true],
  ];
  // Conv and ConvGrad's dX (com.microsoft) with a float16 W, 2 groups, padding: the same bits on
  // the GPU as the same model with the float16 values in a float32 W (the wasm backend sums a
  // convolution in another order: its tolerance is tests/js/webgpu-cnn.test.mjs's)
  const widen = (h) => {
    const e = (h >> 10) & 31, m = h & 1023, v = e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
    return h & 0x8000 ? -v : v;
  };
  for (const op of ['Conv', 'ConvGrad']) {
    const xd = [2, 4, 5, 5], wd = [6, 2, 3, 3], attrs = { group: 2, pads: [1, 1, 1, 1] };
    const x = value('x', xd, 32), dy = value('dy', [2, 6, 5, 5], 33);
    const w16 = half(wd.reduce((a, b) => a * b, 1));
    const node = op === 'Conv' ? { op, inputs: ['x', 'wf'], outputs: ['y'], attrs } : { op, domain: 'com.microsoft', inputs: ['dy', 'x', 'wf'], outputs: ['y'], attrs };
    const inputs = op === 'Conv' ? [{ name: 'x', dims: xd }] : [{ name: 'dy', dims: [2, 6, 5, 5] }, { name: 'x', dims: xd }];
    const halfModel = onnxModel({ nodes: [{ op: 'Cast', inputs: ['w'], outputs: ['wf'], attrs: { to: 1 } }, node], inputs, initializers: [{ name: 'w', dims: wd, data: w16 }], outputs: [{ name: 'y' }] });
    const fullModel = onnxModel({ nodes: [node], inputs, initializers: [{ name: 'wf', dims: wd, data: Float32Array.from(w16, widen) }], outputs: [{ name: 'y' }] });
    const feeds = op === 'Conv' ? feedsOf([x]) : feedsOf([dy, x]);
    const [a, b] = [(await both(halfModel, feeds)).gpu.y, (await both(fullModel, feeds)).gpu.y];
    assert.deepEqual(Array.from(a.data), Array.from(b.data), `${op} float16 W`);
  }
  for (const [op, xd, wd, attrs, wFirst] of cases) {
    const model = onnxModel({
      nodes: [{ op: 'Cast', inputs: ['w'], outputs: ['wf'], attrs: { to: 1 } }, { op, inputs: wFirst ? ['wf', 'x'] : ['x', 'wf'], outputs: ['y'], attrs }],
      inputs: [{ name: 'x', dims: xd }],
      initializers: [{ name: 'w', dims: wd, data: half(wd.reduce((a, b) => a * b, 1)) }],
      outputs: [{ name: 'y' }],
    });
    const x = value('x', xd, 31);
    const r = await both(model, feedsOf([x]));
    assert.deepEqual(r.gpu.y.dims, r.cpu.y.dims);
    assert.deepEqual(Array.from(r.gpu.y.data), Array.from(r.cpu.y.data), `${op} ${xd} x ${wd} float16`);
  }
});

test('broadcast arithmetic: Add, Sub, Mul, PRelu exact; Div within 2.5 ulp', async () => {
  const shapes = [[[2, 3, 4], [4]], [[2, 1, 4], [3, 1]], [[5], []], [[1, 3, 1, 2], [2, 1, 5, 1]]];
  for (const op of ['Add', 'Sub', 'Mul', 'Div', 'PRelu']) {
    for (const [da, db] of op === 'PRelu' ? [[[2, 3, 4, 4], [3, 1, 1]], [[6, 5], [5]]] : shapes) {
      const a = value('a', da, 8), b = value('b', db, 9);
      const r = await both(one(op, [a, b]), feedsOf([a, b]));
      assert.deepEqual(r.gpu.y.dims, r.cpu.y.dims, `${op} ${da} ${db}`);
      r.gpu.y.data.forEach((v, i) => {
        const c = r.cpu.y.data[i];
        const ok = op === 'Div' ? Math.abs(v - c) <= 2.5 * 2 * EPS * Math.abs(c) : Object.is(v, c);
        assert.ok(ok, `${op} ${da} ${db} [${i}]: ${v} vs ${c}`);
      });
    }
  }
  // one value as both operands: the dispatch reads a copy (WebGPU refuses overlapping bindings)
  const x = value('x', [3, 7], 10);
  const model = onnxModel({ nodes: [{ op: 'Mul', inputs: ['x', 'x'], outputs: ['y'] }], inputs: [{ name: 'x', dims: [3, 7] }], outputs: [{ name: 'y' }] });
  const r = await both(model, { x: tensorOf(x) });
  assert.deepEqual(Array.from(r.gpu.y.data), Array.from(r.cpu.y.data));
});

// |gpu - cpu| <= abs + rel |cpu| per activation: WGSL's accuracy (exp 3 + 2|x| ulp, log 3 ulp or
// 2^-21 absolute near 1, tanh from exp) and the backends' own erf approximations; a product or
// sum the GPU's compiler may fuse, within a few ulp.
const ACTIVATIONS = {
  Neg: [0, 0], Abs: [0, 0], Relu: [0, 0], Sqrt: [0, 2 * EPS], Reciprocal: [0, 5 * EPS], LeakyRelu: [0, 0],
  Exp: [0, 24 * EPS], Log: [2 ** -21, 8 * EPS], Tanh: [2e-7, 8 * EPS], Sigmoid: [2e-7, 8 * EPS],
  Erf: [3e-7, 0], Gelu: [3e-7, 8 * EPS], HardSwish: [EPS, 4 * EPS], HardSigmoid: [2 * EPS, 0], Softsign: [0, 4 * EPS],
  Floor: [0, 0], Ceil: [0, 0], Round: [0, 0], Elu: [3e-7, 8 * EPS], GeluTanh: [3e-7, 8 * EPS], QuickGelu: [3e-7, 8 * EPS],
  Swish: [3e-7, 8 * EPS],
};
// how each is written, where not a plain ai.onnx node of opset 17
const ACTIVATION_NODES = {
  LeakyRelu: { attrs: { alpha: 0.1 } }, Gelu: { opset: 20 }, GeluTanh: { op: 'Gelu', opset: 20, attrs: { approximate: 'tanh' } },
  HardSigmoid: { attrs: { alpha: 0.3, beta: 0.4 } }, Elu: { attrs: { alpha: 0.7 } },
  QuickGelu: { domain: 'com.microsoft', attrs: { alpha: 1.5 } }, Swish: { opset: 24, attrs: { alpha: 1.25 } },
};

test('activations: within the per-op tolerance of the wasm backend', async () => {
  for (const [name, [abs, rel]] of Object.entries(ACTIVATIONS)) {
    const { op = name, attrs, opset = 17, domain } = ACTIVATION_NODES[name] ?? {};
    const x = value('x', [4, 65], 11);
    if (op === 'Sqrt' || op === 'Log') x.data = x.data.map((v) => Math.abs(v) * 4 + 1e-3);
    if (op === 'Exp' || op === 'HardSwish' || op === 'HardSigmoid') x.data = x.data.map((v) => v * 8);
    if (op === 'Round' || op === 'Floor' || op === 'Ceil') x.data = x.data.map((v, i) => (i % 5 === 0 ? Math.round(v * 8) + 0.5 : v * 8));
    const r = await both(one(op, [x], attrs, { opset, domain }), feedsOf([x]));
    r.gpu.y.data.forEach((v, i) => {
      const c = r.cpu.y.data[i];
      assert.ok(Math.abs(v - c) <= abs + rel * Math.abs(c), `${name}(${x.data[i]}): ${v} vs ${c}`);
    });
  }
});

test('a NaN goes where it goes on the CPU: Relu, Clip, Max, Min and a Gemm with its Relu fused keep it', async () => {
  // (WGSL's max and min return the other operand; the CPU kernels keep a NaN in the first,
  // so a NaN in a batch reaches the loss on both backends and the step is skipped on both)
  const x = value('x', [3, 8], 21), w = value('w', [8, 5], 22, true), b = value('b', [3, 8], 23);
  x.data[2] = NaN;
  b.data[5] = NaN;
  x.data[11] = NaN;
  b.data[11] = NaN;
  const models = [
    one('Relu', [x]), one('Max', [x, b]), one('Min', [x, b]), one('Max', [b, x]),
    onnxModel({ nodes: [{ op: 'Clip', inputs: ['x'], outputs: ['y'], attrs: { min: -0.5, max: 0.5 } }], inputs: [{ name: 'x', dims: [3, 8] }], outputs: [{ name: 'y' }], opset: 6 }),
    onnxModel({
      nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['h'] }, { op: 'Relu', inputs: ['h'], outputs: ['y'] }],
      inputs: [{ name: 'x', dims: [3, 8] }], initializers: [w], outputs: [{ name: 'y' }],
    }),
  ];
  for (const [k, model] of models.entries()) {
    const r = await both(model, feedsOf([x, b].filter((v) => k > 0 && k < 4 || v === x)));
    const nan = Array.from(r.cpu.y.data, (v) => Number.isNaN(v));
    assert.ok(nan.some((v) => v), `model ${k}: the CPU keeps a NaN`);
    assert.deepEqual(Array.from(r.gpu.y.data, (v) => Number.isNaN(v)), nan, `model ${k}: NaNs where the CPU has them`);
  }
});

test('reductions, Expand, Pow, Sign, Softplus, variadic Sum/Min/Max: within the policy', async () => {
  // sums in order over n terms: rtol n eps
  for (const [op, dims, axes, keepdims] of [['ReduceSum', [3, 4, 5], [1], 1], ['ReduceSum', [3, 4, 5], [0, 2], 0], ['ReduceMean', [6, 7], [0], 1], ['ReduceMean', [2, 3, 4, 5], [1, 3], 0], ['ReduceSum', [9], [0], 0]]) {
    const x = value('x', dims, 13);
    const model = onnxModel({
      nodes: [{ op, inputs: ['x', 'axes'], outputs: ['y'], attrs: { keepdims } }],
      inputs: [{ name: 'x', dims }],
      initializers: [{ name: 'axes', dims: [axes.length], data: BigInt64Array.from(axes, BigInt) }],
      outputs: [{ name: 'y' }],
      opset: 18,
    });
    await close(model, { x: tensorOf(x) }, 1e-7, 64 * EPS, `${op} ${dims} axes ${axes}`);
  }
  const e = value('x', [3, 1, 4], 14);
  await close(onnxModel({ nodes: [{ op: 'Expand', inputs: ['x', 'shape'], outputs: ['y'] }], inputs: [{ name: 'x', dims: [3, 1, 4] }], initializers: [{ name: 'shape', dims: [4], data: BigInt64Array.of(2n, 3n, 5n, 4n) }], outputs: [{ name: 'y' }] }), { x: tensorOf(e) }, 0, 0, 'Expand');
  for (const exponent of [2, 3, -1, 0.5]) {
    const x = value('x', [5, 6], 15);
    if (exponent === 0.5) x.data = x.data.map(Math.abs);
    const y = { name: 'p', dims: [], data: Float32Array.of(exponent), init: true };
    await close(one('Pow', [x, y]), feedsOf([x]), 0, 4 * EPS, `Pow ${exponent}`);
  }
  for (const op of ['Sign', 'Softplus']) {
    const x = value('x', [4, 33], 16);
    x.data = x.data.map((v, i) => (i % 7 === 0 ? 0 : v * 20));
    await close(one(op, [x]), feedsOf([x]), op === 'Sign' ? 0 : 2e-7, op === 'Sign' ? 0 : 8 * EPS, op);
  }
  for (const op of ['Sum', 'Min', 'Max']) {
    const xs = [value('a', [2, 3, 4], 17), value('b', [3, 1], 18), value('c', [4], 19), value('d', [2, 1, 4], 20)];
    await close(one(op, xs), feedsOf(xs), 0, 0, `${op} of 4`);
    await close(one(op, xs.slice(0, 1)), feedsOf(xs.slice(0, 1)), 0, 0, `${op} of 1`);
  }
});

test('activation gradients, cross-entropy, (Log)Softmax, Transpose, gradient accumulation: within the policy', async () => {
  for (const op of ['ReluGrad', 'SigmoidGrad', 'TanhGrad', 'LeakyReluGrad']) {
    const dy = value('dy', [5, 9], 21), t = value('t', [5, 9], 22);
    await close(one(op, [dy, t], op === 'LeakyReluGrad' ? { alpha: 0.2 } : undefined, { domain: 'com.microsoft' }), feedsOf([dy, t]), 0, 2 * EPS, op);
  }
  // the Gelu family's gradients: erf, exp, tanh and sigmoid within WGSL's accuracy; where the
  // derivative cancels (1 + tanh near -1) each backend is within 3e-7 |dy| of the exact value
  for (const op of ['GeluGrad', 'FastGeluGrad', 'QuickGeluGrad']) {
    const dy = value('dy', [5, 9], 21), t = value('t', [5, 9], 22);
    t.data = t.data.map((v) => v * 4);
    await close(one(op, [dy, t], op === 'QuickGeluGrad' ? { alpha: 1.5 } : undefined, { domain: 'com.microsoft' }), feedsOf([dy, t]), 6e-7, 8 * EPS, op);
  }
  // SoftmaxCrossEntropyLoss: reductions, ignore_index, int64 labels, a spatial axis
  for (const [dims, reduction, ignore, int64] of [[[6, 5], 'mean', null, false], [[6, 5], 'sum', 2, true], [[3, 4, 2], 'none', null, false], [[4, 7, 3], 'mean', 1, true]]) {
    const x = value('x', dims, 23);
    const ldims = [dims[0], ...dims.slice(2)];
    const n = ldims.reduce((a, b) => a * b, 1);
    const labels = Array.from({ length: n }, (_, i) => (i * 3) % dims[1]);
    const lt = int64 ? new Tensor('int64', BigInt64Array.from(labels, BigInt), ldims) : new Tensor('int32', Int32Array.from(labels), ldims);
    const attrs = { reduction, ...(ignore === null ? {} : { ignore_index: ignore }) };
    const model = onnxModel({
      nodes: [
        { op: 'SoftmaxCrossEntropyLoss', inputs: ['x', 'l'], outputs: ['loss', 'lp'], attrs },
        { op: 'SoftmaxCrossEntropyLossGrad', domain: 'com.microsoft', inputs: ['g', 'lp', 'l'], outputs: ['dx'], attrs },
      ],
      inputs: [{ name: 'x', dims }, { name: 'l', dims: ldims, dtype: int64 ? 7 : 6 }, { name: 'g', dims: reduction === 'none' ? ldims : [] }],
      outputs: [{ name: 'loss' }, { name: 'lp' }, { name: 'dx' }],
    });
    const g = reduction === 'none' ? new Tensor('float32', fill(n, 24), ldims) : new Tensor('float32', Float32Array.of(0.75), []);
    await close(model, { x: tensorOf(x), l: lt, g }, 4e-7, 16 * EPS, `SoftmaxCrossEntropyLoss ${dims} ${reduction} ignore ${ignore}`);
  }
  // (Log)Softmax along each axis, and their gradients (opset 13 SoftmaxGrad_13 / LogSoftmaxGrad_13)
  for (const [op, grad] of [['Softmax', 'SoftmaxGrad_13'], ['LogSoftmax', 'LogSoftmaxGrad_13']]) {
    for (const axis of [-1, 1, 0]) {
      const x = value('x', [3, 5, 4], 28), dy = value('dy', [3, 5, 4], 29);
      const model = onnxModel({
        nodes: [{ op, inputs: ['x'], outputs: ['y'], attrs: { axis } }, { op: grad, domain: 'com.microsoft', inputs: ['dy', 'y'], outputs: ['dx'], attrs: { axis } }],
        inputs: [{ name: 'x', dims: [3, 5, 4] }, { name: 'dy', dims: [3, 5, 4] }],
        outputs: [{ name: 'y' }, { name: 'dx' }],
      });
      await close(model, feedsOf([x, dy]), 3e-7, 16 * EPS, `${op} axis ${axis}`);
    }
  }
  // Transpose: bit for bit
  for (const perm of [[1, 0, 2], [2, 0, 1], [0, 2, 1]]) {
    const x = value('x', [3, 4, 5], 30);
    await close(one('Transpose', [x], { perm }), feedsOf([x]), 0, 0, `Transpose ${perm}`);
  }
  // InPlaceAccumulatorV2: buffer + value, or value where overwrite is set; output 1 is the buffer
  for (const overwrite of [0, 1]) {
    const b = value('b', [3, 5], 25), v = value('v', [3, 5], 26);
    const model = onnxModel({
      nodes: [{ op: 'InPlaceAccumulatorV2', domain: 'com.microsoft', inputs: ['b', 'v', 'o'], outputs: ['updated', 'out'] }],
      inputs: [{ name: 'b', dims: [3, 5] }, { name: 'v', dims: [3, 5] }, { name: 'o', dims: [1], dtype: 9 }],
      outputs: [{ name: 'updated', dtype: 9 }, { name: 'out' }],
    });
    const r = await both(model, { ...feedsOf([b, v]), o: new Tensor('bool', Uint8Array.of(overwrite), [1]) });
    assert.deepEqual(Array.from(r.gpu.updated.data), [1]);
    assert.deepEqual(Array.from(r.gpu.out.data), Array.from(r.cpu.out.data), `overwrite ${overwrite}`);
  }
});

const cases = new URL('../golden/cases/', import.meta.url);

test('the MLP on webgpu gives PyTorch forward outputs, the same bits run to run', async () => {
  const buf = await readFile(new URL('mlp_ce_adamw/eval__input.bin', cases));
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const pb = await readFile(new URL('mlp_ce_adamw/forward/test_data_set_0/output_0.pb', cases));
  const expected = (await decodeTensorProto(new Uint8Array(pb))).tensor;
  const s = await InferenceSession.create(new URL('mlp_ce_adamw/model.onnx', cases).pathname, { backend: 'webgpu', gpu });
  const n = x.length / 784;
  const y = (await s.run({ input: new Tensor('float32', x, [n, 784]) })).output;
  assert.deepEqual(y.dims, [n, 10]);
  const want = expected.data;
  y.data.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-5 + 1e-5 * Math.abs(want[i]), `[${i}] ${v} vs ${want[i]}`));
  const again = (await s.run({ input: new Tensor('float32', x, [n, 784]) })).output;
  assert.deepEqual(new Uint32Array(again.data.buffer), new Uint32Array(y.data.buffer));
  // another batch size: another program, the first kept
  const half = (await s.run({ input: new Tensor('float32', x.subarray(0, 784 * 2), [2, 784]) })).output;
  assert.deepEqual(Array.from(half.data), Array.from(y.data.subarray(0, 20)));
  assert.throws(() => s.runSync({ input: new Tensor('float32', x, [n, 784]) }), /runSync\(\) is not available on the webgpu backend/);
  s.release();
});

test('a run after the first creates nothing on the device: one submit, one readback', async () => {
  const { gpuFor } = await import('../../js/core.js');
  const device = (await gpuFor({ backend: 'webgpu', gpu }, 'test')).device;
  const session = await InferenceSession.create(new URL('mlp_ce_adamw/model.onnx', cases).pathname, { backend: 'webgpu', gpu });
  const x = new Tensor('float32', fill(4 * 784, 27), [4, 784]);
  await session.run({ input: x }); // builds the program
  const creates = ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createComputePipelineAsync', 'createShaderModule', 'createBindGroupLayout', 'createPipelineLayout'];
  const { counts, restore } = countCalls(device, [...creates, 'queue.writeBuffer']);
  try {
    for (let i = 0; i < 3; i++) await session.run({ input: x });
  } finally {
    restore();
    session.release();
  }
  for (const n of creates) assert.equal(counts[n] ?? 0, 0, `${n} after the first run`);
  assert.equal(counts.submit, 3);
  assert.equal(counts.mapAsync, 3);
  assert.equal(counts.writeBuffer, 3); // the input
});

test('ops without a webgpu kernel: named with their nodes; auto runs the model on wasm once warned', async () => {
  const x = value('x', [2, 5], 12);
  const model = onnxModel({
    nodes: [{ op: 'Cos', inputs: ['x'], outputs: ['s'] }, { op: 'Relu', inputs: ['s'], outputs: ['r'] }, { op: 'Sin', inputs: ['r'], outputs: ['y'] }],
    inputs: [{ name: 'x', dims: [2, 5] }],
    outputs: [{ name: 'y' }],
  });
  const g = await InferenceSession.create(model, { backend: 'webgpu', gpu });
  await assert.rejects(g.run({ x: tensorOf(x) }), (e) => e instanceof WebtrainError && /the webgpu backend has no kernel for 2 ops of this model: Cos \(ai\.onnx; node 'cos_0'\), Sin \(ai\.onnx; node 'sin_2'\)/.test(e.message));
  g.release();
  const warnings = [];
  const warn = console.warn;
  console.warn = (m) => warnings.push(m);
  try {
    const a = await InferenceSession.create(model, { backend: 'auto', gpu });
    const c = await InferenceSession.create(model, { backend: 'wasm' });
    const [ya, yc] = [(await a.run({ x: tensorOf(x) })).y, (await c.run({ x: tensorOf(x) })).y];
    assert.deepEqual(Array.from(ya.data), Array.from(yc.data));
    assert.equal(a.backend, 'wasm');
    await a.run({ x: tensorOf(x) });
    a.release();
    c.release();
  } finally {
    console.warn = warn;
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /backend 'auto' runs this model on wasm: .*Cos/);
});

test('bad backend options are clear errors', async () => {
  await assert.rejects(InferenceSession.create(onnxModel({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'] }], inputs: [{ name: 'x', dims: [1] }], outputs: [{ name: 'y' }] }), { backend: 'gpu' }), /InferenceSession.create\(\{ backend \}\): expected 'wasm', 'webgpu' or 'auto', got 'gpu'/);
  await assert.rejects(init({ backend: 'webgpu', gpu: { requestAdapter: async () => null } }), /the GPU object gave no adapter/);
});

// Last: it loses the process's device.
test('init({ backend }) reports the adapter; a lost device fails the next run saying so', async () => {
  await init({ backend: 'webgpu', gpu });
  const info = runtimeInfo();
  assert.equal(info.backend, 'webgpu');
  assert.ok(info.adapter.description.length > 0 && info.adapter.limits.maxStorageBufferBindingSize > 0, JSON.stringify(info.adapter));
  const model = onnxModel({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'] }], inputs: [{ name: 'x', dims: [4] }], outputs: [{ name: 'y' }] });
  const s = await InferenceSession.create(model);
  assert.equal(s.backend, 'webgpu');
  const x = new Tensor('float32', Float32Array.of(-1, 2, -3, 4), [4]);
  assert.deepEqual(Array.from((await s.run({ x })).y.data), [0, 2, 0, 4]);
  // the backend's own device, destroyed as a driver reset would lose it
  const { gpuFor } = await import('../../js/core.js');
  (await gpuFor({ backend: 'webgpu', gpu }, 'test')).device.destroy();
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(s.run({ x }), /the WebGPU device was lost .*checkpoints saved before it are intact/);
  s.release();
  await init({ backend: 'wasm' });
});
