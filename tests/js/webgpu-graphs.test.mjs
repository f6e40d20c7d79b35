// Whole training graphs on the webgpu backend: the golden cases whose training model has
// only ops with webgpu kernels (the MLPs, their losses and activations; the CNN) run their step-0
// training graph (forward, loss, backward, gradient accumulation) as an InferenceSession on the
// GPU, and give PyTorch's loss and gradients at the case's tolerances, as the wasm backend does.
// (The gradients are the values the accumulators add, made graph outputs for the test.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, InferenceSession, Tensor } from '../../js/index.js';
import { readCase, artifactOptions, loadRef, compare } from '../golden/golden.mjs';
import { gpu } from './webgpu-env.mjs';
import { withOutputs } from './onnx-writer.mjs';

const cases = fileURLToPath(new URL('../golden/cases/', import.meta.url));
const ON_GPU = ['mlp_ce_adamw', 'mlp_adamw_ort_defaults', 'regression_mse_adamw', 'regression_l1_sgd', 'multilabel_bce', 'two_output_custom_loss', 'cnn_bn_ce_sgd'];

for (const name of ON_GPU) {
  test(`${name}: the step-0 training graph on webgpu gives PyTorch's loss and gradients`, async () => {
    const dir = join(cases, name);
    const c = await readCase(dir);
    const art = await artifacts.generateArtifacts(join(dir, c.model), artifactOptions(c));
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const step = c.steps[0];
    const grads = Object.keys(step.grads);
    const model = withOutputs(art.trainingModel, grads.map((p) => `${p}_grad`));
    const session = await InferenceSession.create(model, { backend: 'webgpu', gpu });
    try {
      assert.equal(session.backend, 'webgpu');
      const feeds = {};
      for (const n of session.inputNames) {
        const grad = /^(.*)_grad\.accumulation\.buffer$/.exec(n);
        if (n === 'lazy_reset_grad') feeds[n] = new Tensor('bool', Uint8Array.of(1), [1]);
        else if (grad) feeds[n] = new Tensor('float32', new Float32Array(state.parameters.get(grad[1]).data.length), state.parameters.get(grad[1]).dims);
        else if (state.parameters.has(n)) feeds[n] = new Tensor('float32', state.parameters.get(n).data, state.parameters.get(n).dims);
        else feeds[n] = await loadRef(dir, step.inputs[n]);
      }
      const out = await session.run(feeds);
      compare('loss', [step.loss], out[session.outputNames[0]].data, c.tolerance.loss);
      for (const [p, ref] of Object.entries(step.grads)) compare(`grad ${p}`, await loadRef(dir, ref), out[`${p}_grad`].data, c.tolerance.grads);
    } finally {
      session.release();
      state.release();
    }
  });
}
