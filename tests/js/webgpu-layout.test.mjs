// The webgpu backend's comparisons, Where, Cast, DivGrad, Dropout and layout ops (Slice,
// SliceGrad, Concat, Split, Gather, GatherGrad) against the wasm backend, op by op with small
// shapes, under the
// tolerance policy of docs/architecture.md: the moves and comparisons bit for bit, GatherGrad
// bit for bit too (each row's terms added in the CPU's order), DivGrad within its sums' rounding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tensor } from '../../js/index.js';
import { onnxModel } from './onnx-writer.mjs';
import { InferenceSession } from '../../js/index.js';
import { gpu } from './webgpu-env.mjs';
import { EPS, fill, both, tensorOf, value, close } from './webgpu-check.mjs';

const DT = { float32: 1, int32: 6, int64: 7, bool: 9 };
const ints = (n, seed, lo, hi) => Array.from({ length: n }, (_, i) => lo + (Math.abs(Math.floor(Math.sin(i * 7.31 + seed) * 1e4)) % (hi - lo)));
const numel = (dims) => dims.reduce((a, b) => a * b, 1);

/** A Tensor of `dtype` with small values (float32: fill; ints: in [-4, 4)). */
function tensorOfType(dtype, dims, seed) {
  const n = numel(dims);
  if (dtype === 'float32') return new Tensor('float32', fill(n, seed).map((v) => Math.round(v * 4) / 4), dims);
  const v = ints(n, seed, -4, 4);
  return dtype === 'int32' ? new Tensor('int32', Int32Array.from(v), dims) : new Tensor('int64', BigInt64Array.from(v, BigInt), dims);
}

/** Every output of `model` for `feeds` the same bits on both backends. */
async function same(model, feeds, what) {
  const r = await both(model, feeds);
  for (const name of Object.keys(r.cpu)) {
    assert.deepEqual(r.gpu[name].dims, r.cpu[name].dims, `${what}: ${name} dims`);
    assert.equal(r.gpu[name].type, r.cpu[name].type, `${what}: ${name} dtype`);
    assert.deepEqual(Array.from(r.gpu[name].data), Array.from(r.cpu[name].data), `${what}: ${name}`);
  }
}

test('Equal, Less, Greater, LessOrEqual, GreaterOrEqual of float32, int32 and int64, broadcast: bit for bit', async () => {
  for (const dtype of ['float32', 'int32', 'int64']) {
    for (const [da, db] of [[[2, 3, 5], [5]], [[3, 1], [1, 7]], [[9], []]]) {
      const a = tensorOfType(dtype, da, 1), b = tensorOfType(dtype, db, 2);
      for (const op of ['Equal', 'Less', 'Greater', 'LessOrEqual', 'GreaterOrEqual']) {
        const model = onnxModel({
          nodes: [{ op, inputs: ['a', 'b'], outputs: ['y'] }],
          inputs: [{ name: 'a', dims: da, dtype: DT[dtype] }, { name: 'b', dims: db, dtype: DT[dtype] }],
          outputs: [{ name: 'y', dtype: DT.bool }],
        });
        await same(model, { a, b }, `${op} ${dtype} ${da} ${db}`);
      }
    }
  }
  // int64 beyond 32 bits: the high words decide
  const big = [2n ** 40n, -(2n ** 40n), 5n, -5n, 2n ** 33n + 1n, 2n ** 33n];
  const a = new Tensor('int64', BigInt64Array.from(big), [6]), b = new Tensor('int64', BigInt64Array.from([5n, 5n, 5n, 2n ** 40n, 2n ** 33n, 2n ** 33n + 1n]), [6]);
  for (const op of ['Equal', 'Less', 'Greater']) {
    const model = onnxModel({ nodes: [{ op, inputs: ['a', 'b'], outputs: ['y'] }], inputs: [{ name: 'a', dims: [6], dtype: DT.int64 }, { name: 'b', dims: [6], dtype: DT.int64 }], outputs: [{ name: 'y', dtype: DT.bool }] });
    await same(model, { a, b }, `${op} int64 wide`);
  }
});

test('Where over float32 and int64, the condition and both branches broadcast: bit for bit', async () => {
  for (const dtype of ['float32', 'int64']) {
    for (const [dc, dx, dz] of [[[2, 3, 4], [2, 3, 4], [2, 3, 4]], [[1, 4], [3, 1], []], [[2, 1, 5], [5], [3, 1]]]) {
      const c = new Tensor('bool', Uint8Array.from(ints(numel(dc), 3, 0, 2)), dc);
      const model = onnxModel({
        nodes: [{ op: 'Less', inputs: ['c', 'half'], outputs: ['cond'] }, { op: 'Where', inputs: ['cond', 'x', 'z'], outputs: ['y'] }],
        inputs: [{ name: 'c', dims: dc }, { name: 'x', dims: dx, dtype: DT[dtype] }, { name: 'z', dims: dz, dtype: DT[dtype] }],
        initializers: [{ name: 'half', dims: [], data: Float32Array.of(0.5) }],
        outputs: [{ name: 'y', dtype: DT[dtype] }],
      });
      await same(model, { c: new Tensor('float32', Float32Array.from(c.data), dc), x: tensorOfType(dtype, dx, 4), z: tensorOfType(dtype, dz, 5) }, `Where ${dtype} ${dc} ${dx} ${dz}`);
    }
  }
});

test('DivGrad: each gradient summed over its broadcast axes within m eps of the terms', async () => {
  for (const [da, db] of [[[2, 3, 4], [2, 3, 4]], [[2, 3, 4], [4]], [[3, 1], [2, 3, 4]], [[5, 6], []]]) {
    const out = da.length >= db.length ? da.map((d, i) => Math.max(d, db[i - (da.length - db.length)] ?? 1)) : db.map((d, i) => Math.max(d, da[i - (db.length - da.length)] ?? 1));
    const g = value('g', out, 6), a = value('a', da, 7), b = value('b', db, 8);
    b.data = b.data.map((v) => 0.5 + Math.abs(v)); // |terms| <= 4
    const model = onnxModel({
      nodes: [{ op: 'DivGrad', domain: 'com.microsoft', inputs: ['g', 'a', 'b'], outputs: ['da', 'db'] }],
      inputs: [{ name: 'g', dims: out }, { name: 'a', dims: da }, { name: 'b', dims: db }],
      outputs: [{ name: 'da' }, { name: 'db' }],
    });
    const m = numel(out) / Math.min(numel(da), numel(db));
    await close(model, { g: tensorOf(g), a: tensorOf(a), b: tensorOf(b) }, 4 * m * 4 * EPS, 4 * EPS, `DivGrad ${da} ${db}`);
  }
});

const i64 = (name, v) => ({ name, dims: [v.length], data: BigInt64Array.from(v, BigInt) });

test('Slice (steps, negative steps, axes) and SliceGrad of float32 and int64: bit for bit', async () => {
  const dims = [4, 5, 6];
  for (const [starts, ends, axes, steps] of [[[1], [3], [0], [1]], [[0, 4], [5, 1], [1, 2], [2, -1]], [[-1, 5, 0], [-5, 0, 6], [0, 2, 1], [-1, -2, 3]], [[2], [100], [-1], [1]]]) {
    for (const dtype of ['float32', 'int64']) {
      const model = onnxModel({
        nodes: [{ op: 'Slice', inputs: ['x', 'starts', 'ends', 'axes', 'steps'], outputs: ['y'] }],
        inputs: [{ name: 'x', dims, dtype: DT[dtype] }],
        initializers: [i64('starts', starts), i64('ends', ends), i64('axes', axes), i64('steps', steps)],
        outputs: [{ name: 'y', dtype: DT[dtype] }],
      });
      await same(model, { x: tensorOfType(dtype, dims, 9) }, `Slice ${dtype} ${starts} ${ends} ${axes} ${steps}`);
    }
    // SliceGrad(dY, shape, starts, ends, axes, steps): dY where Slice read, zeros elsewhere
    const probe = await both(onnxModel({
      nodes: [{ op: 'Slice', inputs: ['x', 'starts', 'ends', 'axes', 'steps'], outputs: ['y'] }],
      inputs: [{ name: 'x', dims }],
      initializers: [i64('starts', starts), i64('ends', ends), i64('axes', axes), i64('steps', steps)],
      outputs: [{ name: 'y' }],
    }), { x: tensorOf(value('x', dims, 10)) });
    const ydims = probe.cpu.y.dims;
    const model = onnxModel({
      nodes: [{ op: 'SliceGrad', domain: 'com.microsoft', inputs: ['dy', 'shape', 'starts', 'ends', 'axes', 'steps'], outputs: ['dx'] }],
      inputs: [{ name: 'dy', dims: ydims }],
      initializers: [i64('shape', dims), i64('starts', starts), i64('ends', ends), i64('axes', axes), i64('steps', steps)],
      outputs: [{ name: 'dx' }],
    });
    await same(model, { dy: tensorOf(value('dy', ydims, 11)) }, `SliceGrad ${starts} ${ends} ${axes} ${steps}`);
  }
});

test('Concat and Split along each axis, of float32 and int64: bit for bit', async () => {
  for (const dtype of ['float32', 'int64']) {
    for (const axis of [0, 1, -1]) {
      const parts = [[2, 3, 4], [2, 3, 4], [2, 3, 4]].map((d, k) => d.map((v, i) => (i === (axis + 3) % 3 ? v + k : v)));
      const names = parts.map((_, k) => `p${k}`);
      const concat = onnxModel({
        nodes: [{ op: 'Concat', inputs: names, outputs: ['y'], attrs: { axis } }],
        inputs: parts.map((d, k) => ({ name: names[k], dims: d, dtype: DT[dtype] })),
        outputs: [{ name: 'y', dtype: DT[dtype] }],
      });
      await same(concat, Object.fromEntries(parts.map((d, k) => [names[k], tensorOfType(dtype, d, 12 + k)])), `Concat ${dtype} axis ${axis}`);
      const whole = [2, 6, 5];
      const sizes = axis === 0 ? [1, 1] : axis === 1 ? [1, 2, 3] : [2, 3];
      const outs = sizes.map((_, k) => `y${k}`);
      const split = onnxModel({
        nodes: [{ op: 'Split', inputs: ['x', 'split'], outputs: outs, attrs: { axis } }],
        inputs: [{ name: 'x', dims: whole, dtype: DT[dtype] }],
        initializers: [i64('split', sizes)],
        outputs: outs.map((name) => ({ name, dtype: DT[dtype] })),
      });
      await same(split, { x: tensorOfType(dtype, whole, 15) }, `Split ${dtype} axis ${axis}`);
    }
  }
});

test('Gather (int32 and int64 indices, negative ones, float16 data widened) and GatherGrad: bit for bit', async () => {
  const x = value('x', [7, 3, 4], 16);
  for (const [axis, idims] of [[0, [2, 5]], [1, [4]], [2, []], [-1, [3, 2]]]) {
    const d = [7, 3, 4].at(axis);
    const iv = ints(numel(idims), 17 + axis, -d, d);
    for (const itype of ['int32', 'int64']) {
      const indices = itype === 'int32' ? new Tensor('int32', Int32Array.from(iv), idims) : new Tensor('int64', BigInt64Array.from(iv, BigInt), idims);
      const model = onnxModel({
        nodes: [{ op: 'Gather', inputs: ['x', 'i'], outputs: ['y'], attrs: { axis } }],
        inputs: [{ name: 'x', dims: [7, 3, 4] }, { name: 'i', dims: idims, dtype: DT[itype] }],
        outputs: [{ name: 'y' }],
      });
      await same(model, { x: tensorOf(x), i: indices }, `Gather axis ${axis} ${itype} ${idims}`);
      // GatherGrad(shape, indices, dY): repeated indices add in order of position
      const r = await both(model, { x: tensorOf(x), i: indices });
      const gdims = r.cpu.y.dims;
      const grad = onnxModel({
        nodes: [{ op: 'GatherGrad', domain: 'com.microsoft', inputs: ['shape', 'i', 'dy'], outputs: ['dx'], attrs: { axis } }],
        inputs: [{ name: 'i', dims: idims, dtype: DT[itype] }, { name: 'dy', dims: gdims }],
        initializers: [i64('shape', [7, 3, 4])],
        outputs: [{ name: 'dx' }],
      });
      await same(grad, { i: indices, dy: tensorOf(value('dy', gdims, 18)) }, `GatherGrad axis ${axis} ${itype} ${idims}`);
    }
  }
  // an embedding of float16 rows (read through a Cast): widened to float32 as it is read, as on wasm
  const half = Uint16Array.from({ length: 10 * 3 }, (_, i) => 0x3c00 + ((i * 37) % 1024) - (i % 2 ? 0x8000 : 0));
  const emb = onnxModel({
    nodes: [{ op: 'Cast', inputs: ['w'], outputs: ['wf'], attrs: { to: 1 } }, { op: 'Gather', inputs: ['wf', 'i'], outputs: ['y'] }],
    inputs: [{ name: 'i', dims: [2, 4], dtype: DT.int64 }],
    initializers: [{ name: 'w', dims: [10, 3], data: half }],
    outputs: [{ name: 'y' }],
  });
  await same(emb, { i: new Tensor('int64', BigInt64Array.of(0n, 9n, 3n, 3n, -1n, 5n, 2n, 7n), [2, 4]) }, 'Gather of float16 rows');
});

test('Cast between float32, int32, int64 and bool: bit for bit', async () => {
  const floats = Float32Array.of(-3.75, 2.5, 0, -0, 0.9, -0.9, 1e10, -1e10, 3e9, -3e9, 1e20, -1e20, 16777217, 7, -2147483648, 2147483520);
  const int64s = BigInt64Array.of(0n, 1n, -1n, 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 40n + 3n, -(2n ** 40n), 16777217n, 123456789n, -5n, 2n ** 62n, 7n, 8n, 9n, 10n, 11n);
  const feeds = {
    float32: new Tensor('float32', floats, [16]),
    int32: new Tensor('int32', Int32Array.of(0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 16777217, -16777219, 5, 6, 7, 8, 9, 10, 11, 12, 13), [16]),
    int64: new Tensor('int64', int64s, [16]),
    bool: new Tensor('bool', Uint8Array.from({ length: 16 }, (_, i) => i % 3 === 0), [16]),
  };
  for (const from of Object.keys(feeds))
    for (const to of Object.keys(feeds)) {
      const model = onnxModel({
        nodes: [{ op: 'Cast', inputs: ['x'], outputs: ['y'], attrs: { to: DT[to] } }],
        inputs: [{ name: 'x', dims: [16], dtype: DT[from] }],
        outputs: [{ name: 'y', dtype: DT[to] }],
      });
      await same(model, { x: feeds[from] }, `Cast ${from} to ${to}`);
    }
});

test('Dropout draws the wasm backend\'s masks, fresh each run; DropoutGrad scales by them; not training, a copy', async () => {
  const dims = [3, 37];
  const x = value('x', dims, 40), dy = value('dy', dims, 41);
  for (const [ratio, training] of [[0.3, true], [0.75, true], [0.3, false], [0, true]]) {
    const model = onnxModel({
      nodes: [
        { op: 'Dropout', inputs: ['x', 'ratio', 'training'], outputs: ['y', 'mask'], attrs: { seed: 7 } },
        { op: 'DropoutGrad', domain: 'com.microsoft', inputs: ['dy', 'mask', 'ratio', 'training'], outputs: ['dx'] },
      ],
      inputs: [{ name: 'x', dims }, { name: 'dy', dims }],
      initializers: [{ name: 'ratio', dims: [], data: Float32Array.of(ratio) }, { name: 'training', dims: [], data: Uint8Array.of(training ? 1 : 0) }],
      outputs: [{ name: 'y' }, { name: 'mask', dtype: DT.bool }, { name: 'dx' }],
      opset: 13,
    });
    // one session per backend: each counts its own draws from the first run
    const c = await InferenceSession.create(model, { backend: 'wasm' });
    const g = await InferenceSession.create(model, { backend: 'webgpu', gpu });
    const masks = new Set();
    for (let run = 0; run < 3; run++) {
      const [rc, rg] = [await c.run({ x: tensorOf(x), dy: tensorOf(dy) }), await g.run({ x: tensorOf(x), dy: tensorOf(dy) })];
      for (const name of ['y', 'mask', 'dx']) assert.deepEqual(Array.from(rg[name].data), Array.from(rc[name].data), `ratio ${ratio} training ${training} run ${run}: ${name}`);
      masks.add(Array.from(rg.mask.data).join(''));
    }
    assert.equal(masks.size, training && ratio > 0 ? 3 : 1, `ratio ${ratio} training ${training}: masks across runs`);
    c.release();
    g.release();
  }
});

test('Expand, Transpose, Slice and Split of bool (bytes, a whole word a thread), int64 and float32: bit for bit', async () => {
  const bools = (dims, seed) => new Tensor('bool', Uint8Array.from(ints(numel(dims), seed, 0, 2)), dims);
  for (const dtype of ['bool', 'int64', 'float32']) {
    const make = (dims, seed) => (dtype === 'bool' ? bools(dims, seed) : tensorOfType(dtype, dims, seed));
    const io = (dims) => ({ name: 'x', dims, dtype: DT[dtype] });
    for (const [dims, shape] of [[[3, 1], [2, 3, 5]], [[1, 7], [3, 7]], [[5], [2, 5]]]) {
      const model = onnxModel({ nodes: [{ op: 'Expand', inputs: ['x', 'shape'], outputs: ['y'] }], inputs: [io(dims)], initializers: [i64('shape', shape)], outputs: [{ name: 'y', dtype: DT[dtype] }] });
      await same(model, { x: make(dims, 50) }, `Expand ${dtype} ${dims} to ${shape}`);
    }
    for (const perm of [[1, 0, 2], [2, 1, 0]]) {
      const model = onnxModel({ nodes: [{ op: 'Transpose', inputs: ['x'], outputs: ['y'], attrs: { perm } }], inputs: [io([3, 5, 2])], outputs: [{ name: 'y', dtype: DT[dtype] }] });
      await same(model, { x: make([3, 5, 2], 51) }, `Transpose ${dtype} ${perm}`);
    }
    const slice = onnxModel({
      nodes: [{ op: 'Slice', inputs: ['x', 'starts', 'ends', 'axes', 'steps'], outputs: ['y'] }],
      inputs: [io([4, 9])],
      initializers: [i64('starts', [1, 8]), i64('ends', [4, 0]), i64('axes', [0, 1]), i64('steps', [1, -3])],
      outputs: [{ name: 'y', dtype: DT[dtype] }],
    });
    await same(slice, { x: make([4, 9], 52) }, `Slice ${dtype}`);
    const split = onnxModel({
      nodes: [{ op: 'Split', inputs: ['x', 'split'], outputs: ['a', 'b'], attrs: { axis: 1 } }],
      inputs: [io([3, 7])],
      initializers: [i64('split', [3, 4])],
      outputs: [{ name: 'a', dtype: DT[dtype] }, { name: 'b', dtype: DT[dtype] }],
    });
    await same(split, { x: make([3, 7], 53) }, `Split ${dtype}`);
  }
});

test('And, Or, Xor (broadcast) and Not of bools; Clip (bounds as attributes, initializers or absent) and its gradient: bit for bit', async () => {
  const bools = (dims, seed) => new Tensor('bool', Uint8Array.from(ints(numel(dims), seed, 0, 2)), dims);
  for (const op of ['And', 'Or', 'Xor']) {
    const model = onnxModel({ nodes: [{ op, inputs: ['a', 'b'], outputs: ['y'] }], inputs: [{ name: 'a', dims: [3, 5], dtype: DT.bool }, { name: 'b', dims: [5], dtype: DT.bool }], outputs: [{ name: 'y', dtype: DT.bool }] });
    await same(model, { a: bools([3, 5], 60), b: bools([5], 61) }, op);
  }
  await same(onnxModel({ nodes: [{ op: 'Not', inputs: ['a'], outputs: ['y'] }], inputs: [{ name: 'a', dims: [7], dtype: DT.bool }], outputs: [{ name: 'y', dtype: DT.bool }] }), { a: bools([7], 62) }, 'Not');
  const x = value('x', [4, 9], 63);
  x.data = x.data.map((v) => v * 8);
  const bound = (name, v) => ({ name, dims: [], data: Float32Array.of(v) });
  for (const [inputs, inits] of [[['x', 'lo', 'hi'], [bound('lo', 0), bound('hi', 6)]], [['x', 'lo'], [bound('lo', -1)]], [['x', '', 'hi'], [bound('hi', 2.5)]]]) {
    const model = onnxModel({ nodes: [{ op: 'Clip', inputs, outputs: ['y'] }], inputs: [{ name: 'x', dims: [4, 9] }], initializers: inits, outputs: [{ name: 'y' }], opset: 13 });
    await same(model, { x: tensorOf(x) }, `Clip ${inputs}`);
  }
  await same(onnxModel({ nodes: [{ op: 'Clip', inputs: ['x'], outputs: ['y'], attrs: { min: -2.5, max: { float: 3 } } }], inputs: [{ name: 'x', dims: [4, 9] }], outputs: [{ name: 'y' }], opset: 6 }), { x: tensorOf(x) }, 'Clip opset 6');
  // ReLU6 in a training model: its gradient (Less, Greater, Or, Where) on the GPU too
  const mlp = onnxModel({
    nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['h'] }, { op: 'Clip', inputs: ['h', 'lo', 'hi'], outputs: ['y'] }],
    inputs: [{ name: 'x', dims: [4, 9] }],
    initializers: [{ name: 'w', dims: [9, 5], data: fill(45, 64).map((v) => v * 0.4) }, bound('lo', 0), bound('hi', 1)],
    outputs: [{ name: 'y' }],
    opset: 13,
  });
  const { artifacts, CheckpointState, Module } = await import('../../js/index.js');
  const art = await artifacts.generateArtifacts(mlp, { requiresGrad: ['w'], loss: 'MSELoss', optimizer: 'SGD' });
  const grads = {};
  for (const backend of ['wasm', 'webgpu']) {
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    await module.run(tensorOf(value('x', [4, 9], 66)), new Tensor('float32', fill(20, 65), [4, 5]));
    assert.equal(module.backend, backend);
    grads[backend] = Array.from((await state.parameters.get('w')).grad);
    module.release();
    state.release();
  }
  assert.ok(grads.wasm.some((g) => g !== 0), 'a gradient flows through the clip');
  grads.webgpu.forEach((g, i) => assert.ok(Math.abs(g - grads.wasm[i]) <= 1e-6 * (1 + Math.abs(grads.wasm[i])), `dw[${i}] ${g} vs ${grads.wasm[i]}`));
});
