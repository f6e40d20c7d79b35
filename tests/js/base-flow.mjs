// The README's flow on a frozen base under a trained head, shared by weights-once.test.mjs and
// weights-inside.test.mjs (not a test file itself): generateArtifacts without artifactDirectory,
// loadCheckpoint, Module.create and Optimizer.create on the returned bytes, 3 train steps and an
// eval step; then the heap's figures, and whatever `after(module)` adds (an export) before the
// objects are released. Also the pieces both tests use on their own: the train steps, and the
// artifactDirectory folder checked against onnxruntime-node.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { artifacts, CheckpointState, Module, Optimizer, init } from '../../js/index.js';

/** Three train steps on (x(), y()): their losses. */
export function trainSteps(module, optimizer, x, y) {
  const losses = [];
  for (let i = 0; i < 3; i++) {
    losses.push(module.train().runAll(x(), y())[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  return losses;
}

/**
 * An artifactDirectory folder `out` loads from its paths, as a user who wrote them would, and
 * onnxruntime-node runs its eval model (frozen weights from the base by reference, the trained
 * head fed from `checkpoint`) to webtrain's eval loss.
 */
export async function folderEvalMatchesOrt(out, checkpoint, x, y) {
  const state = await CheckpointState.loadCheckpoint(join(out, 'checkpoint'));
  const module = await Module.create(join(out, 'training_model.onnx'), state, join(out, 'eval_model.onnx'));
  const ours = module.eval().runAll(x(), y())[0].data[0];
  module.release();
  state.release();
  const s = await ort.InferenceSession.create(join(out, 'eval_model.onnx'));
  const head = new Map([...(await CheckpointState.loadCheckpoint(checkpoint)).parameters].map(([n, p]) => [n, new ort.Tensor('float32', p.data, p.dims)]));
  const X = x(), Y = y();
  const feeds = { X: new ort.Tensor('float32', X.data, X.dims), labels: new ort.Tensor('int32', Y.data, Y.dims) };
  for (const n of s.inputNames) if (head.has(n)) feeds[n] = head.get(n);
  const theirs = (await s.run(feeds))[s.outputNames[0]].data[0];
  assert.ok(Math.abs(ours - theirs) <= 1e-5 * Math.max(1, Math.abs(theirs)), `eval loss: webtrain ${ours}, onnxruntime-node ${theirs}`);
}

export async function baseFlow(model, { options, moduleOptions = {}, x, y, after }) {
  const core = await init();
  const art = await artifacts.generateArtifacts(model, options);
  const generated = core.heapStats().memory;
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel, moduleOptions);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const losses = trainSteps(module, optimizer, x, y);
  const evalLoss = module.eval().runAll(x(), y())[0].data[0];
  const { memory, mallocInUse } = core.heapStats();
  const packed = module.memoryStats().packed;
  const more = after ? await after(module, core) : {};
  optimizer.release();
  module.release();
  state.release();
  const sizes = Object.fromEntries(Object.entries(art).map(([k, v]) => [k, v?.byteLength ?? 0]));
  return { art, sizes, generated, memory, mallocInUse, packed, losses, evalLoss, ...more };
}
