// Long runs: 10,000 train + optimizer steps of the MLP golden model with no wasm heap growth
// after the first step, and repeated create/release of modules with no leak.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { artifacts, CheckpointState, Module, Optimizer, Tensor, init } from '../../js/index.js';

const dir = new URL('../golden/cases/mlp_ce_adamw/', import.meta.url);

async function f32(name) {
  const b = await readFile(new URL(name, dir));
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}
async function i32(name) {
  const b = await readFile(new URL(name, dir));
  return new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

test('10,000 steps keep the wasm heap size constant after step 1', { timeout: 300_000 }, async () => {
  const core = await init();
  const art = await artifacts.generateArtifacts(new URL('model.onnx', dir), { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const x = new Tensor('float32', await f32('step0__input.bin'), [8, 784]);
  const y = new Tensor('int32', await i32('step0__labels.bin'), [8]);
  const step = () => {
    const loss = module.runAll(x, y)[0];
    optimizer.step();
    module.lazyResetGrad();
    return loss.data[0];
  };
  step();
  const heapAfterFirst = core.heap.buffer.byteLength;
  let last = 0;
  for (let i = 1; i < 10_000; i++) last = step();
  assert.ok(Number.isFinite(last));
  assert.equal(core.heap.buffer.byteLength, heapAfterFirst, 'the wasm heap grew during training');
  optimizer.release();
  module.release();
  state.release();
});

test('creating and releasing modules repeatedly does not grow the heap', { timeout: 120_000 }, async () => {
  const core = await init();
  const art = await artifacts.generateArtifacts(new URL('model.onnx', dir), { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const x = new Tensor('float32', await f32('step0__input.bin'), [8, 784]);
  const y = new Tensor('int32', await i32('step0__labels.bin'), [8]);
  const cycle = async () => {
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel);
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    module.runAll(x, y);
    optimizer.step();
    optimizer.release();
    module.release();
    state.release();
  };
  for (let i = 0; i < 5; i++) await cycle();
  const heap = core.heap.buffer.byteLength;
  for (let i = 0; i < 200; i++) await cycle();
  assert.equal(core.heap.buffer.byteLength, heap, 'the heap grew over 200 create/release cycles');
});
