// trainEpochs (js/loop.js), the training loop shared by Node and webtrain.worker(): the same
// steps as a hand-written loop (bit for bit), batching and shuffling, batches given as an array,
// a function and an async iterable, progress reports, the scheduler, and cancellation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CheckpointState, Module, Optimizer, LinearLRScheduler, Tensor, artifacts, trainEpochs, WebtrainError } from '../../js/index.js';

const MLP = join(new URL('../golden/cases/', import.meta.url).pathname, 'mlp_ce_adamw', 'model.onnx');
const N = 20;
const x = new Tensor('float32', Float32Array.from({ length: N * 784 }, (_, i) => Math.sin(i * 0.37) * 0.8), [N, 784]);
const y = new Tensor('int32', Int32Array.from({ length: N }, (_, i) => (i * 3) % 10), [N]);

let art;
async function setup() {
  art ??= await artifacts.generateArtifacts(MLP, { requiresGrad: ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'], loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  return { state, module, optimizer, release: () => (optimizer.release(), module.release(), state.release()) };
}

const rows = (t, s, e) => new Tensor(t.type, t.data.slice(s * (t.size / t.dims[0]), e * (t.size / t.dims[0])), [e - s, ...t.dims.slice(1)]);

test('trainEpochs takes the steps of a hand-written loop, with progress', async () => {
  const a = await setup();
  const b = await setup();
  try {
    const progress = [];
    const r = await trainEpochs({ module: a.module, optimizer: a.optimizer, inputs: [x, y], batchSize: 8, epochs: 2, onProgress: (p) => progress.push(p) });
    const manual = [];
    for (let epoch = 0; epoch < 2; epoch++) {
      for (let s = 0; s < N; s += 8) {
        const loss = b.module.run(rows(x, s, Math.min(N, s + 8)), rows(y, s, Math.min(N, s + 8)));
        b.optimizer.step();
        b.module.lazyResetGrad();
        manual.push(loss.data[0]);
      }
    }
    assert.equal(r.steps, 6);
    assert.equal(r.epochs, 2);
    assert.ok(r.losses instanceof Float32Array);
    assert.deepEqual([...r.losses], manual);
    assert.equal(r.lastLoss, manual[5]);
    assert.deepEqual(progress.map((p) => [p.step, p.totalSteps, p.epoch, p.batch, p.batches, p.epochDone]), [
      [1, 6, 0, 1, 3, false], [2, 6, 0, 2, 3, false], [3, 6, 0, 3, 3, true],
      [4, 6, 1, 1, 3, false], [5, 6, 1, 2, 3, false], [6, 6, 1, 3, 3, true],
    ]);
    assert.ok(Math.abs(progress[2].epochLoss - (manual[0] + manual[1] + manual[2]) / 3) < 1e-6);
    assert.deepEqual(a.module.getContiguousParameters().data, b.module.getContiguousParameters().data);
  } finally {
    a.release();
    b.release();
  }
});

test('trainEpochs: batches as an array, a function of the epoch and an async iterable agree; shuffle is seeded', async () => {
  const batches = [[rows(x, 0, 10), rows(y, 0, 10)], [rows(x, 10, 20), rows(y, 10, 20)]];
  const runs = [];
  for (const given of [
    { batches, epochs: 2 },
    { batches: () => batches, epochs: 2 },
    { batches: (epoch) => (async function* () { yield* batches; })(epoch), epochs: 2 },
    { inputs: [x, y], batchSize: 10, epochs: 2 },
  ]) {
    const s = await setup();
    try {
      const progress = [];
      runs.push((await trainEpochs({ module: s.module, optimizer: s.optimizer, ...given, onProgress: (p) => progress.push(p) })).losses);
      assert.equal(progress.at(-1).epochDone, true);
      assert.equal(progress.at(-1).batches, 2);
    } finally {
      s.release();
    }
  }
  for (const r of runs.slice(1)) assert.deepEqual(r, runs[0]);
  const shuffled = [];
  for (let k = 0; k < 2; k++) {
    const s = await setup();
    try {
      shuffled.push((await trainEpochs({ module: s.module, optimizer: s.optimizer, inputs: [x, y], batchSize: 10, shuffle: true, seed: 5 })).losses);
    } finally {
      s.release();
    }
  }
  assert.deepEqual(shuffled[0], shuffled[1]);
  assert.notDeepEqual(shuffled[0], runs[0].subarray(0, 2));
});

test('trainEpochs steps the scheduler and dropLast drops a short batch', async () => {
  const s = await setup();
  try {
    s.optimizer.setLearningRate(0.01);
    const scheduler = new LinearLRScheduler(s.optimizer, 0, 4, 0.01);
    const r = await trainEpochs({ module: s.module, optimizer: s.optimizer, scheduler, inputs: [x, y], batchSize: 8, dropLast: true });
    assert.equal(r.steps, 2);
    assert.ok(Math.abs(s.optimizer.getLearningRate() - 0.005) < 1e-7, `lr ${s.optimizer.getLearningRate()}`);
  } finally {
    s.release();
  }
});

test('trainEpochs stops when its signal aborts, and checks its arguments', async () => {
  const s = await setup();
  try {
    const ac = new AbortController();
    await assert.rejects(
      trainEpochs({ module: s.module, optimizer: s.optimizer, inputs: [x, y], batchSize: 4, epochs: 1000, signal: ac.signal, onProgress: (p) => p.step === 3 && ac.abort() }),
      (e) => e instanceof WebtrainError && e.code === 'AbortError' && /^trainEpochs: cancelled after 3 of 5000 steps$/.test(e.message),
    );
    await assert.rejects(trainEpochs({ module: s.module, optimizer: s.optimizer, inputs: [x, y], signal: AbortSignal.abort() }), /cancelled before it started/);
    await assert.rejects(trainEpochs({ module: {}, optimizer: s.optimizer, inputs: [x, y] }), /module must be a Module/);
    await assert.rejects(trainEpochs({ module: s.module, optimizer: s.optimizer }), /give inputs/);
    await assert.rejects(trainEpochs({ module: s.module, optimizer: s.optimizer, inputs: [x, rows(y, 0, 3)] }), /same number of samples/);
    await assert.rejects(trainEpochs({ module: s.module, optimizer: s.optimizer, batches: new Set([[x, y]]), epochs: 2 }), /can be read once/);
  } finally {
    s.release();
  }
});
