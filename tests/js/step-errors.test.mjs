// optimizer.step() without gradients to apply is an error, not a silent update (AdamW would apply
// its weight decay alone and count a step): before any training step, after lazyResetGrad(),
// after eval-mode runs only, twice after one run, after loading a checkpoint; and on a released
// module. What stays valid: several training steps then one optimizer step (gradient
// accumulation, equal to the summed gradients), and fit's loop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CheckpointState, Module, Optimizer, Tensor, WebtrainError, fit } from '../../js/index.js';
import { mlpObjects, mlpInputs, mlpLabels } from './mlp.mjs';

// weight decay on: a step without gradients would still move every parameter
const objects = () => mlpObjects({ loss: 'CrossEntropyLoss', optimizer: { type: 'AdamW', weightDecay: 0.1 } });
const x = mlpInputs(4);
const y = mlpLabels(4);

const NO_GRADIENTS = /^optimizer step: no gradients to apply: no train step ran since the last optimizer step or lazy gradient reset \(an eval step computes none\); run a train step \(module\.train\(\), then module\.run\(inputs, labels\)\) first$/;

/** optimizer.step() throws the no-gradients error and leaves the parameters as they were. */
function refusesStep({ module, optimizer }, why) {
  const before = module.getContiguousParameters(false).data;
  assert.throws(() => optimizer.step(), (err) => err instanceof WebtrainError && NO_GRADIENTS.test(err.message), why);
  assert.deepEqual(module.getContiguousParameters(false).data, before, `${why}: the parameters changed`);
}

test('step with no gradients computed since the last step or reset is refused', async () => {
  const o = await objects();
  try {
    refusesStep(o, 'before any run');
    o.module.eval().run(x, y);
    refusesStep(o, 'after an eval-mode run');
    o.module.train().run(x, y);
    o.optimizer.step();
    refusesStep(o, 'a second step after one run');
    o.module.run(x, y);
    o.module.lazyResetGrad();
    refusesStep(o, 'after lazyResetGrad()');
    o.module.run(x, y);
    o.optimizer.step(); // a run after the reset: gradients again
  } finally {
    o.release();
  }
});

test('a state loaded from a checkpoint has no gradients pending, optimizer state or not', async () => {
  const o = await objects();
  const { art } = o;
  o.module.run(x, y);
  const saved = await CheckpointState.saveCheckpoint(o.state, null, { includeOptimizerState: true });
  o.release();
  const state = await CheckpointState.loadCheckpoint(saved);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  try {
    refusesStep({ module, optimizer }, 'after loading');
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
});

test('step on a released module is an error', async () => {
  const o = await objects();
  o.module.run(x, y);
  o.module.release();
  assert.throws(() => o.optimizer.step(), /^WebtrainError: optimizer step: its module was released; step before releasing the module \(or release the optimizer too\)$/);
  o.optimizer.release();
  o.state.release();
});

test('gradient accumulation: two runs then one step applies the sum of both runs\' gradients', async () => {
  const a = await objects();
  const b = await objects();
  const half = (k) => [new Tensor(x.data.slice(k * 2 * 784, (k + 1) * 2 * 784), [2, 784]), new Tensor(y.data.slice(k * 2, (k + 1) * 2), [2])];
  const grads = (o) => [...o.state.parameters.values()].map((p) => p.grad);
  try {
    a.module.run(...half(0));
    a.module.run(...half(1));
    const sum = grads(a);
    a.optimizer.step();
    b.module.run(...half(0));
    const g1 = grads(b);
    b.module.lazyResetGrad();
    b.module.run(...half(1));
    const g2 = grads(b);
    sum.forEach((g, i) => g.forEach((v, k) => assert.ok(Math.abs(v - (g1[i][k] + g2[i][k])) <= 1e-6 + 1e-5 * Math.abs(v), `gradient ${i}[${k}]`)));
  } finally {
    a.release();
    b.release();
  }
});

test('fit trains as before: every step applies the gradients of its run', async () => {
  const o = await objects();
  try {
    const r = await fit(o.module, o.optimizer, { x, y, batchSize: 2, epochs: 2 });
    assert.equal(r.steps, 4);
  } finally {
    o.release();
  }
});
