// Regression: a forward model may already hold a value under a name the generator
// creates. Internal names (autodiff's "<param>_grad") move aside and training stays correct,
// checked against finite differences of the loss; ONNX Runtime's names
// ("<param>_grad.accumulation.buffer" ...) cannot move: generation fails and says what to rename.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, CheckpointState, Module, Tensor } from '../../js/index.js';

const data = (f) => new URL(`../data/${f}`, import.meta.url);

const BATCH = 5;
const x = new Tensor('float32', Float32Array.from({ length: BATCH * 4 }, (_, i) => Math.sin(i + 1)), [BATCH, 4]);
const target = new Tensor('float32', Float32Array.from({ length: BATCH * 3 }, (_, i) => Math.cos(2 * i)), [BATCH, 3]);

/** The eval loss with parameter `name` set to `values`. */
function lossAt(module, state, name, values) {
  state.parameters.set(name, values);
  module.eval();
  return module.run(x, target).data[0];
}

test("a value named '<param>_grad' in the model: gradients stay the parameters' own (finite differences)", async () => {
  const art = await artifacts.generateArtifacts(data('name-clash-grad.onnx'), {
    requiresGrad: ['W', 'b'],
    loss: artifacts.LossType.MSELoss,
    optimizer: artifacts.OptimType.SGD,
  });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  try {
    module.train();
    module.run(x, target);
    for (const name of ['W', 'b']) {
      const p = state.parameters.get(name);
      const w0 = Float32Array.from(p.data);
      const grad = Float32Array.from(p.grad);
      assert.equal(grad.length, w0.length);
      // MSE of an affine map is quadratic in each weight: a central difference is exact up to
      // float32 rounding of the loss.
      const eps = 1e-2;
      for (let i = 0; i < w0.length; i++) {
        const up = Float32Array.from(w0);
        const down = Float32Array.from(w0);
        up[i] += eps;
        down[i] -= eps;
        const fd = (lossAt(module, state, name, up) - lossAt(module, state, name, down)) / (2 * eps);
        assert.ok(Math.abs(fd - grad[i]) <= 2e-3 + 1e-2 * Math.abs(fd), `${name}[${i}]: gradient ${grad[i]}, finite difference ${fd}`);
      }
      state.parameters.set(name, w0);
    }
  } finally {
    module.release();
    state.release();
  }
});

test("a value named '<param>_grad.accumulation.buffer' in the model: a clear error naming it", async () => {
  await assert.rejects(
    artifacts.generateArtifacts(data('name-clash-buffer.onnx'), { requiresGrad: ['W', 'b'], loss: artifacts.LossType.MSELoss }),
    /the model already has a value named 'W_grad\.accumulation\.buffer', the name ONNX Runtime's convention gives the gradient accumulation buffer of parameter W; rename that value in the model/,
  );
});
