// Gradient-norm clipping (InplaceClipGradNorm in the optimizer model, ONNX Runtime's semantics):
// coef = min(max_norm / (||g||_2 + 1e-6), 1) over all trainable gradients, then the update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

const dir = new URL('../golden/cases/mlp_ce_adamw/', import.meta.url);

async function setup(maxNorm) {
  const art = await artifacts.generateArtifacts(new URL('model.onnx', dir), {
    loss: 'CrossEntropyLoss',
    optimizer: { type: 'SGD', clipGradNorm: maxNorm },
  });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(0.1);
  const xb = await readFile(new URL('step0__input.bin', dir));
  const yb = await readFile(new URL('step0__labels.bin', dir));
  const x = new Tensor('float32', new Float32Array(xb.buffer, xb.byteOffset, xb.byteLength / 4), [8, 784]);
  const y = new Tensor('int32', new Int32Array(yb.buffer, yb.byteOffset, yb.byteLength / 4), [8]);
  return { state, module, optimizer, x, y };
}

for (const maxNorm of [0.05, 1000]) {
  test(`clipGradNorm ${maxNorm}: parameters move by lr * coef * g`, async () => {
    const { state, module, optimizer, x, y } = await setup(maxNorm);
    module.runAll(x, y);
    const before = new Map([...state.parameters].map(([n, p]) => [n, p]));
    let sq = 0;
    for (const p of before.values()) for (const g of p.grad) sq += g * g;
    const norm = Math.sqrt(sq);
    const coef = Math.min(maxNorm / (norm + 1e-6), 1);
    if (maxNorm < 1) assert.ok(coef < 0.5, `the test needs a clipping case (norm ${norm})`);
    else assert.equal(coef, 1);
    optimizer.step();
    for (const [name, p] of before) {
      const after = state.parameters.get(name).data;
      for (let i = 0; i < after.length; i += 97) {
        const want = p.data[i] - 0.1 * coef * p.grad[i];
        assert.ok(Math.abs(after[i] - want) <= 1e-6 + 1e-5 * Math.abs(want), `${name}[${i}]: ${after[i]} vs ${want}`);
      }
    }
    optimizer.release();
    module.release();
    state.release();
  });
}
