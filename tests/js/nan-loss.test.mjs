// A non-finite loss is reported, and its gradients never reach the parameters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

const dir = new URL('../golden/cases/mlp_ce_adamw/', import.meta.url);

test('a NaN loss is an error; the optimizer refuses its gradients; training goes on', async () => {
  const art = await artifacts.generateArtifacts(new URL('model.onnx', dir), { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const xb = await readFile(new URL('step0__input.bin', dir));
  const yb = await readFile(new URL('step0__labels.bin', dir));
  const good = new Float32Array(xb.buffer, xb.byteOffset, xb.byteLength / 4);
  const bad = good.slice();
  bad[5] = NaN;
  const y = new Tensor('int32', new Int32Array(yb.buffer, yb.byteOffset, yb.byteLength / 4), [8]);
  const params = module.getContiguousParameters().data;
  assert.throws(() => module.run(new Tensor('float32', bad, [8, 784]), y), /the loss is NaN at this train step.*gradients are discarded/);
  assert.throws(() => optimizer.step(), /optimizer step refused: the last train step's loss was not finite/);
  assert.deepEqual(module.getContiguousParameters().data, params, 'parameters changed after a NaN step');
  // A good batch afterwards trains normally, from gradients of that batch only.
  const loss = module.run(new Tensor('float32', good, [8, 784]), y);
  assert.ok(Math.abs(loss.data[0] - 2.3032920360565186) < 1e-4, `loss ${loss.data[0]}`);
  optimizer.step();
  assert.notDeepEqual(module.getContiguousParameters().data, params);
  optimizer.release();
  module.release();
  state.release();
});
