// The golden MLP (mlp_ce_adamw: Linear(784,128)-ReLU-Linear(128,10), 10 classes) with artifacts
// generated here, a state, module and optimizer over them, and inputs for it; shared by the API
// tests (not a test file itself).
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

export const mlpModel = fileURLToPath(new URL('../golden/cases/mlp_ce_adamw/model.onnx', import.meta.url));

/** generateArtifacts(mlpModel, options) and the objects over them: { art, state, module, optimizer, release() }. */
export async function mlpObjects(options = { loss: 'CrossEntropyLoss', optimizer: 'AdamW' }) {
  const art = await artifacts.generateArtifacts(mlpModel, options);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  return {
    art, state, module, optimizer,
    release() {
      optimizer.release();
      module.release();
      state.release();
    },
  };
}

/** n samples of 784 values in [0, 1), varying with seed. */
export const mlpInputs = (n, seed = 0) => new Tensor(Float32Array.from({ length: n * 784 }, (_, i) => ((i * 7 + seed) % 17) / 17), [n, 784]);

/** n labels 0, 1, ..., 9, 0, ... */
export const mlpLabels = (n) => new Tensor(Int32Array.from({ length: n }, (_, i) => i % 10), [n]);
