// A batch whose activations do not fit the wasm heap fails with a clear error that says how
// much was needed, and the module keeps working: a smaller batch then trains.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

const model = new URL('../data/wide-activations.onnx', import.meta.url);

test('too large a batch: a clear error; then a smaller batch trains', async () => {
  const art = await artifacts.generateArtifacts(model, { loss: null, optimizer: 'SGD' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const big = 40_000;
  assert.throws(
    () => module.run(new Tensor('float32', new Float32Array(big * 8).fill(0.5), [big, 8])),
    /would need 2621440000 bytes: more than this build can address .*use a smaller batch/,
  );
  const loss = module.run(new Tensor('float32', new Float32Array(4 * 8).fill(0.5), [4, 8]));
  assert.ok(Number.isFinite(loss.data[0]));
  optimizer.step();
  const again = module.run(new Tensor('float32', new Float32Array(4 * 8).fill(0.5), [4, 8]));
  assert.ok(again.data[0] < loss.data[0], 'training goes on after the error');
  optimizer.release();
  module.release();
  state.release();
});
