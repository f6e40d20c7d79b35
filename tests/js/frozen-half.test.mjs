// Half-precision frozen weights on the wasm build, through the JS API:
//  - a float16 model (tests/data/half-mlp.onnx: float16 weights read through Casts by MatMul, Gemm
//    and Gather, one in raw_data, one in int32_data) trains like its float32 twin whose weights
//    hold the same values, and its exported inference and eval models load in ONNX Runtime
//    (onnxruntime-node), which gives the same outputs;
//  - generateArtifacts(..., { frozenDtype: 'float16' }) on the tiny transformer golden model:
//    what stays float32 and why, the frozen weights float16 in the checkpoint, losses, gradients
//    and trained parameters equal to the same model whose float32 weights hold the float16
//    values, the exported model in ONNX Runtime;
//  - float16 initializers in external data, and a side-file length that does not fit float16;
//  - float16 parameters through saveCheckpoint / loadCheckpoint, inline and as external data;
//  - bad frozenDtype values, a model with nothing frozen, the CLI flag;
//  - limits up front: a model whose shapes imply more than wasm32 can hold fails when planned,
//    saying how many bytes it needs and what would help, and the session still runs after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor } from '../../js/index.js';
import { readCase, inputsOf } from '../golden/golden.mjs';

const data = (f) => fileURLToPath(new URL(`../data/${f}`, import.meta.url));
const caseDir = fileURLToPath(new URL('../golden/cases/tiny_transformer_frozen_adamw/', import.meta.url));
const bin = fileURLToPath(new URL('../../js/bin/webtrain.mjs', import.meta.url));

/** float32 -> the nearest float16 value (ties to even), as a number: an independent definition. */
function roundHalf(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const q = 2 ** (Math.max(e, -14) - 10); // float16's spacing at this magnitude
  const m = a / q, f = Math.floor(m), d = m - f;
  const r = (d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f) * q;
  return Math.sign(x) * (r >= 65520 ? Infinity : r);
}

function close(what, got, want, rel = 1e-5) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    assert.ok(d <= rel * (1 + Math.abs(want[i])), `${what}[${i}]: ${got[i]} vs ${want[i]} (float32 weights holding the float16 values)`);
  }
}

async function trainSteps(art, batches, { setup, exportNames } = {}) {
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  if (setup) setup(state);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(0.01);
  const trace = [];
  try {
    module.train();
    for (const inputs of batches) {
      const out = module.runAll(...inputs);
      trace.push(...out[0].data);
      for (const [, p] of state.parameters) if (p.requiresGrad) trace.push(...p.grad);
      optimizer.step();
      module.lazyResetGrad();
      for (const [, p] of state.parameters) if (p.requiresGrad) trace.push(...p.data);
    }
    const exported = exportNames ? await module.exportModelForInferencing(exportNames) : null;
    return { trace, state, exported };
  } finally {
    optimizer.release();
    module.release();
  }
}

test('frozenDtype: a value other than float16 or float32 is refused, naming the option', async () => {
  for (const bad of ['bfloat16', 'FLOAT16', 16, true])
    await assert.rejects(artifacts.generateArtifacts(data('half-mlp-f32.onnx'), { requiresGrad: ['b1'], frozenDtype: bad }),
      /generateArtifacts: frozenDtype .*; expected 'float16' \(frozen weights stored as float16\) or 'float32' \(as they are\)/);
  await assert.rejects(artifacts.generateArtifacts(data('half-mlp-f32.onnx'), { frozenDtype: 'float16' }),
    /frozen_dtype float16: the model has no frozen float parameters \(every float initializer is trained\); name the ones to train in requires_grad/);
});

test('a float16 model trains like its float32 twin; ONNX Runtime loads its eval and exported models', async () => {
  const opts = { requiresGrad: ['b1', 'b2'], frozenParams: ['W1', 'E'], loss: 'MSELoss', optimizer: 'AdamW', additionalOutputNames: ['out'] };
  const half = await artifacts.generateArtifacts(data('half-mlp.onnx'), opts);
  const twin = await artifacts.generateArtifacts(data('half-mlp-f32.onnx'), opts);
  const batches = [];
  for (let k = 0; k < 3; k++) {
    const x = Float32Array.from({ length: 5 * 8 }, (_, i) => Math.sin(i * 0.7 + k));
    const ids = BigInt64Array.from({ length: 5 }, (_, i) => BigInt((i * 3 + k) % 10));
    const target = Float32Array.from({ length: 5 * 4 }, (_, i) => Math.cos(i + k));
    batches.push([new Tensor('float32', x, [5, 8]), new Tensor('int64', ids, [5]), new Tensor('float32', target, [5, 4])]);
  }
  const a = await trainSteps(half, batches, { exportNames: ['out'] });
  const b = await trainSteps(twin, batches, { exportNames: ['out'] });
  // the frozen float16 weights stay float16 in the checkpoint: no float data to read
  assert.equal(a.state.parameters.get('W1').data, null);
  assert.equal(b.state.parameters.get('W1').data.length, 128);
  close('losses, gradients and parameters', a.trace, b.trace);
  a.state.release();
  b.state.release();

  const x = Float32Array.from({ length: 3 * 8 }, (_, i) => i / 10 - 1);
  const ids = BigInt64Array.from([1n, 7n, 9n]);
  const feeds = { x: new Tensor('float32', x, [3, 8]), ids: new Tensor('int64', ids, [3]) };
  const ours = await (await InferenceSession.create(a.exported)).run(feeds);
  const theirs = await (await InferenceSession.create(b.exported)).run(feeds);
  close('exported model outputs', ours.out.data, theirs.out.data);
  // ONNX Runtime: the float16 initializers read through Casts are plain ONNX
  const s = await ort.InferenceSession.create(a.exported);
  const got = await s.run({ x: new ort.Tensor('float32', x, [3, 8]), ids: new ort.Tensor('int64', ids, [3]) });
  close('ONNX Runtime on the exported model', got.out.data, ours.out.data, 1e-5);
  await s.release();
  const e = await ort.InferenceSession.create(half.evalModel);
  assert.ok(e.inputNames.includes('W1') && e.inputNames.includes('x'), `eval model inputs: ${e.inputNames}`);
  await e.release();
});

test('frozenDtype float16 on the tiny transformer: float16 frozen weights train like float32 ones holding their values', async () => {
  const c = await readCase(caseDir);
  const trained = ['ln1.weight', 'ln1.bias', 'head.weight', 'head.bias'];
  const frozen = c.initializer_names.filter((n) => !trained.includes(n));
  const base = { requiresGrad: trained, frozenParams: frozen, loss: 'CrossEntropyLoss', optimizer: 'AdamW' };
  const half = await artifacts.generateArtifacts(join(caseDir, c.model), { ...base, frozenDtype: 'float16' });
  const kept = new Map(half.keptFloat32.map((k) => [k.name, k.reason]));
  assert.match(kept.get('pos_emb'), /^read by Add '\/Add' \(input 1\), which reads float only$/);
  assert.match(kept.get('ln2.weight'), /read by LayerNormalization/);
  for (const w of ['tok_emb.weight', 'q_proj.weight', 'ff1.weight']) assert.ok(!kept.has(w), `${w} converted`);
  const ref = await artifacts.generateArtifacts(join(caseDir, c.model), { ...base, frozenDtype: 'float32' });
  assert.equal(ref.keptFloat32, undefined);
  const plain = await artifacts.generateArtifacts(join(caseDir, c.model), base);
  assert.deepEqual(ref.checkpoint, plain.checkpoint, "'float32' leaves the artifacts as they are");
  // float16 artifacts are smaller: the converted weights take half the bytes
  assert.ok(half.checkpoint.length < ref.checkpoint.length * 0.75, `${half.checkpoint.length} vs ${ref.checkpoint.length}`);

  const batches = [];
  for (const step of c.steps.slice(0, 3)) batches.push(await inputsOf(caseDir, step.inputs, ['input_ids', 'labels']));
  const converted = frozen.filter((n) => !kept.has(n));
  const a = await trainSteps(half, batches, { exportNames: ['logits'] });
  const b = await trainSteps(ref, batches, {
    setup: (state) => {
      for (const n of converted) state.parameters.set(n, Float32Array.from(state.parameters.get(n).data, roundHalf));
    },
  });
  close('transformer losses, gradients and trained parameters', a.trace, b.trace);
  a.state.release();
  b.state.release();
  // the exported model (float16 weights behind Casts) and the eval model in ONNX Runtime
  const [ids] = await inputsOf(caseDir, c.inference.inputs, ['input_ids']);
  const ours = await (await InferenceSession.create(a.exported)).run({ input_ids: ids });
  const s = await ort.InferenceSession.create(a.exported);
  const got = await s.run({ input_ids: new ort.Tensor('int64', ids.data, Array.from(ids.dims)) });
  close('ONNX Runtime on the exported transformer', got.logits.data, ours.logits.data, 1e-4);
  await s.release();
  await (await ort.InferenceSession.create(half.evalModel)).release();
});

test('float16 initializers in external data: read as the embedded ones; a wrong length names the tensor and the bytes', async () => {
  const feeds = { x: new Tensor('float32', Float32Array.from({ length: 16 }, (_, i) => i / 5 - 1), [2, 8]), ids: new Tensor('int64', BigInt64Array.from([0n, 9n]), [2]) };
  const embedded = await (await InferenceSession.create(data('half-mlp.onnx'))).run(feeds);
  const external = await (await InferenceSession.create(data('half-mlp-ext.onnx'))).run(feeds);
  assert.deepEqual(external.out.data, embedded.out.data);
  const art = await artifacts.generateArtifacts(data('half-mlp-ext.onnx'), { requiresGrad: ['b2'], frozenParams: ['W1', 'E'], loss: 'MSELoss' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  assert.equal(state.parameters.get('W1').data, null); // float16 as it was
  state.release();
  await assert.rejects(InferenceSession.create(data('half-mlp-ext-len.onnx')),
    /tensor 'W1': external data length 254; its dims and dtype need 256 bytes/);
});

test('float16 frozen parameters survive saveCheckpoint and loadCheckpoint, inline and as external data', async () => {
  const art = await artifacts.generateArtifacts(data('half-mlp.onnx'), { requiresGrad: ['b1', 'b2'], frozenParams: ['W1', 'W2', 'E'], loss: 'MSELoss', optimizer: 'SGD' });
  const batch = [new Tensor('float32', Float32Array.from({ length: 16 }, (_, i) => i / 8 - 1), [2, 8]), new Tensor('int64', BigInt64Array.from([3n, 4n]), [2]), new Tensor('float32', new Float32Array(8).fill(0.5), [2, 4])];
  const lossOf = async (checkpoint, options) => {
    const state = await CheckpointState.loadCheckpoint(checkpoint, options);
    const module = await Module.create(art.trainingModel, state, art.evalModel);
    const loss = module.run(...batch).data[0];
    module.release();
    return { state, loss };
  };
  const first = await lossOf(art.checkpoint);
  const dir = await mkdtemp(join(tmpdir(), 'webtrain-half-ckpt-'));
  try {
    const inline = await CheckpointState.saveCheckpoint(first.state, join(dir, 'inline'), { externalData: false });
    assert.deepEqual(inline, art.checkpoint, 'saved again, the same bytes');
    await CheckpointState.saveCheckpoint(first.state, join(dir, 'ext'), { externalData: true });
    const again = await lossOf(join(dir, 'ext'));
    assert.equal(again.loss, first.loss);
    assert.equal(again.state.parameters.get('W1').data, null);
    again.state.release();
  } finally {
    first.state.release();
    await rm(dir, { recursive: true, force: true });
  }
});

test('CLI --frozen-dtype float16 writes float16 artifacts and lists the weights kept float32', async () => {
  const out = await mkdtemp(join(tmpdir(), 'webtrain-half-'));
  try {
    const r = spawnSync(process.execPath, [bin, 'generate-artifacts', data('half-mlp-f32.onnx'), '-o', out, '--requires-grad', 'b2',
      '--frozen', 'W1,W2,E,b1', '--loss', 'MSELoss', '--frozen-dtype', 'float16', '-q'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /kept float32 \(1 frozen weight\):\n {2}b1: read by Add 'add1' \(input 1\), which reads float only/);
    const state = await CheckpointState.loadCheckpoint(join(out, 'checkpoint'));
    assert.equal(state.parameters.get('W1').data, null); // float16
    assert.equal(state.parameters.get('b1').data.length, 16);
    state.release();
    const bad = spawnSync(process.execPath, [bin, 'generate-artifacts', data('half-mlp-f32.onnx'), '-o', out, '--frozen-dtype', 'bf16'], { encoding: 'utf8' });
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /frozen-dtype/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('limits up front: shapes past what wasm32 holds fail when planned, with the bytes and what would help', async () => {
  const s = await InferenceSession.create(data('over-4gb.onnx'));
  // three activations of 1.5 GiB each (batch 24 x 2^24 floats): 4.5 GiB
  await assert.rejects(s.run({ x: new Tensor('float32', new Float32Array(24), [24, 1]) }),
    /the activations at these input shapes need more than (\d+) bytes \(\d+ MiB, at value 'e\d' of 1610612736 bytes\): more than this build can address for them \(2047 MiB\); what would help: a smaller batch or input/);
  const small = await s.run({ x: new Tensor('float32', new Float32Array([2]), [1, 1]) });
  assert.equal(small.y.data.length, 1 << 24);
  assert.equal(small.y.data[12345], 6);
  s.release();
});
