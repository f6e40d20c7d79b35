// Resuming resumes the schedule: a LinearLRScheduler made after reloading a checkpoint saved with
// its optimizer state follows the optimizer's step count stored there (as ONNX Runtime's does),
// so learning rates and parameters (BatchNorm running statistics included) continue bit for bit
// as in an uninterrupted run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CheckpointState, Module, Optimizer, LinearLRScheduler, artifacts } from '../../js/index.js';
import { readCase, inputsOf, artifactOptions } from '../golden/golden.mjs';

const casesDir = new URL('../golden/cases/', import.meta.url).pathname;
const SCHEDULE = { warmup: 2, total: 7, lr: 0.02 };
const STEPS = 6;
const SAVE_AFTER = 3;

async function open(art, checkpoint) {
  const state = await CheckpointState.loadCheckpoint(checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const scheduler = new LinearLRScheduler(optimizer, SCHEDULE.warmup, SCHEDULE.total, SCHEDULE.lr);
  return {
    state,
    module,
    optimizer,
    scheduler,
    release() {
      optimizer.release();
      module.release();
      state.release();
    },
  };
}

/** Steps [from, to): the learning rate used and every parameter after each step. */
function train(s, batches, from, to) {
  const trace = [];
  s.module.train();
  for (let k = from; k < to; k++) {
    const lr = s.optimizer.getLearningRate();
    s.module.run(...batches[k % batches.length]);
    s.optimizer.step();
    s.module.lazyResetGrad();
    s.scheduler.step();
    trace.push({ lr, params: new Map([...s.state.parameters].map(([n, p]) => [n, p.data])) });
  }
  return trace;
}

function assertBitEqual(a, b, what) {
  assert.deepEqual([...a.keys()], [...b.keys()], `${what}: parameter names`);
  for (const [n, x] of a) {
    const ux = new Uint32Array(x.buffer, x.byteOffset, x.length);
    const uy = new Uint32Array(b.get(n).buffer, b.get(n).byteOffset, b.get(n).length);
    assert.equal(ux.length, uy.length, `${what}: ${n} size`);
    for (let i = 0; i < ux.length; i++) if (ux[i] !== uy[i]) assert.fail(`${what}: ${n}[${i}] ${x[i]} != ${b.get(n)[i]}`);
  }
}

for (const name of ['mlp_ce_adamw', 'cnn_bn_ce_sgd']) {
  test(`${name}: save with optimizer state, reload, new LinearLRScheduler continues the schedule (bit for bit)`, async () => {
    const dir = join(casesDir, name);
    const c = await readCase(dir);
    const art = await artifacts.generateArtifacts(join(dir, c.model), artifactOptions(c));
    const batches = [];
    for (const s of c.steps) batches.push(await inputsOf(dir, s.inputs, c.training_graph_input_names));

    const straight = await open(art, art.checkpoint);
    const expected = train(straight, batches, 0, STEPS);
    straight.release();
    // the schedule itself: warmup then linear decay, by the optimizer's step count
    const factor = (s) => (s < SCHEDULE.warmup ? s / SCHEDULE.warmup : Math.max(0, (SCHEDULE.total - s) / (SCHEDULE.total - SCHEDULE.warmup)));
    expected.forEach((e, k) => assert.ok(Math.abs(e.lr - SCHEDULE.lr * factor(k)) < 1e-7, `step ${k}: lr ${e.lr}`));

    const first = await open(art, art.checkpoint);
    const before = train(first, batches, 0, SAVE_AFTER);
    const bytes = await CheckpointState.saveCheckpoint(first.state, undefined, { includeOptimizerState: true });
    first.release();

    const resumed = await open(art, bytes);
    const after = train(resumed, batches, SAVE_AFTER, STEPS);
    resumed.release();
    const got = [...before, ...after];
    for (let k = 0; k < STEPS; k++) {
      assert.equal(got[k].lr, expected[k].lr, `step ${k}: learning rate ${got[k].lr}, uninterrupted ${expected[k].lr}`);
      assertBitEqual(got[k].params, expected[k].params, `parameters after step ${k}`);
    }
  });
}
