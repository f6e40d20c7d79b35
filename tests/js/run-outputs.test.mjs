// module.run() returns what the user asked for: the loss, then the additionalOutputNames given at
// generation, in that order (a lone loss as a Tensor); the BatchNorm running statistics the module
// computes for itself are written back into the state, never returned. outputNames() agrees, in
// train and eval mode; also for artifacts made by ONNX Runtime's tooling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CheckpointState, Module, Optimizer, Tensor, artifacts } from '../../js/index.js';
import { readCase, inputsOf, artifactOptions } from '../golden/golden.mjs';

const casesDir = new URL('../golden/cases/', import.meta.url).pathname;
const mnistDir = new URL('../data/ort-mnist/', import.meta.url).pathname;
const dir = join(casesDir, 'cnn_bn_ce_sgd');
const c = await readCase(dir);
const batch = await inputsOf(dir, c.steps[0].inputs, c.training_graph_input_names);

async function open(options = {}) {
  const art = await artifacts.generateArtifacts(join(dir, c.model), { ...artifactOptions(c), ...options });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  return {
    state,
    module,
    optimizer,
    release() {
      optimizer.release();
      module.release();
      state.release();
    },
  };
}

test('a BatchNorm CNN: run() returns the loss Tensor alone; running statistics are updated inside', async () => {
  const t = await open();
  try {
    const { module, state } = t;
    assert.deepEqual(module.outputNames(), ['loss']);
    assert.deepEqual(module.outputNames(1), ['loss']);
    const mean0 = state.parameters.get('bn1.running_mean').data;
    const loss = module.run(...batch);
    assert.ok(loss instanceof Tensor, 'run() returns a Tensor');
    assert.deepEqual(loss.dims, []);
    assert.ok(Number.isFinite(loss.data[0]), `loss ${loss.data[0]}`);
    assert.notDeepEqual(state.parameters.get('bn1.running_mean').data, mean0, 'the running mean was written back');
    assert.equal(module.runAll(...batch).length, 1);
    assert.deepEqual(Object.keys(module.runNamed(...batch)), ['loss']);
    module.eval();
    assert.deepEqual(module.outputNames(), ['loss']);
    assert.ok(module.run(...batch) instanceof Tensor, 'eval run() returns a Tensor');
  } finally {
    t.release();
  }
});

test('a BatchNorm CNN with additionalOutputNames: run() returns [loss, ...those], in order, in both modes', async () => {
  const t = await open({ additionalOutputNames: ['output'] });
  try {
    const { module } = t;
    const n = batch[0].dims[0];
    for (const mode of ['train', 'eval']) {
      module[mode]();
      assert.deepEqual(module.outputNames(), ['loss', 'output'], `${mode} outputNames`);
      const out = module.run(...batch);
      assert.ok(Array.isArray(out) && out.length === 2, `${mode}: run() returns [loss, output]`);
      const [loss, output] = out;
      assert.deepEqual(loss.dims, []);
      assert.deepEqual(output.dims, [n, 10]);
      assert.deepEqual(Object.keys(module.runNamed(...batch)), ['loss', 'output']);
    }
  } finally {
    t.release();
  }
});

test("ONNX Runtime's artifacts: outputNames() is [loss, output] in train and eval mode", async () => {
  const state = await CheckpointState.loadCheckpoint(join(mnistDir, 'checkpoint'));
  const module = await Module.create(join(mnistDir, 'training_model.onnx'), state, join(mnistDir, 'eval_model.onnx'));
  try {
    assert.deepEqual(module.outputNames(), ['onnx::loss::8', 'output']);
    assert.deepEqual(module.eval().outputNames(), ['onnx::loss::8', 'output']);
  } finally {
    module.release();
    state.release();
  }
});
