// fit (js/loop.js) on a small CNN (the golden case cnn_bn_ce_sgd: Conv-BatchNorm-ReLU-MaxPool-
// Conv-ReLU-GlobalAveragePool-Linear, cross-entropy, SGD): the same steps, losses, validation
// numbers, checkpoints and final parameters as a hand-written loop with the same seed, bit for
// bit; early stopping (restoring the best parameters), non-finite batches skipped or stopping,
// callbacks that stop, abort, validationSplit, and the progress line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { artifacts, fit, Tensor, WebtrainError } from '../../js/index.js';
import { permutation, epochSeed } from '../../js/loop.js';
import { readCase, loadRef, artifactOptions, setup } from '../golden/golden.mjs';

const dir = new URL('../golden/cases/cnn_bn_ce_sgd/', import.meta.url).pathname;
const c = await readCase(dir);
// The case's 5 training batches of 4 stacked (20 samples), and its eval batch as the validation set.
const parts = await Promise.all(c.steps.map(async (s) => [await loadRef(dir, s.inputs.input), await loadRef(dir, s.inputs.labels)]));
function stack(ts) {
  const data = new ts[0].data.constructor(ts.reduce((a, t) => a + t.size, 0));
  ts.reduce((at, t) => (data.set(t.data, at), at + t.size), 0);
  return new Tensor(ts[0].type, data, [ts.reduce((a, t) => a + t.dims[0], 0), ...ts[0].dims.slice(1)]);
}
const x = stack(parts.map((p) => p[0]));
const y = stack(parts.map((p) => p[1]));
const xVal = await loadRef(dir, c.eval.inputs.input);
const yVal = await loadRef(dir, c.eval.inputs.labels);
const art = await artifacts.generateArtifacts(join(dir, c.model), { ...artifactOptions(c), additionalOutputNames: ['output'] });

async function session() {
  const s = await setup(c, art, dir);
  return { ...s, release: () => (s.optimizer.release(), s.module.release(), s.state.release()) };
}

function gather(t, idx) {
  const per = t.size / t.dims[0];
  const out = new t.data.constructor(idx.length * per);
  idx.forEach((r, i) => out.set(t.data.subarray(r * per, (r + 1) * per), i * per));
  return new Tensor(t.type, out, [idx.length, ...t.dims.slice(1)]);
}

const argmaxHits = (logits, labels) => {
  let hits = 0;
  for (let i = 0; i < labels.size; i++) {
    const row = logits.data.subarray(i * 10, i * 10 + 10);
    if (row.indexOf(Math.max(...row)) === labels.data[i]) hits++;
  }
  return hits;
};

test('fit: the steps, validation and checkpoints of a hand-written loop, bit for bit', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'webtrain-fit-'));
  const a = await session();
  const b = await session();
  try {
    const batchEnds = [];
    const epochEnds = [];
    const r = await fit(a.module, a.optimizer, {
      x, y, batchSize: 8, epochs: 3, shuffle: true, seed: 11,
      validation: { x: xVal, y: yVal },
      metrics: ['accuracy'],
      checkpoint: { path: join(tmp, 'ckpt-{epoch}'), every: 'epoch' },
      callbacks: { onBatchEnd: (p) => void batchEnds.push(p), onEpochEnd: (e) => void epochEnds.push(e) },
    });

    // By hand: the same shuffles, steps and eval runs.
    const losses = [];
    const hand = [];
    for (let epoch = 0; epoch < 3; epoch++) {
      const perm = permutation(20, epochSeed(11, epoch));
      let sum = 0;
      let hits = 0;
      for (let s = 0; s < 20; s += 8) {
        const idx = perm.slice(s, s + 8);
        const [loss, logits] = b.module.run(gather(x, idx), gather(y, idx));
        b.optimizer.step();
        b.module.lazyResetGrad();
        losses.push(loss.data[0]);
        sum += loss.data[0];
        hits += argmaxHits(logits, gather(y, idx));
      }
      b.module.eval();
      const [valLoss, valLogits] = b.module.run(xVal, yVal);
      b.module.train();
      hand.push({ epoch, loss: sum / 3, accuracy: hits / 20, valLoss: valLoss.data[0], valAccuracy: argmaxHits(valLogits, yVal) / yVal.size, lr: 0.05 });
      const saved = await readFile(join(tmp, `ckpt-${epoch}`));
      if (epoch === 2) assert.deepEqual(new Uint8Array(saved), b.state.toBytes({ includeOptimizerState: true }), 'the last checkpoint differs');
    }
    assert.deepEqual([...r.losses], losses);
    assert.deepEqual(a.module.getContiguousParameters(false).data, b.module.getContiguousParameters(false).data);
    assert.deepEqual(r.history.map(({ seconds, ...e }) => (assert.ok(seconds >= 0), { ...e, lr: Math.fround(e.lr) })), hand.map((e) => ({ ...e, lr: Math.fround(e.lr) })));
    assert.equal(r.steps, 9);
    assert.equal(r.epochs, 3);
    assert.equal(r.skipped, 0);
    assert.equal(r.stopped, null);
    assert.deepEqual(epochEnds, r.history);
    assert.deepEqual(batchEnds.map((p) => [p.step, p.epoch, p.batch, p.batches, p.epochDone]), [
      [1, 0, 1, 3, false], [2, 0, 2, 3, false], [3, 0, 3, 3, true],
      [4, 1, 1, 3, false], [5, 1, 2, 3, false], [6, 1, 3, 3, true],
      [7, 2, 1, 3, false], [8, 2, 2, 3, false], [9, 2, 3, 3, true],
    ]);
    assert.equal(batchEnds[2].accuracy, hand[0].accuracy);
  } finally {
    a.release();
    b.release();
    await rm(tmp, { recursive: true, force: true });
  }
});

test('fit: early stopping restores the best parameters; a callback returning false stops', async () => {
  const s = await session();
  try {
    // A metric whose validation value is set per epoch: best at epoch 1, then 2 epochs worse.
    const scores = [5, 3, 4, 4, 1, 0];
    let epochNow = 0;
    const paramsAt = [];
    const r = await fit(s.module, s.optimizer, {
      x, y, batchSize: 5, epochs: 6, seed: 2,
      validation: { x: xVal, y: yVal },
      metrics: { accuracy: 'accuracy', score: () => scores[epochNow] },
      earlyStopping: { monitor: 'valScore', patience: 2, restoreBest: true },
      callbacks: { onBatchEnd: (p) => void (epochNow = p.epoch), onEpochEnd: () => void paramsAt.push(s.module.getContiguousParameters(false).data) },
    });
    assert.equal(r.stopped, 'earlyStopping');
    assert.deepEqual(r.history.map((e) => e.valScore), [5, 3, 4, 4]);
    assert.equal(r.bestEpoch, 1);
    assert.equal(r.restored, true);
    assert.deepEqual(s.module.getContiguousParameters(false).data, paramsAt[1]);
    assert.notDeepEqual(paramsAt[3], paramsAt[1]);

    const byCallback = await fit(s.module, s.optimizer, { x, y, batchSize: 4, epochs: 5, callbacks: { onBatchEnd: (p) => p.step < 7 } });
    assert.equal(byCallback.stopped, 'callback');
    assert.equal(byCallback.steps, 7);
    assert.deepEqual(byCallback.history.map((e) => e.epoch), [0, 1]);
    const byEpoch = await fit(s.module, s.optimizer, { x, y, batchSize: 4, epochs: 5, validationSplit: 0.2, callbacks: { onEpochEnd: async (e) => e.epoch < 1 } });
    assert.equal(byEpoch.stopped, 'callback');
    assert.equal(byEpoch.steps, 8, '16 training samples (the last 4 validate): 4 batches an epoch');
    assert.ok(Number.isFinite(byEpoch.history[1].valLoss));
  } finally {
    s.release();
  }
});

test('fit: x as a tensor, as an array of inputs, and explicit batches train alike', async () => {
  const slices = [0, 5, 10, 15].map((s) => [0, 1, 2, 3, 4].map((i) => s + i));
  const runs = [];
  for (const data of [{ x, y }, { x: [x], y }, { batches: slices.map((idx) => [gather(x, idx), gather(y, idx)]) }]) {
    const s = await session();
    try {
      const r = await fit(s.module, s.optimizer, { ...data, batchSize: 5, epochs: 2, validation: { x: xVal, y: yVal }, metrics: ['accuracy'] });
      runs.push({ losses: [...r.losses], history: r.history.map(({ seconds, ...e }) => e) });
    } finally {
      s.release();
    }
  }
  assert.equal(runs[0].losses.length, 8);
  for (const r of runs.slice(1)) assert.deepEqual(r, runs[0]);
});

test('fit: a non-finite batch is skipped (its update never applied) or stops; by default it throws', async () => {
  const bad = new Tensor('float32', x.data.slice(), x.dims);
  bad.data[5 * 784 + 3] = NaN; // sample 5: the second batch of 4
  const a = await session();
  const b = await session();
  try {
    const r = await fit(a.module, a.optimizer, { x: bad, y, batchSize: 4, epochs: 2, shuffle: false, onNonFinite: 'skip' });
    assert.equal(r.skipped, 2);
    assert.equal(r.steps, 8);
    assert.deepEqual(r.history.map((e) => e.skipped), [2 / 2, 1]);
    const losses = [];
    for (let epoch = 0; epoch < 2; epoch++) {
      for (let k = 0; k < 5; k++) {
        if (k === 1) continue;
        const idx = [0, 1, 2, 3].map((i) => k * 4 + i);
        losses.push(b.module.run(gather(x, idx), gather(y, idx))[0].data[0]);
        b.optimizer.step();
        b.module.lazyResetGrad();
      }
    }
    assert.deepEqual([...r.losses], losses);
    assert.deepEqual(a.module.getContiguousParameters(false).data, b.module.getContiguousParameters(false).data);
    const stop = await fit(a.module, a.optimizer, { x: bad, y, batchSize: 4, epochs: 2, shuffle: false, onNonFinite: 'stop' });
    assert.deepEqual([stop.stopped, stop.steps, stop.skipped, stop.history.length], ['nonFinite', 1, 1, 1]);
    await assert.rejects(fit(a.module, a.optimizer, { x: bad, y, batchSize: 4, shuffle: false }), /the loss is NaN at this train step/);
  } finally {
    a.release();
    b.release();
  }
});

test('fit: abort rejects with AbortError (and the history so far); arguments are checked', async () => {
  const s = await session();
  try {
    const ac = new AbortController();
    await assert.rejects(
      fit(s.module, s.optimizer, { x, y, batchSize: 4, epochs: 100, signal: ac.signal, callbacks: { onBatchEnd: (p) => void (p.step === 12 && ac.abort()) } }),
      (e) => e instanceof WebtrainError && e.code === 'AbortError' && /^fit: cancelled after 12 of 500 steps$/.test(e.message) && e.history.length === 2,
    );
    await assert.rejects(fit(s.module, s.optimizer, { x, y, signal: AbortSignal.abort() }), /fit: cancelled before it started/);
    await assert.rejects(fit({}, s.optimizer, { x, y }), /fit: module must be a Module/);
    await assert.rejects(fit(s.module, s.optimizer, {}), /fit: give x and y/);
    await assert.rejects(fit(s.module, s.optimizer, { x, y, metrics: ['f1'] }), /unknown metric 'f1'/);
    await assert.rejects(fit(s.module, s.optimizer, { x, y, onNonFinite: 'ignore' }), /onNonFinite must be/);
    await assert.rejects(fit(s.module, s.optimizer, { x, y, validationSplit: 0.01 }), /validationSplit 0.01 leaves no/);
    await assert.rejects(fit(s.module, s.optimizer, { x, y, earlyStopping: { monitor: 'valLoss' } }), /monitors 'valLoss', which the history does not have/);
  } finally {
    s.release();
  }
});

test('fit: metrics without additionalOutputNames come from the eval model; with no validation data, the error says how to get them', async () => {
  const plain = await artifacts.generateArtifacts(join(dir, c.model), artifactOptions(c));
  const s = await setup(c, plain);
  try {
    const r = await fit(s.module, s.optimizer, { x, y, batchSize: 10, metrics: ['accuracy'], validation: { x: xVal, y: yVal } });
    assert.ok(Number.isFinite(r.history[0].valLoss));
    assert.ok(r.history[0].valAccuracy >= 0 && r.history[0].valAccuracy <= 1);
    assert.equal(r.history[0].accuracy, undefined); // the training model outputs the loss alone
    await assert.rejects(fit(s.module, s.optimizer, { x, y, batchSize: 10, metrics: ['accuracy'] }), /give validation data .* or generate the artifacts with additionalOutputNames/);
  } finally {
    s.optimizer.release();
    s.module.release();
    s.state.release();
  }
});

test('fit: progress is one updating line on a terminal, plain lines otherwise', async () => {
  const s = await session();
  try {
    for (const isTTY of [true, false]) {
      let out = '';
      const stream = { isTTY, columns: 200, write: (t) => void (out += t) };
      await fit(s.module, s.optimizer, { x, y, batchSize: 4, epochs: 2, metrics: ['accuracy'], progress: { stream } });
      const lines = out.split('\n');
      assert.equal(lines.length, 3, JSON.stringify(out));
      // What the terminal shows last on each line (a TTY's bar overwritten by the epoch's summary).
      assert.match(lines[1].split('\r').at(-1), /^(\x1b\[K)?epoch 1 \(2\/2\) loss \d\.\d{4} accuracy \d\.\d{4} \d+\.\ds$/);
      if (isTTY) assert.match(out, /\r\x1b\[Kepoch 0 \(1\/2\) \[=+>\] 5\/5 loss/);
      else assert.doesNotMatch(out, /\r/);
    }
  } finally {
    s.release();
  }
});

test('fit in webtrain.worker() is typed: w.fit takes the worker objects, built-in metrics, idb:// checkpoints', () => {
  const root = new URL('../../', import.meta.url).pathname;
  const r = spawnSync(join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', 'tests/types/worker-fit'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});
