// The webgpu backend's recurrent kernels against the wasm backend, op by op on small shapes, under
// the tolerance policy of docs/architecture.md: LSTM, GRU and their training forms forward (one
// and two directions, reverse, with and without bias and initial states, some outputs absent;
// GRU with and without linear_before_reset), LSTMGrad and GRUGrad (every gradient, or some;
// with and without the gradients of the final states); a hidden size past one workgroup's
// threads; a GRU classifier training as on wasm; and refusals that name what is unsupported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor } from '../../js/index.js';
import { onnxModel } from './onnx-writer.mjs';
import { gpu } from './webgpu-env.mjs';
import { both, feedsOf, graph as anyGraph, value } from './webgpu-check.mjs';

const graph = (nodes, inputs, outputs) => anyGraph(nodes, inputs, outputs, 14);

const MS = 'com.microsoft';
const TOL = { abs: 2e-6, rel: 2e-5 };

/** Every output within TOL of the wasm backend's; returns the largest difference seen. */
function near(r, what) {
  let worst = 0;
  for (const name of Object.keys(r.cpu)) {
    const g = r.gpu[name], c = r.cpu[name];
    assert.deepEqual(g.dims, c.dims, `${what} ${name}: dims`);
    c.data.forEach((b, i) => {
      const d = Math.abs(g.data[i] - b);
      worst = Math.max(worst, d);
      assert.ok(d <= TOL.abs + TOL.rel * Math.abs(b), `${what} ${name}[${i}]: ${g.data[i]} vs ${b}`);
    });
  }
  return worst;
}

/** A recurrent op's inputs for `gates` gates (LSTM 4, GRU 3): X [S, B, I], W, R (scaled so that
 * the gates vary), B, initial_h, initial_c. */
function rnnInputs(gates, S, B, I, H, D, seed) {
  const scale = (v, k) => ({ ...v, data: v.data.map((x) => x * k) });
  return {
    x: value('x', [S, B, I], seed),
    w: scale(value('w', [D, gates * H, I], seed + 1), 0.6),
    r: scale(value('r', [D, gates * H, H], seed + 2), 0.4),
    b: scale(value('b', [D, 2 * gates * H], seed + 3), 0.3),
    h0: value('h0', [D, B, H], seed + 4),
    c0: value('c0', [D, B, H], seed + 5),
  };
}
const lstmInputs = (...a) => rnnInputs(4, ...a);
const gruInputs = (...a) => rnnInputs(3, ...a);

const CASES = [
  // S, B, I, H, direction, with bias / h0 / c0
  [5, 3, 4, 6, 'forward', true],
  [4, 2, 3, 5, 'reverse', false],
  [3, 2, 4, 3, 'bidirectional', true],
  [3, 1, 5, 300, 'forward', true], // 4H gates past 256 threads
];

test('LSTM and LSTMTraining forward: every output within the policy of the wasm backend', async (t) => {
  let worst = 0;
  for (const [S, B, I, H, direction, full] of CASES) {
    const D = direction === 'bidirectional' ? 2 : 1;
    const v = lstmInputs(S, B, I, H, D, S + H);
    const ins = full ? [v.x, v.w, v.r, v.b, null, v.h0, v.c0] : [v.x, v.w, v.r];
    const names = ins.map((x) => x?.name ?? '');
    const attrs = { hidden_size: H, direction };
    const given = ins.filter(Boolean);
    for (const [op, domain, outs] of [['LSTMTraining', MS, ['y', 'yh', 'yc', 'call', 'iofc']], ['LSTM', undefined, ['y', 'yh', 'yc']], ['LSTM', undefined, ['', 'yh', 'yc']]]) {
      const r = await both(graph([{ op, domain, inputs: names, outputs: outs, attrs }], given, outs.filter(Boolean)), feedsOf(given));
      worst = Math.max(worst, near(r, `${op} ${direction} S${S} B${B} I${I} H${H} ${full ? 'B h0 c0' : ''} -> ${outs}`));
    }
  }
  t.diagnostic(`largest difference from the wasm backend: ${worst}`);
});

test('LSTMGrad: every gradient, or some, within the policy of the wasm backend', async (t) => {
  let worst = 0;
  for (const [S, B, I, H, direction, full] of CASES) {
    const D = direction === 'bidirectional' ? 2 : 1;
    const v = lstmInputs(S, B, I, H, D, 2 * S + H);
    const attrs = { hidden_size: H, direction };
    // the forward's kept values (the wasm backend's, given to both)
    const fwdIns = full ? [v.x, v.w, v.r, v.b, null, v.h0, v.c0] : [v.x, v.w, v.r];
    const fwd = await both(graph([{ op: 'LSTMTraining', domain: MS, inputs: fwdIns.map((x) => x?.name ?? ''), outputs: ['hall', 'yh', 'yc', 'call', 'iofc'], attrs }], fwdIns.filter(Boolean), ['hall', 'call', 'iofc']), feedsOf(fwdIns.filter(Boolean)));
    const kept = ['hall', 'call', 'iofc'].map((name) => ({ name, dims: fwd.cpu[name].dims, data: Float32Array.from(fwd.cpu[name].data) }));
    const dhall = value('dhall', [S, D, B, H], 31), dht = value('dht', [D, B, H], 32), dct = value('dct', [D, B, H], 33);
    for (const [withStates, outs] of [[true, ['dx', 'dw', 'dr', 'db', 'dh0', 'dc0']], [false, ['', 'dw', 'dr', 'db']], [true, ['dx', '', '', '', 'dh0']]]) {
      const ins = [v.x, v.w, v.r, null, full ? v.h0 : null, full ? v.c0 : null, ...kept, dhall, withStates ? dht : null, withStates ? dct : null];
      const given = ins.filter(Boolean);
      const r = await both(graph([{ op: 'LSTMGrad', domain: MS, inputs: ins.map((x) => x?.name ?? ''), outputs: outs, attrs }], given, outs.filter(Boolean)), feedsOf(given));
      worst = Math.max(worst, near(r, `LSTMGrad ${direction} S${S} B${B} H${H} ${full ? 'h0 c0' : ''} ${withStates ? 'dHt dCt' : ''} -> ${outs}`));
    }
  }
  t.diagnostic(`largest difference from the wasm backend: ${worst}`);
});

test('GRU and GRUTraining forward, GRUGrad: within the policy of the wasm backend, with and without linear_before_reset', async (t) => {
  let worst = 0;
  for (const [S, B, I, H, direction, full] of CASES) {
    const D = direction === 'bidirectional' ? 2 : 1;
    for (const lbr of [0, 1]) {
      const v = gruInputs(S, B, I, H, D, 3 * S + H + lbr);
      const attrs = { hidden_size: H, direction, linear_before_reset: lbr };
      const ins = full ? [v.x, v.w, v.r, v.b, null, v.h0] : [v.x, v.w, v.r];
      const names = ins.map((x) => x?.name ?? '');
      const given = ins.filter(Boolean);
      const what = `${direction} S${S} B${B} I${I} H${H} lbr ${lbr} ${full ? 'B h0' : ''}`;
      for (const [op, domain, outs] of [['GRUTraining', MS, ['y', 'yh', 'zrh']], ['GRU', undefined, ['y', 'yh']], ['GRU', undefined, ['', 'yh']]]) {
        const r = await both(graph([{ op, domain, inputs: names, outputs: outs, attrs }], given, outs.filter(Boolean)), feedsOf(given));
        worst = Math.max(worst, near(r, `${op} ${what} -> ${outs}`));
      }
      const fwd = await both(graph([{ op: 'GRUTraining', domain: MS, inputs: names, outputs: ['hall', 'yh', 'zrh'], attrs }], given, ['hall', 'zrh']), feedsOf(given));
      const kept = ['hall', 'zrh'].map((name) => ({ name, dims: fwd.cpu[name].dims, data: Float32Array.from(fwd.cpu[name].data) }));
      const dhall = value('dhall', [S, D, B, H], 41), dht = value('dht', [D, B, H], 42);
      for (const [withState, outs] of [[true, ['dx', 'dw', 'dr', 'db', 'dh0']], [false, ['', 'dw', 'dr', 'db']], [true, ['dx', '', '', '', 'dh0']]]) {
        const gin = [v.x, v.w, v.r, full ? v.b : null, null, full ? v.h0 : null, ...kept, dhall, withState ? dht : null];
        const g = gin.filter(Boolean);
        const r = await both(graph([{ op: 'GRUGrad', domain: MS, inputs: gin.map((x) => x?.name ?? ''), outputs: outs, attrs }], g, outs.filter(Boolean)), feedsOf(g));
        worst = Math.max(worst, near(r, `GRUGrad ${what} ${withState ? 'dHt' : ''} -> ${outs}`));
      }
    }
  }
  t.diagnostic(`largest difference from the wasm backend: ${worst}`);
});

test('a GRU classifier trains on webgpu to the wasm backend\'s losses and parameters', async () => {
  // x [S, batch, 4] -> GRU (hidden 6, bias) -> last state [batch, 6] -> MatMul -> 3 classes
  const v = gruInputs(5, 1, 4, 6, 1, 51);
  const wo = value('wo', [6, 3], 52, true);
  const shape = { name: 'shape', dims: [2], data: BigInt64Array.from([-1n, 6n]), init: true };
  const model = onnxModel({
    nodes: [
      { op: 'GRU', inputs: ['x', 'w', 'r', 'b'], outputs: ['', 'yh'], attrs: { hidden_size: 6, linear_before_reset: 1 } },
      { op: 'Reshape', inputs: ['yh', 'shape'], outputs: ['h'] },
      { op: 'MatMul', inputs: ['h', 'wo'], outputs: ['logits'] },
    ],
    inputs: [{ name: 'x', dims: [5, 'batch', 4] }],
    initializers: [v.w, v.r, v.b, wo, shape].map(({ name, dims, data }) => ({ name, dims, data })),
    outputs: [{ name: 'logits', dims: ['batch', 3] }],
    opset: 14,
  });
  const art = await artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', optimizer: 'AdamW', requiresGrad: ['w', 'r', 'b', 'wo'] });
  const batches = [0, 1, 2].map((k) => [new Tensor('float32', value('x', [5, 4, 4], 60 + k).data, [5, 4, 4]), new Tensor('int32', Int32Array.from([0, 1, 2, k % 3]), [4])]);
  const out = {};
  for (const backend of ['wasm', 'webgpu']) {
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    const losses = [];
    for (const batch of batches) {
      losses.push((await module.run(...batch)).data[0]);
      await optimizer.step();
      module.lazyResetGrad();
    }
    const params = [];
    for (const name of ['w', 'r', 'b', 'wo']) params.push(...(await state.parameters.get(name)).data);
    out[backend] = { backend: module.backend, losses, params };
    [optimizer, module, state].forEach((o) => o.release());
  }
  assert.equal(out.webgpu.backend, 'webgpu');
  out.wasm.losses.forEach((v, i) => assert.ok(Math.abs(out.webgpu.losses[i] - v) <= 1e-5 * Math.abs(v), `loss ${i}: ${out.webgpu.losses[i]} vs ${v}`));
  out.wasm.params.forEach((v, i) => assert.ok(Math.abs(out.webgpu.params[i] - v) <= 1e-5 * (1 + Math.abs(v)), `parameter ${i}: ${out.webgpu.params[i]} vs ${v}`));
});

test('LSTMs the webgpu backend does not run are refused naming what', async () => {
  const v = lstmInputs(2, 1, 3, 4, 1, 5);
  const p = value('p', [1, 12], 6);
  const cases = [
    [{ inputs: ['x', 'w', 'r', '', '', '', '', 'p'], attrs: { hidden_size: 4 } }, [v.x, v.w, v.r, p], /LSTM with peepholes \(input P\) is not on the webgpu backend/],
    [{ inputs: ['x', 'w', 'r'], attrs: { hidden_size: 4, clip: 2 } }, [v.x, v.w, v.r], /LSTM with clip is not on the webgpu backend; run it with backend 'wasm'/],
    [{ inputs: ['x', 'w', 'r'], attrs: { hidden_size: 4, input_forget: 1 } }, [v.x, v.w, v.r], /LSTM with input_forget=1 is not on the webgpu backend/],
    [{ inputs: ['x', 'w', 'r'], attrs: { hidden_size: 4, layout: 1 } }, [{ ...v.x, dims: [1, 2, 3] }, v.w, v.r], /LSTM with layout=1 is not on the webgpu backend/],
  ];
  const wide = { w: value('w', [1, 4 * 641, 3], 7), r: value('r', [1, 4 * 641, 641], 8) };
  cases.push([{ inputs: ['x', 'w', 'r'], attrs: { hidden_size: 641 } }, [v.x, wide.w, wide.r], /LSTM's hidden size is 641; the webgpu backend runs at most 640/]);
  for (const [node, given, message] of cases) {
    const model = graph([{ op: 'LSTM', outputs: ['y'], ...node }], given, ['y']);
    const s = await InferenceSession.create(model, { backend: 'webgpu', gpu });
    try {
      await assert.rejects(s.run(feedsOf(given)), message);
    } finally {
      s.release();
    }
  }
});
