// Checkpoints through the JS API: save/load round-trips parameters, optimizer state (training
// continues bit for bit as without the reload), learning rate and properties; byte-stable
// re-saves; ONNX Runtime's own MNIST artifacts (checkpoint v1, int64 labels) load and train;
// atomic file writes in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CheckpointState, Module, Optimizer, Tensor, WebtrainError, artifacts } from '../../js/index.js';
import { readCase, loadRef, inputsOf, artifactOptions } from '../golden/golden.mjs';

const casesDir = new URL('../golden/cases/', import.meta.url).pathname;
const mnistDir = new URL('../data/ort-mnist/', import.meta.url).pathname;
const dir = join(casesDir, 'mlp_ce_adamw');
const c = await readCase(dir);
const art = await artifacts.generateArtifacts(join(dir, 'model.onnx'), artifactOptions(c));
const batches = [];
for (const s of c.steps) batches.push(await inputsOf(dir, s.inputs, c.training_graph_input_names));
const LR = 0.004; // not the default, so that a reload that forgot it would show

async function session(checkpoint, lr = LR) {
  const state = await CheckpointState.loadCheckpoint(checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  if (lr !== null) optimizer.setLearningRate(lr);
  return { state, module, optimizer };
}

function train({ module, optimizer }, from, to) {
  module.train();
  for (let k = from; k < to; k++) {
    module.run(...batches[k]);
    optimizer.step();
    module.lazyResetGrad();
  }
}

function params(state) {
  return new Map([...state.parameters].map(([n, p]) => [n, p.data]));
}

function release(s) {
  s.optimizer.release();
  s.module.release();
  s.state.release();
}

function assertBitEqual(a, b, what) {
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
  for (const [n, x] of a) {
    const y = b.get(n);
    assert.equal(x.length, y.length);
    const ux = new Uint32Array(x.buffer, x.byteOffset, x.length);
    const uy = new Uint32Array(y.buffer, y.byteOffset, y.length);
    for (let i = 0; i < ux.length; i++) if (ux[i] !== uy[i]) assert.fail(`${what}: ${n}[${i}] ${x[i]} != ${y[i]}`);
  }
}

function differs(a, b) {
  for (const [n, x] of a) {
    const y = b.get(n);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return true;
  }
  return false;
}

// The uninterrupted run: 5 steps.
const straight = await session(art.checkpoint);
train(straight, 0, 5);
const after5 = params(straight.state);
release(straight);

test('save with optimizer state, reload, 3 more steps = 5 uninterrupted steps (bit for bit)', async () => {
  const a = await session(art.checkpoint);
  train(a, 0, 2);
  a.state.properties.set('epoch', 7);
  a.state.properties.set('best_loss', 0.25);
  a.state.properties.set('note', 'fine-tuned on Tuesday');
  const bytes = await CheckpointState.saveCheckpoint(a.state, undefined, { includeOptimizerState: true });
  const after2 = params(a.state);
  release(a);

  const b = await session(bytes, null); // no setLearningRate: the checkpoint carries it
  assert.ok(Math.abs(b.optimizer.getLearningRate() - LR) < 1e-9, `learning rate after reload: ${b.optimizer.getLearningRate()}`);
  assertBitEqual(params(b.state), after2, 'parameters after reload');
  assert.equal(b.state.properties.get('epoch'), 7);
  assert.equal(b.state.properties.get('best_loss'), 0.25);
  assert.equal(b.state.properties.get('note'), 'fine-tuned on Tuesday');
  assert.equal(b.state.properties.size, 3);
  train(b, 2, 5);
  assertBitEqual(params(b.state), after5, 'parameters after 2 + reload + 3 steps');
  release(b);
});

test('properties: int, float and string values survive save/load; ints stay ints', async () => {
  const s = await CheckpointState.loadCheckpoint(art.checkpoint);
  s.properties.set('int', 42);
  s.properties.set('big', 2n ** 40n);
  s.properties.set('neg', -3);
  s.properties.set('float', 1.5);
  s.properties.set('whole float', 2, 'float');
  s.properties.set('str', 'héllo ✓');
  s.properties.set('int', 43); // overwrite
  const t = await CheckpointState.loadCheckpoint(s.toBytes());
  const props = Object.fromEntries(t.properties);
  assert.deepEqual(Object.keys(props).sort(), ['big', 'float', 'int', 'neg', 'str', 'whole float']);
  assert.equal(props.int, 43);
  assert.equal(Number(props.big), 2 ** 40);
  assert.equal(props.neg, -3);
  assert.equal(props.float, 1.5);
  assert.equal(props['whole float'], 2);
  assert.equal(props.str, 'héllo ✓');
  assert.ok(t.properties.has('str'));
  assert.ok(!t.properties.has('nope'));
  assert.equal(t.properties.get('nope'), undefined);
  assert.throws(() => s.properties.set('obj', {}), /property 'obj': expected a number or a string/);
  s.release();
  t.release();
});

test('saving without optimizer state gives a fresh optimizer on reload (step 0)', async () => {
  const a = await session(art.checkpoint);
  train(a, 0, 2);
  const withOpt = await CheckpointState.saveCheckpoint(a.state, null, { includeOptimizerState: true });
  const without = await CheckpointState.saveCheckpoint(a.state, null);
  assert.ok(without.byteLength < withOpt.byteLength, 'optimizer state takes room');
  const trainedParams = a.module.getContiguousParameters(false);
  release(a);

  // Reloaded without optimizer state: one more step.
  const b = await session(without);
  train(b, 2, 3);
  const pb = params(b.state);
  release(b);
  // A fresh optimizer (t = 0, zero moments) from the same parameters: one step.
  const f = await session(art.checkpoint);
  f.module.copyBufferToParameters(trainedParams, false);
  train(f, 2, 3);
  assertBitEqual(pb, params(f.state), 'reload without optimizer state vs fresh optimizer');
  release(f);
  // ...which is not what continuing with the saved moments gives.
  const w = await session(withOpt);
  train(w, 2, 3);
  assert.ok(differs(pb, params(w.state)), 'a fresh optimizer and a restored one take the same step');
  release(w);
});

test('save -> load -> save is byte-identical', async () => {
  const a = await session(art.checkpoint);
  train(a, 0, 1);
  a.state.properties.set('k', 1);
  a.state.properties.set('name', 'x');
  for (const includeOptimizerState of [false, true]) {
    const b1 = a.state.toBytes({ includeOptimizerState });
    const s = await CheckpointState.loadCheckpoint(b1);
    const b2 = await CheckpointState.saveCheckpoint(s, null, { includeOptimizerState });
    assert.ok(Buffer.from(b1).equals(Buffer.from(b2)), `includeOptimizerState ${includeOptimizerState}: ${b1.byteLength} vs ${b2.byteLength} bytes`);
    s.release();
  }
  // the artifacts' checkpoint too
  const s = await CheckpointState.loadCheckpoint(art.checkpoint);
  assert.ok(Buffer.from(s.toBytes()).equals(Buffer.from(art.checkpoint)));
  s.release();
  release(a);
});

test("ONNX Runtime's MNIST checkpoint and artifacts (int64 labels) load and train", async () => {
  const state = await CheckpointState.loadCheckpoint(join(mnistDir, 'checkpoint'));
  assert.deepEqual([...state.parameters.keys()], ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']);
  assert.deepEqual(state.parameters.get('fc1.weight').dims, [500, 784]);
  const module = await Module.create(join(mnistDir, 'training_model.onnx'), state, join(mnistDir, 'eval_model.onnx'));
  const optimizer = await Optimizer.create(join(mnistDir, 'optimizer_model.onnx'), module);
  assert.equal(module.getParametersSize(), 397510);
  assert.equal(module.getParametersSize(false), 397510);
  assert.deepEqual(module.inputNames(), ['input', 'labels']);
  const n = 16;
  const x = new Float32Array(n * 784);
  const labels = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = BigInt(i % 10);
    for (let j = 0; j < 784; j++) x[i * 784 + j] = ((i * 31 + j * 7) % 13) / 13 - 0.4 + (j % 10 === i % 10 ? 0.5 : 0);
  }
  const input = new Tensor('float32', x, [n, 784]);
  const lab = new Tensor('int64', labels, [n]);
  module.eval();
  const before = module.run(input, lab)[0].data[0];
  module.train();
  const losses = [];
  for (let k = 0; k < 5; k++) {
    const [loss, output] = module.run(input, lab);
    assert.deepEqual(output.dims, [n, 10]);
    losses.push(loss.data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  assert.ok(losses.every(Number.isFinite));
  assert.ok(losses[4] < losses[0], `loss does not decrease: ${losses}`);
  // int32 labels are accepted for the int64 labels input
  module.eval();
  const [l64] = module.run(input, lab);
  const [l32] = module.run({ input, labels: new Tensor('int32', Int32Array.from(labels, Number), [n]) });
  assert.equal(l32.data[0], l64.data[0]);
  assert.ok(l64.data[0] < before);
  // it saves (as version 2) and reloads with the trained parameters and the optimizer state
  const bytes = await CheckpointState.saveCheckpoint(state, null, { includeOptimizerState: true });
  const again = await CheckpointState.loadCheckpoint(bytes);
  assertBitEqual(params(again), params(state), 'MNIST parameters after save/load');
  again.release();
  optimizer.release();
  module.release();
  state.release();
});

// ONNX Runtime lays out getContiguousParameters in the training model's parameter order; a
// layout that changes when a checkpoint is saved and reloaded breaks buffers kept across runs
// (federated averaging, copyBufferToParameters after a restart).
test('getContiguousParameters keeps its layout across save/load', async (t) => {
  for (const [what, ckpt, trainingModel] of [
    ['webtrain artifacts', art.checkpoint, art.trainingModel],
    // The contiguous buffer follows the training model's parameter order, as ONNX Runtime's does,
    // whatever order the checkpoint file lists them in.
    ["ONNX Runtime's MNIST checkpoint", join(mnistDir, 'checkpoint'), join(mnistDir, 'training_model.onnx')],
  ]) {
    await t.test(what, async () => {
      const s1 = await CheckpointState.loadCheckpoint(ckpt);
      const m1 = await Module.create(trainingModel, s1);
      const s2 = await CheckpointState.loadCheckpoint(s1.toBytes());
      const m2 = await Module.create(trainingModel, s2);
      const a = m1.getContiguousParameters(false).data;
      const b = m2.getContiguousParameters(false).data;
      assert.equal(a.length, b.length);
      let bad = -1;
      for (let i = 0; i < a.length && bad < 0; i++) if (a[i] !== b[i]) bad = i;
      assert.equal(bad, -1, `element ${bad} moved: parameter order ${[...s1.parameters.keys()]} became ${[...s2.parameters.keys()]}`);
      for (const x of [m1, m2, s1, s2]) x.release();
    });
  }
});

test('Node file saves are atomic: no temporary files remain; a missing directory fails cleanly', async () => {
  const d = await mkdtemp(join(tmpdir(), 'webtrain-ckpt-'));
  try {
    const s = await CheckpointState.loadCheckpoint(art.checkpoint);
    const p = join(d, 'ckpt');
    const bytes = await CheckpointState.saveCheckpoint(s, p, { includeOptimizerState: false });
    assert.deepEqual(await readdir(d), ['ckpt']);
    assert.ok(Buffer.from(await readFile(p)).equals(Buffer.from(bytes)));
    // overwriting an existing file replaces it
    await writeFile(p, 'old contents');
    s.properties.set('v', 2);
    await CheckpointState.saveCheckpoint(s, pathToFileURL(p));
    assert.deepEqual(await readdir(d), ['ckpt']);
    const r = await CheckpointState.loadCheckpoint(p);
    assert.equal(r.properties.get('v'), 2);
    r.release();
    // a file: URL string works as a path too
    await CheckpointState.saveCheckpoint(s, pathToFileURL(join(d, 'ckpt2')).href);
    assert.deepEqual((await readdir(d)).sort(), ['ckpt', 'ckpt2']);
    // a missing directory: a clear error, nothing written
    const missing = join(d, 'no-such-dir', 'ckpt');
    await assert.rejects(CheckpointState.saveCheckpoint(s, missing), (err) => {
      assert.match(err.message, /cannot write '.*no-such-dir\/ckpt': directory '.*no-such-dir' does not exist/);
      return true;
    });
    assert.deepEqual((await readdir(d)).sort(), ['ckpt', 'ckpt2']);
    s.release();
  } finally {
    await rm(d, { recursive: true, force: true });
  }
});

test('loading garbage or a missing file is a clear error', async () => {
  await assert.rejects(CheckpointState.loadCheckpoint(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), /cannot load checkpoint/);
  await assert.rejects(CheckpointState.loadCheckpoint('/nonexistent/ckpt'), /nonexistent\/ckpt/);
  // a truncated checkpoint
  const half = art.checkpoint.byteLength >> 1;
  await assert.rejects(CheckpointState.loadCheckpoint(art.checkpoint.slice(0, half)), (e) => {
    assert.ok(e instanceof WebtrainError, `a WebtrainError: ${e}`);
    assert.match(e.message, new RegExp(`cannot load checkpoint: truncated or corrupt checkpoint: ${half} bytes, expected at least \\d+ \\(`));
    return true;
  });
});
