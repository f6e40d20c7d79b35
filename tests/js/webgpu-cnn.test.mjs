// The webgpu backend's convolution, pooling and normalization kernels against the wasm backend,
// op by op on small shapes, under the tolerance policy of docs/architecture.md: Conv (1-D, 2-D,
// 3-D; groups, depthwise, strides, pads, dilations, bias), ConvTranspose, ConvGrad and
// ConvTransposeGrad; MaxPool (and its Indices), AveragePool, the global pools, MaxPoolGrad and
// AveragePoolGrad; BatchNormalization, BatchNormInternal, BatchNormalizationGrad,
// LayerNormalization and LayerNormalizationGrad; Resize, Upsample and ResizeGrad; the same bits
// run to run; a U-Net-style model training as on wasm (with its BatchNorm running statistics);
// and refusals that name what is unsupported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor } from '../../js/index.js';
import { onnxModel } from './onnx-writer.mjs';
import { gpu } from './webgpu-env.mjs';
import { EPS, fill, both, feedsOf, graph, value } from './webgpu-check.mjs';

const MS = 'com.microsoft';
// (Graphs of com.microsoft ops alone carry an Identity too: it imports the ai.onnx opset.)

const numel = (dims) => dims.reduce((a, b) => a * b, 1);


/** Output `name` on both backends: same dims, each element within tol(i, ref) of the wasm one. */
function near(r, name, tol, what) {
  const g = r.gpu[name], c = r.cpu[name];
  assert.deepEqual(g.dims, c.dims, `${what} ${name}: dims`);
  for (let i = 0; i < c.data.length; i++) {
    const a = g.data[i], b = c.data[i];
    assert.ok(a === b || Math.abs(a - b) <= tol(i, b), `${what} ${name}[${i}]: ${a} vs ${b}`);
  }
}
/** Sums of T products of values in [-1, 1): within 4 T EPS T (the bound on their magnitude). */
const sumTol = (T) => () => 4 * T * EPS * (T + 1);

/** Conv / ConvTranspose attributes of a 2-D-or-other case. */
function convCases() {
  return [
    // [X dims, W dims, attrs, bias]
    [[2, 3, 7, 6], [4, 3, 3, 3], { pads: [1, 1, 1, 1] }, true],
    [[1, 4, 9, 8], [6, 2, 3, 2], { group: 2, strides: [2, 1], pads: [0, 1, 2, 0], dilations: [2, 1] }, false],
    [[2, 4, 6, 6], [4, 1, 3, 3], { group: 4, pads: [1, 1, 1, 1], strides: [2, 2] }, true], // depthwise
    [[2, 3, 11], [5, 3, 4], { strides: [3], pads: [2, 1], dilations: [2] }, true], // 1-D
    [[1, 2, 4, 5, 3], [3, 2, 2, 3, 2], { pads: [1, 0, 1, 0, 1, 1] }, true], // 3-D
    [[3, 5, 4, 4], [2, 5, 1, 1], {}, true], // pointwise
    [[2, 2, 48, 48], [3, 2, 3, 3], { pads: [1, 1, 1, 1] }, true], // dW, dB over > 4096 terms: a workgroup each
  ];
}

test('Conv: 1-D to 3-D, groups, depthwise, strides, pads, dilations, bias within 4 T eps T of the wasm backend', async () => {
  for (const [xd, wd, attrs, bias] of convCases()) {
    const x = value('x', xd, 1), w = value('w', wd, 2, true), b = value('b', [wd[0]], 3, true);
    const inputs = bias ? [x, w, b] : [x, w];
    const r = await both(graph([{ op: 'Conv', inputs: inputs.map((v) => v.name), outputs: ['y'], attrs }], inputs, ['y']), feedsOf(inputs));
    near(r, 'y', sumTol(numel(wd.slice(1))), `Conv ${xd} * ${wd}`);
  }
});

test('ConvTranspose: k2 s2, pads, groups, output_padding, bias within 4 T eps T of the wasm backend', async () => {
  const cases = [
    [[2, 3, 4, 5], [3, 2, 2, 2], { strides: [2, 2] }, true],
    [[1, 4, 5, 4], [4, 3, 3, 3], { group: 2, strides: [2, 1], pads: [1, 0, 1, 1], output_padding: [1, 0] }, false],
    [[2, 2, 6], [2, 3, 3], { strides: [2], dilations: [2], pads: [1, 2] }, true],
  ];
  for (const [xd, wd, attrs, bias] of cases) {
    const x = value('x', xd, 4), w = value('w', wd, 5, true), b = value('b', [wd[1] * (attrs.group ?? 1)], 6, true);
    const inputs = bias ? [x, w, b] : [x, w];
    const r = await both(graph([{ op: 'ConvTranspose', inputs: inputs.map((v) => v.name), outputs: ['y'], attrs }], inputs, ['y']), feedsOf(inputs));
    near(r, 'y', sumTol(xd[1] * numel(wd.slice(2))), `ConvTranspose ${xd} * ${wd}`);
  }
});

test('ConvGrad and ConvTransposeGrad: dX, dW, dB (all or some) within 4 T eps T of the wasm backend', async () => {
  for (const [xd, wd, attrs] of convCases()) {
    const x = value('x', xd, 7), w = value('w', wd, 8);
    // dY shaped as the forward output: ask the CPU for it
    const fwd = await both(graph([{ op: 'Conv', inputs: ['x', 'w'], outputs: ['y'], attrs }], [x, w], ['y']), feedsOf([x, w]));
    const dy = value('dy', fwd.cpu.y.dims, 9);
    const inputs = [dy, x, w];
    for (const outs of [['dx', 'dw', 'db'], ['', 'dw', ''], ['dx']]) {
      const r = await both(graph([{ op: 'ConvGrad', domain: MS, inputs: ['dy', 'x', 'w'], outputs: outs, attrs }], inputs, outs.filter(Boolean)), feedsOf(inputs));
      const what = `ConvGrad ${xd} * ${wd} -> ${outs}`;
      const G = numel(dy.dims.slice(2));
      if (outs[0]) near(r, 'dx', sumTol((wd[0] / (attrs.group ?? 1)) * numel(wd.slice(2))), what);
      if (outs[1]) near(r, 'dw', sumTol(xd[0] * G), what);
      if (outs[2]) near(r, 'db', sumTol(xd[0] * G), what);
    }
  }
  // ConvTransposeGrad (with auto_pad: the form the gradient rule emits it in); the second's dB
  // sums 2 x 48 x 48 terms (a workgroup each)
  for (const [xd, wd, group] of [[[2, 4, 3, 3], [4, 3, 3, 2], 2], [[2, 2, 24, 24], [2, 2, 3, 3], 1]]) {
    const x = value('x', xd, 10), w = value('w', wd, 11);
    const yd = [xd[0], wd[1] * group, 2 * xd[2], 2 * xd[3]], dy = value('dy', yd, 12);
    const attrs = { group, strides: [2, 2], auto_pad: 'SAME_UPPER' };
    const r = await both(graph([{ op: 'ConvTransposeGrad', domain: MS, inputs: ['dy', 'x', 'w'], outputs: ['dx', 'dw', 'db'], attrs }], [dy, x, w], ['dx', 'dw', 'db']), feedsOf([dy, x, w]));
    const what = `ConvTransposeGrad ${xd} * ${wd}`;
    near(r, 'dx', sumTol(wd[1] * numel(wd.slice(2))), what);
    near(r, 'dw', sumTol(xd[0] * numel(xd.slice(2))), what);
    near(r, 'db', sumTol(numel(yd) / yd[1]), what);
  }
});

test('MaxPool (with and without Indices), AveragePool, the global pools: the wasm backend\'s values', async () => {
  const cases = [
    [[2, 3, 6, 6], { kernel_shape: [2, 2], strides: [2, 2] }],
    [[1, 2, 7, 5], { kernel_shape: [3, 2], strides: [2, 1], pads: [1, 0, 1, 1], dilations: [1, 2] }],
    [[2, 2, 9], { kernel_shape: [3], strides: [2], pads: [1, 1], ceil_mode: 1 }],
    [[1, 2, 4, 3, 5], { kernel_shape: [2, 2, 3], pads: [0, 1, 1, 1, 0, 0] }],
  ];
  for (const [xd, attrs] of cases) {
    const x = value('x', xd, 13);
    const what = `${xd} ${JSON.stringify(attrs)}`;
    // Max: exact (its Indices, int64, are checked through MaxPoolGrad below)
    let r = await both(graph([{ op: 'MaxPool', inputs: ['x'], outputs: ['y', 'i'], attrs }], [x], ['y']), feedsOf([x]));
    near(r, 'y', () => 0, `MaxPool ${what} with Indices`);
    r = await both(graph([{ op: 'MaxPool', inputs: ['x'], outputs: ['y'], attrs }], [x], ['y']), feedsOf([x]));
    near(r, 'y', () => 0, `MaxPool ${what}`);
    // Average: a sum of at most K terms and one division
    for (const cip of [0, 1]) {
      const { dilations, ...avg } = attrs;
      r = await both(graph([{ op: 'AveragePool', inputs: ['x'], outputs: ['y'], attrs: { ...avg, count_include_pad: cip } }], [x], ['y']), feedsOf([x]));
      const K = numel(attrs.kernel_shape);
      near(r, 'y', () => 2 * K * EPS * K, `AveragePool ${what} count_include_pad=${cip}`);
    }
  }
  let r;
  for (const xd of [[2, 3, 5, 4], [3, 2, 7], [1, 2, 2, 3, 4]]) {
    const g = value('x', xd, 15);
    r = await both(graph([{ op: 'GlobalAveragePool', inputs: ['x'], outputs: ['y'] }, { op: 'GlobalMaxPool', inputs: ['x'], outputs: ['m'] }], [g], ['y', 'm']), feedsOf([g]));
    const S = numel(xd.slice(2));
    near(r, 'y', () => 2 * S * EPS, `GlobalAveragePool ${xd}`);
    near(r, 'm', () => 0, `GlobalMaxPool ${xd}`);
  }
});

test('MaxPoolGrad (through MaxPool\'s Indices) and AveragePoolGrad: the wasm backend\'s values', async () => {
  const cases = [
    [[2, 3, 6, 6], { kernel_shape: [2, 2], strides: [2, 2] }],
    [[1, 2, 7, 5], { kernel_shape: [3, 3], strides: [1, 1], pads: [1, 1, 1, 1] }], // overlapping windows
    [[2, 2, 9], { kernel_shape: [3], strides: [2], pads: [1, 1] }],
  ];
  for (const [xd, attrs] of cases) {
    const x = value('x', xd, 16);
    const fwd = await both(graph([{ op: 'MaxPool', inputs: ['x'], outputs: ['y'], attrs }], [x], ['y']), feedsOf([x]));
    const dy = value('dy', fwd.cpu.y.dims, 17);
    const K = numel(attrs.kernel_shape);
    // dX declared (as the training graph does): stride 2 maps more than one input size onto dY's
    const dx = { name: 'dx', dims: xd };
    let r = await both(graph([{ op: 'MaxPool', inputs: ['x'], outputs: ['y', 'i'], attrs }, { op: 'MaxPoolGrad', inputs: ['dy', 'i'], outputs: ['dx'], attrs }], [x, dy], [dx]), feedsOf([x, dy]));
    near(r, 'dx', () => 2 * K * EPS * K, `MaxPoolGrad ${xd}`);
    for (const cip of [0, 1]) {
      r = await both(graph([{ op: 'AveragePoolGrad', inputs: ['dy'], outputs: ['dx'], attrs: { ...attrs, count_include_pad: cip } }], [dy], [dx]), feedsOf([dy]));
      near(r, 'dx', () => 4 * K * EPS * K, `AveragePoolGrad ${xd} count_include_pad=${cip}`);
    }
  }
});

/**
 * Normalization outputs: within 8 m eps (1 + |ref|) (1 + inv)^2, m the terms of each statistic,
 * inv(i) the inverse std of element i's row or channel (1 for the statistics themselves): a
 * rounding of the mean is amplified by it, once in Y, twice in dX.
 */
const normTol = (m, inv = () => 1) => (i, ref) => 8 * m * EPS * (1 + Math.abs(ref)) * (1 + inv(i)) ** 2;

test('BatchNormalization, BatchNormInternal (all five outputs) and BatchNormalizationGrad within 8 m eps of the wasm backend', async () => {
  for (const xd of [[2, 3, 5, 5], [4, 6], [3, 2, 7]]) {
    const C = xd[1], m = numel(xd) / C;
    const x = value('x', xd, 18), scale = value('s', [C], 19), bias = value('b', [C], 20);
    const mean = value('mean', [C], 21), vr = { name: 'var', dims: [C], data: fill(C, 22).map((v) => 0.5 + Math.abs(v)) };
    const inputs = [x, scale, bias, mean, vr];
    let r = await both(graph([{ op: 'BatchNormalization', inputs: inputs.map((v) => v.name), outputs: ['y'], attrs: { epsilon: 1e-3 } }], inputs, ['y']), feedsOf(inputs));
    near(r, 'y', normTol(1), `BatchNormalization ${xd} (inference)`);
    const outs = ['y', 'rm', 'rv', 'sm', 'si'];
    r = await both(graph([{ op: 'BatchNormInternal', domain: MS, inputs: inputs.map((v) => v.name), outputs: outs, attrs: { epsilon: 1e-5, momentum: 0.8 } }, { op: 'Identity', inputs: ['y'], outputs: ['z'] }], inputs, ['z', 'rm', 'rv', 'sm', 'si']), feedsOf(inputs));
    const S = m / xd[0], si0 = r.cpu.si.data, chInv = (i) => si0[Math.floor(i / S) % C];
    near(r, 'z', normTol(m, chInv), `BatchNormInternal ${xd}`);
    for (const o of ['rm', 'rv', 'sm', 'si']) near(r, o, normTol(m), `BatchNormInternal ${xd}`);
    // only Y and the saved statistics
    r = await both(graph([{ op: 'BatchNormInternal', domain: MS, inputs: inputs.map((v) => v.name), outputs: ['y', '', '', 'sm', 'si'] }, { op: 'Identity', inputs: ['y'], outputs: ['z'] }], inputs, ['z', 'sm', 'si']), feedsOf(inputs));
    near(r, 'z', normTol(m, chInv), `BatchNormInternal ${xd} (some outputs)`);
    for (const o of ['sm', 'si']) near(r, o, normTol(m), `BatchNormInternal ${xd} (some outputs)`);
    const dy = value('dy', xd, 23), sm = { name: 'sm', dims: [C], data: r.cpu.sm.data }, si = { name: 'si', dims: [C], data: r.cpu.si.data };
    const gin = [dy, x, scale, sm, si];
    for (const gouts of [['dx', 'ds', 'db'], ['dx'], ['', 'ds', 'db']]) {
      r = await both(graph([{ op: 'BatchNormalizationGrad', domain: MS, inputs: gin.map((v) => v.name), outputs: gouts, attrs: { epsilon: 1e-5 } }, { op: 'Identity', inputs: ['x'], outputs: ['xx'] }], gin, gouts.filter(Boolean)), feedsOf(gin));
      if (gouts[0]) near(r, 'dx', normTol(m, chInv), `BatchNormalizationGrad ${xd} -> ${gouts}`);
      for (const o of gouts.slice(1).filter(Boolean)) near(r, o, normTol(m, () => Math.max(...si0)), `BatchNormalizationGrad ${xd} -> ${gouts}`);
    }
  }
});

test('LayerNormalization (with Mean and InvStdDev) and LayerNormalizationGrad within 8 n eps of the wasm backend', async () => {
  for (const [xd, axis, bias] of [[[4, 10], -1, true], [[2, 3, 70], -1, false], [[3, 2, 5], 1, true], [[130, 3], 1, true]]) {
    const ax = axis < 0 ? axis + xd.length : axis;
    const nd = xd.slice(ax), n = numel(nd), rows = numel(xd) / n;
    const x = value('x', xd, 24), scale = value('s', nd, 25), b = value('b', nd, 26);
    const inputs = bias ? [x, scale, b] : [x, scale];
    let r = await both(graph([{ op: 'LayerNormalization', inputs: inputs.map((v) => v.name), outputs: ['y', 'mu', 'inv'], attrs: { axis, epsilon: 1e-5 } }], inputs, ['y', 'mu', 'inv']), feedsOf(inputs));
    const rowInv = (i) => r.cpu.inv.data[Math.floor(i / n)];
    for (const o of ['mu', 'inv']) near(r, o, normTol(n), `LayerNormalization ${xd} axis ${axis}`);
    near(r, 'y', normTol(n, rowInv), `LayerNormalization ${xd} axis ${axis}`);
    const invs = r.cpu.inv.data;
    r = await both(graph([{ op: 'LayerNormalization', inputs: inputs.map((v) => v.name), outputs: ['y'], attrs: { axis } }], inputs, ['y']), feedsOf(inputs));
    near(r, 'y', normTol(n, (i) => invs[Math.floor(i / n)]), `LayerNormalization ${xd} axis ${axis} (Y only)`);
    const dy = value('dy', xd, 27), mu = { name: 'mu', dims: r.cpu.y.dims.map((d, i) => (i < ax ? d : 1)), data: null }, inv = { ...mu, name: 'inv' };
    const stats = await both(graph([{ op: 'LayerNormalization', inputs: inputs.map((v) => v.name), outputs: ['y', 'mu', 'inv'], attrs: { axis } }], inputs, ['y', 'mu', 'inv']), feedsOf(inputs));
    mu.data = stats.cpu.mu.data;
    inv.data = stats.cpu.inv.data;
    const gin = [dy, x, scale, mu, inv];
    for (const gouts of [['dx', 'ds', 'db'], ['dx'], ['', 'ds', '']]) {
      r = await both(graph([{ op: 'LayerNormalizationGrad', domain: MS, inputs: gin.map((v) => v.name), outputs: gouts, attrs: { axis } }, { op: 'Identity', inputs: ['x'], outputs: ['xx'] }], gin, gouts.filter(Boolean)), feedsOf(gin));
      const maxInv = Math.max(...invs);
      if (gouts[0]) near(r, 'dx', normTol(n, (i) => invs[Math.floor(i / n)]), `LayerNormalizationGrad ${xd} -> ${gouts}`);
      for (const o of gouts.slice(1).filter(Boolean)) near(r, o, normTol(rows, () => maxInv), `LayerNormalizationGrad ${xd} -> ${gouts}`);
    }
  }
});

const f32s = (name, v) => ({ name, dims: [v.length], data: Float32Array.from(v), init: true });

test('Resize (nearest, linear, cubic; the coordinate modes), Upsample and ResizeGrad within 32 T eps of the wasm backend', async () => {
  const x = value('x', [1, 2, 4, 5], 29);
  const cases = [
    // [attrs, scales (or null), sizes (or null)]: the U-Net's two, then the other modes
    [{ mode: 'linear' }, [1, 1, 2, 2], null],
    [{ mode: 'nearest' }, [1, 1, 2, 2], null],
    [{ mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' }, [1, 1, 3, 2], null],
    [{ mode: 'nearest', nearest_mode: 'round_prefer_ceil' }, null, [1, 2, 7, 3]],
    [{ mode: 'linear', coordinate_transformation_mode: 'align_corners' }, null, [1, 2, 6, 9]],
    [{ mode: 'linear', coordinate_transformation_mode: 'pytorch_half_pixel' }, [1, 1, 1.5, 0.5], null],
    [{ mode: 'cubic', coordinate_transformation_mode: 'half_pixel', exclude_outside: 1 }, [1, 1, 2, 1.5], null],
    [{ mode: 'cubic', cubic_coeff_a: -0.5, coordinate_transformation_mode: 'tf_half_pixel_for_nearest' }, [1, 1, 0.5, 2], null],
  ];
  for (const [attrs, scales, sizes] of cases) {
    const consts = scales ? [f32s('scales', scales)] : [{ name: 'sizes', dims: [4], data: BigInt64Array.from(sizes, BigInt), init: true }];
    const inputs = [x, ...consts];
    const r = await both(graph([{ op: 'Resize', inputs: ['x', '', scales ? 'scales' : '', ...(sizes ? ['sizes'] : [])], outputs: ['y'], attrs }], inputs, ['y']), feedsOf(inputs));
    const T = attrs.mode === 'cubic' ? 16 : attrs.mode === 'linear' ? 4 : 1;
    near(r, 'y', () => 32 * T * EPS, `Resize ${JSON.stringify(attrs)} ${scales ?? sizes}`);
    if (!scales) continue;
    const dy = value('dy', r.cpu.y.dims, 30);
    const gin = [dy, x, f32s('scales', scales)];
    const g = await both(graph([{ op: 'ResizeGrad', domain: MS, inputs: ['dy', 'x', '', 'scales'], outputs: ['dx'], attrs }, { op: 'Identity', inputs: ['x'], outputs: ['xx'] }], gin, ['dx']), feedsOf(gin));
    const Tg = T * Math.ceil(Math.max(...scales) + 1) ** 2;
    near(g, 'dx', () => 32 * Tg * EPS, `ResizeGrad ${JSON.stringify(attrs)} ${scales}`);
  }
  // Upsample (opset 9: scales an input)
  const sc = f32s('scales', [1, 1, 2, 3]);
  const r = await both(graph([{ op: 'Upsample', inputs: ['x', 'scales'], outputs: ['y'], attrs: { mode: 'linear' } }], [x, sc], ['y'], 9), feedsOf([x]));
  near(r, 'y', () => 32 * 4 * EPS, 'Upsample');
});

test('the reductions (weight and bias gradients, norm statistics) give the same bits run to run', async () => {
  // ConvGrad's dW and dB over 4 x 33 x 33 terms: one workgroup each
  const x = value('x', [4, 6, 33, 33], 32), w = value('w', [8, 6, 3, 3], 33), dy = value('dy', [4, 8, 33, 33], 34);
  const s = value('s', [6], 35), b = value('b', [6], 36), m = value('m', [6], 37), v = { name: 'v', dims: [6], data: fill(6, 38).map((e) => 1 + e * e) };
  const ln = value('lns', [1089], 39);
  const inputs = [x, w, dy, s, b, m, v, ln];
  const model = graph([
    { op: 'ConvGrad', domain: MS, inputs: ['dy', 'x', 'w'], outputs: ['dx', 'dw', 'db'], attrs: { pads: [1, 1, 1, 1] } },
    { op: 'BatchNormInternal', domain: MS, inputs: ['x', 's', 'b', 'm', 'v'], outputs: ['y', 'rm', 'rv', 'sm', 'si'] },
    { op: 'BatchNormalizationGrad', domain: MS, inputs: ['x', 'x', 's', 'sm', 'si'], outputs: ['bdx', 'bds', 'bdb'] },
    { op: 'Reshape', inputs: ['x', 'shape'], outputs: ['rows'] },
    { op: 'LayerNormalization', inputs: ['rows', 'lns'], outputs: ['lny', 'lnm', 'lni'] },
    { op: 'LayerNormalizationGrad', domain: MS, inputs: ['rows', 'rows', 'lns', 'lnm', 'lni'], outputs: ['ldx', 'lds', 'ldb'] },
  ], [...inputs, { name: 'shape', dims: [2], data: BigInt64Array.of(24n, 1089n), init: true }], ['dx', 'dw', 'db', 'y', 'rm', 'rv', 'bdx', 'bds', 'bdb', 'lny', 'ldx', 'lds', 'ldb']);
  const session = await InferenceSession.create(model, { backend: 'webgpu', gpu });
  try {
    const feeds = feedsOf(inputs);
    const first = await session.run(feeds), second = await session.run(feeds);
    for (const [k, t] of Object.entries(first)) assert.deepEqual(new Uint32Array(second[k].data.buffer), new Uint32Array(t.data.buffer), k);
  } finally {
    session.release();
  }
});

test('a U-Net-style model (BatchNorm, MaxPool, ConvTranspose k2 s2, bilinear and nearest Resize) trains on webgpu as on wasm', async () => {
  const init = (name, dims, seed, f = (e) => e * 0.5) => ({ name, dims, data: fill(numel(dims), seed).map(f), init: true });
  const weights = [init('w1', [4, 2, 3, 3], 40), init('b1', [4], 41), init('g', [4], 42, (e) => 1 + e * 0.1), init('bb', [4], 43),
    init('w2', [4, 3, 2, 2], 44), init('b2', [3], 45), init('w3', [1, 3, 1, 1], 46), init('w4', [1, 2, 1, 1], 47)];
  const model = onnxModel({
    nodes: [
      { op: 'Conv', inputs: ['x', 'w1', 'b1'], outputs: ['c1'], attrs: { pads: [1, 1, 1, 1] } },
      { op: 'BatchNormalization', inputs: ['c1', 'g', 'bb', 'rm', 'rv'], outputs: ['n1'], attrs: { training_mode: 1 } },
      { op: 'Relu', inputs: ['n1'], outputs: ['r1'] },
      { op: 'MaxPool', inputs: ['r1'], outputs: ['p1'], attrs: { kernel_shape: [2, 2], strides: [2, 2] } },
      { op: 'ConvTranspose', inputs: ['p1', 'w2', 'b2'], outputs: ['u1'], attrs: { kernel_shape: [2, 2], strides: [2, 2] } },
      { op: 'Resize', inputs: ['u1', '', 'sc'], outputs: ['u2'], attrs: { mode: 'linear' } },
      { op: 'Conv', inputs: ['u2', 'w3'], outputs: ['o1'] },
      { op: 'Resize', inputs: ['x', '', 'sc'], outputs: ['side'], attrs: { mode: 'nearest' } },
      { op: 'Conv', inputs: ['side', 'w4'], outputs: ['o2'] },
      { op: 'Add', inputs: ['o1', 'o2'], outputs: ['y'] },
    ],
    inputs: [{ name: 'x', dims: ['n', 2, 8, 8] }],
    initializers: [...weights, init('rm', [4], 48, () => 0), init('rv', [4], 49, () => 1), f32s('sc', [1, 1, 2, 2])],
    outputs: [{ name: 'y', dims: ['n', 1, 16, 16] }],
    opset: 15,
  });
  const art = await artifacts.generateArtifacts(model, { loss: 'MSELoss', optimizer: 'SGD', requiresGrad: weights.map((w) => w.name) });
  const runs = {};
  for (const backend of ['wasm', 'webgpu']) {
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    try {
      const losses = [];
      for (let i = 0; i < 3; i++) {
        const x = new Tensor('float32', fill(2 * 2 * 64, 50 + i), [2, 2, 8, 8]), t = new Tensor('float32', fill(2 * 256, 60 + i), [2, 1, 16, 16]);
        losses.push((await module.run(x, t)).data[0]);
        await optimizer.step();
        module.lazyResetGrad();
      }
      const values = [];
      for (const p of ['rm', 'rv', ...weights.map((w) => w.name)]) values.push(...(await state.parameters.get(p)).data);
      runs[backend] = [...losses, ...values];
    } finally {
      optimizer.release();
      module.release();
      state.release();
    }
  }
  // losses, running statistics and parameters after three steps
  runs.webgpu.forEach((v, i) => assert.ok(Math.abs(v - runs.wasm[i]) <= 1e-5 * (1 + Math.abs(runs.wasm[i])), `[${i}] ${v} vs ${runs.wasm[i]}`));
});

test('refusals name what the webgpu backend does not run', async () => {
  // MaxPoolGrad without the forward's attributes (sized by its declared dX only)
  const m = onnxModel({
    nodes: [{ op: 'MaxPool', inputs: ['x'], outputs: ['y', 'i'], attrs: { kernel_shape: [2, 2], strides: [2, 2] } }, { op: 'MaxPoolGrad', inputs: ['dy', 'i'], outputs: ['dx'] }],
    inputs: [{ name: 'x', dims: [1, 2, 4, 4] }, { name: 'dy', dims: [1, 2, 2, 2] }],
    outputs: [{ name: 'dx', dims: [1, 2, 4, 4] }],
  });
  const s = await InferenceSession.create(m, { backend: 'webgpu', gpu });
  const t = (dims) => new Tensor('float32', new Float32Array(numel(dims)), dims);
  try {
    await assert.rejects(s.run({ x: t([1, 2, 4, 4]), dy: t([1, 2, 2, 2]) }), /MaxPoolGrad with the forward's attributes/);
  } finally {
    s.release();
  }
  // Resize's tf_crop_and_resize (its roi is read at run)
  const x = value('x', [1, 1, 3, 3], 31), roi = f32s('roi', [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.8]), sc = f32s('scales', [1, 1, 2, 2]);
  const c = await InferenceSession.create(graph([{ op: 'Resize', inputs: ['x', 'roi', 'scales'], outputs: ['y'], attrs: { mode: 'linear', coordinate_transformation_mode: 'tf_crop_and_resize' } }], [x, roi, sc], ['y']), { backend: 'webgpu', gpu });
  try {
    await assert.rejects(c.run(feedsOf([x])), /tf_crop_and_resize is not on the webgpu backend/);
  } finally {
    c.release();
  }
});
