// Training in a Web Worker (webtrain.worker()) in real Chromium: the main thread stays
// responsive (a setInterval timer keeps firing while the worker trains), progress events
// arrive, the result is bit-identical to the same training on the main thread, transfer()
// moves buffers, cancellation works, and a checkpoint saved to idb:// in the worker loads on
// the main thread. fit in the worker (w.fit): the same loop as on the main thread (js/loop.js),
// bit for bit (history with validation loss and accuracy, parameters); progress events per
// batch and per epoch; a checkpoint per epoch in IndexedDB; a callback returning false stops;
// abort rejects with the history so far; a metric function is refused (it cannot cross). fit on a
// small CNN with BatchNorm in the worker: validation accuracy, early stopping with the best
// parameters restored, a checkpoint per epoch; the same as on the main thread.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, guard, openPage, screenshot } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await serve();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('worker training: main thread responsive, progress, same result as the main thread', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      t.status('training in a worker…');
      const g = await t.golden();
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      // The data set: the 5 golden batches stacked (40 samples), repeated for many epochs.
      const n = g.steps.length * 8;
      const x = new Float32Array(n * 784);
      const y = new Int32Array(n);
      g.steps.forEach(([inp, lab], k) => {
        x.set(inp.data, k * 8 * 784);
        y.set(lab.data, k * 8);
      });
      const epochs = 300;

      const w = await wt.worker();
      const simd = await w.simdName();
      const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await w.Module.create(art.trainingModel, state, art.evalModel);
      const optimizer = await w.Optimizer.create(art.optimizerModel, module);
      const names = await module.inputNames();
      const firstLoss = (await module.run(g.steps[0][0], g.steps[0][1])).data[0];
      await module.lazyResetGrad(); // discard that step's gradients (no optimizer step)

      // Main-thread timer during the worker loop.
      const ticks = [];
      const timer = setInterval(() => {
        ticks.push(performance.now());
        document.getElementById('ticks').textContent = ticks.length;
      }, 10);
      const progress = [];
      let events = 0;
      w.addEventListener('progress', () => events++);
      const bar = document.getElementById('progress');
      const t0 = performance.now();
      const res = await w.trainEpochs({
        module, optimizer, inputs: [new wt.Tensor(x, [n, 784]), new wt.Tensor(y, [n])], batchSize: 8, epochs,
        progressEvery: 7,
        onProgress: (p) => {
          progress.push(p);
          bar.value = p.step / p.totalSteps;
        },
      });
      const ms = performance.now() - t0;
      clearInterval(timer);
      const eventsDuringTraining = events;
      const gaps = ticks.slice(1).map((v, i) => v - ticks[i]);
      await w.CheckpointState.saveCheckpoint(state, 'idb://from-worker', { includeOptimizerState: true });
      const workerParams = {};
      for (const [name, p] of await state.parameters.entries()) workerParams[name] = p.data;

      // The same steps on the main thread.
      const local = await t.session(art);
      const batches = [];
      for (let e = 0; e < epochs; e++) batches.push(...g.steps);
      const localLosses = t.trainSteps(local, batches);
      const diff = t.bitDiff(workerParams, t.params(local.state));
      const fromIdb = await wt.CheckpointState.loadCheckpoint('idb://from-worker');
      const idbDiff = t.bitDiff(workerParams, t.params(fromIdb));
      const lossDiff = res.losses.findIndex((v, i) => v !== localLosses[i]);

      // transfer(): the buffer moves to the worker (detached here); results come back intact.
      const moved = new Float32Array(g.steps[1][0].data);
      await module.eval();
      const evalLoss = await module.run(new wt.Tensor(wt.transfer(moved), [8, 784]), g.steps[1][1]);
      const detached = moved.byteLength === 0;

      // Cancellation between steps.
      const ac = new AbortController();
      let cancelled = null;
      const p = w.trainEpochs({ module, optimizer, inputs: [new wt.Tensor(x, [n, 784]), new wt.Tensor(y, [n])], batchSize: 8, epochs: 100000, onProgress: (q) => q.step === 20 && ac.abort(), signal: ac.signal });
      try {
        await p;
      } catch (e) {
        cancelled = `${e.name} ${e.code}: ${e.message}`;
      }
      // Errors from the worker come back as WebtrainErrors.
      let badInput = null;
      try {
        await module.run(g.steps[0][0]);
      } catch (e) {
        badInput = `${e.name}: ${e.message}`;
      }
      await optimizer.release();
      await module.release();
      await state.release();
      w.terminate();

      t.log(`worker core: ${simd}; inputs ${names.join(', ')}`);
      t.log(`${res.steps} steps in ${ms.toFixed(0)} ms in the worker; loss ${firstLoss.toFixed(4)} -> ${res.lastLoss.toFixed(4)}`);
      t.log(`main thread: ${ticks.length} timer ticks during training, longest gap ${Math.max(...gaps).toFixed(1)} ms`);
      t.log(`${progress.length} progress callbacks, ${eventsDuringTraining} progress events`);
      t.log(`worker vs main thread: ${diff ?? 'bit-identical parameters'}; saved in the worker, loaded here: ${idbDiff ?? 'bit-identical'}`);
      t.log(`cancel: ${cancelled}`);
      t.status(diff ? 'FAILED' : 'passed: trained in a worker');
      return {
        simd, names, steps: res.steps, ms, ticks: ticks.length, maxGap: Math.max(...gaps), progress: progress.length, events: eventsDuringTraining,
        last: progress.at(-1), firstLoss, lastLoss: res.lastLoss, diff, idbDiff, lossDiff, detached, evalLoss: { type: evalLoss.type, dims: evalLoss.dims, isTensor: evalLoss instanceof wt.Tensor },
        cancelled, badInput,
      };
    });
    assert.deepEqual(r.names, ['input', 'labels']);
    assert.equal(r.steps, 1500);
    assert.equal(r.diff, null, 'worker and main-thread training differ');
    assert.equal(r.idbDiff, null);
    assert.equal(r.lossDiff, -1, 'per-step losses differ');
    assert.ok(r.lastLoss < r.firstLoss / 2, `loss did not go down: ${r.firstLoss} -> ${r.lastLoss}`);
    // Responsive: the 10 ms timer fired all along (no gap near the training time).
    const expectedTicks = r.ms / 10;
    assert.ok(r.ticks >= Math.max(5, expectedTicks * 0.5), `only ${r.ticks} ticks in ${r.ms.toFixed(0)} ms`);
    assert.ok(r.maxGap < Math.max(100, r.ms / 4), `the main thread stalled for ${r.maxGap.toFixed(0)} ms of ${r.ms.toFixed(0)}`);
    // Every 7th step and the end of each epoch (every 5th step), once when both.
    let expected = 0;
    for (let s = 1; s <= 1500; s++) if (s % 7 === 0 || s % 5 === 0) expected++;
    assert.equal(r.progress, expected, JSON.stringify(r.last));
    assert.equal(r.events, r.progress);
    assert.deepEqual({ step: r.last.step, totalSteps: r.last.totalSteps, epoch: r.last.epoch, epochDone: r.last.epochDone }, { step: 1500, totalSteps: 1500, epoch: 299, epochDone: true });
    assert.equal(r.detached, true, 'transfer() did not move the buffer');
    assert.deepEqual(r.evalLoss, { type: 'float32', dims: [], isTensor: true });
    assert.match(r.cancelled, /^WebtrainError AbortError: trainEpochs: cancelled after \d+ of \d+ steps/);
    assert.match(r.badInput, /^WebtrainError: the training model takes 2 inputs/);
    await screenshot(page, 'worker-training');
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});

test('fit in a worker: validation, progress events, checkpoints, stop and abort; the same as on the main thread', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      t.status('fit in a worker…');
      const g = await t.golden();
      const options = { ...g.options, additionalOutputNames: ['output'] };
      const art = await wt.artifacts.generateArtifacts(g.model, options);
      // 4 golden batches (32 samples) to train on, the 5th (8 samples) to validate on.
      const x = new Float32Array(32 * 784);
      const y = new Int32Array(32);
      g.steps.slice(0, 4).forEach(([inp, lab], k) => {
        x.set(inp.data, k * 8 * 784);
        y.set(lab.data, k * 8);
      });
      const [xVal, yVal] = g.steps[4];
      const data = () => ({ x: new wt.Tensor(x, [32, 784]), y: new wt.Tensor(y, [32]), validation: { x: xVal, y: yVal } });
      const fitOptions = { batchSize: 8, epochs: 12, shuffle: true, seed: 3, metrics: ['accuracy'] };

      const w = await wt.worker();
      const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await w.Module.create(art.trainingModel, state, art.evalModel);
      const optimizer = await w.Optimizer.create(art.optimizerModel, module);
      const batches = [];
      const epochs = [];
      const events = { batch: 0, epoch: 0 };
      w.addEventListener('progress', (ev) => events[ev.detail.type]++);
      const res = await w.fit(module, optimizer, {
        ...data(), ...fitOptions,
        checkpoint: { path: 'idb://fit-run', every: 'epoch' },
        callbacks: { onBatchEnd: (b) => void batches.push(b), onEpochEnd: (e) => void epochs.push(e) },
      });
      const eventsOfFirst = { ...events };
      const workerParams = {};
      for (const [name, p] of await state.parameters.entries()) workerParams[name] = p.data;
      const fromIdb = await wt.CheckpointState.loadCheckpoint('idb://fit-run');
      const idbDiff = t.bitDiff(workerParams, t.params(fromIdb));

      // The same fit on the main thread.
      const local = await t.session(art);
      const mainRes = await wt.fit(local.module, local.optimizer, { ...data(), ...fitOptions });
      const diff = t.bitDiff(workerParams, t.params(local.state));
      const strip = (h) => h.map(({ seconds, ...e }) => e);
      const historyMatches = JSON.stringify(strip(res.history)) === JSON.stringify(strip(mainRes.history));
      const lossDiff = res.losses.findIndex((v, i) => v !== mainRes.losses[i]);

      // onEpochEnd returning false stops before the next epoch; abort rejects, with the history so far.
      const stopped = await w.fit(module, optimizer, { ...data(), batchSize: 8, epochs: 50, callbacks: { onEpochEnd: (e) => e.epoch < 2 } });
      const ac = new AbortController();
      let cancelled = null;
      try {
        await w.fit(module, optimizer, { ...data(), batchSize: 8, epochs: 100000, signal: ac.signal, callbacks: { onBatchEnd: (b) => void (b.step === 30 && ac.abort()) } });
      } catch (e) {
        cancelled = { text: `${e.name} ${e.code}: ${e.message}`, epochs: e.history?.length };
      }
      let refused = null;
      try {
        await w.fit(module, optimizer, { ...data(), metrics: [() => 1] });
      } catch (e) {
        refused = e.message;
      }
      await optimizer.release();
      await module.release();
      await state.release();
      w.terminate();
      const last = res.history.at(-1);
      t.log(`worker fit: ${res.steps} steps, loss ${res.history[0].loss.toFixed(4)} -> ${last.loss.toFixed(4)}, val accuracy ${res.history[0].valAccuracy} -> ${last.valAccuracy}`);
      t.log(`worker vs main thread: ${diff ?? 'bit-identical parameters'}, history ${historyMatches ? 'identical' : 'differs'}; idb checkpoint: ${idbDiff ?? 'bit-identical'}`);
      t.log(`stopped: ${stopped.stopped} after ${stopped.epochs} epochs; cancel: ${cancelled?.text}`);
      t.status(diff || !historyMatches ? 'FAILED' : 'passed: fit in a worker');
      return {
        steps: res.steps, history: res.history, diff, idbDiff, historyMatches, lossDiff, events: eventsOfFirst, batches: batches.length, epochs,
        lastBatch: batches.at(-1), stopped: { stopped: stopped.stopped, epochs: stopped.epochs }, cancelled, refused,
      };
    });
    assert.equal(r.steps, 48);
    assert.equal(r.diff, null, 'worker and main-thread fit differ');
    assert.equal(r.historyMatches, true);
    assert.equal(r.lossDiff, -1);
    assert.equal(r.idbDiff, null, 'the last idb:// checkpoint is not the final state');
    assert.equal(r.history.length, 12);
    for (const e of r.history) for (const k of ['loss', 'valLoss', 'accuracy', 'valAccuracy']) assert.equal(typeof e[k], 'number', `${k} of epoch ${e.epoch}`);
    assert.ok(r.history.at(-1).loss < r.history[0].loss, 'the training loss did not go down');
    // (The golden batches are random: the validation numbers are checked against the main thread's, not for progress.)
    assert.ok(r.history.every((e) => Number.isFinite(e.valLoss) && e.valAccuracy >= 0 && e.valAccuracy <= 1));
    assert.deepEqual(r.events, { batch: 48, epoch: 12 });
    assert.equal(r.batches, 48);
    assert.deepEqual(r.epochs.map(({ seconds, ...e }) => e), r.history.map(({ seconds, ...e }) => e));
    assert.deepEqual({ step: r.lastBatch.step, epoch: r.lastBatch.epoch, epochDone: r.lastBatch.epochDone, type: r.lastBatch.type }, { step: 48, epoch: 11, epochDone: true, type: undefined });
    assert.equal(typeof r.lastBatch.accuracy, 'number');
    assert.equal(r.stopped.stopped, 'callback');
    assert.equal(r.stopped.epochs, 3, 'onEpochEnd returned false after epoch 2');
    assert.match(r.cancelled.text, /^WebtrainError AbortError: fit: cancelled after \d+ of 400000 steps$/);
    assert.ok(r.cancelled.epochs >= 7, `history of ${r.cancelled.epochs} epochs at the abort`);
    assert.match(r.refused, /a metric function cannot be sent to a worker/);
    await screenshot(page, 'worker-fit');
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});

test('fit on a CNN in a worker: validation accuracy, early stopping restoring the best epoch, a checkpoint per epoch', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      t.status('fit on a CNN in a worker…');
      const g = await t.golden('cnn_bn_ce_sgd'); // Conv-BatchNorm-ReLU-MaxPool-Conv-ReLU-GAP-Linear
      const art = await wt.artifacts.generateArtifacts(g.model, { ...g.options, additionalOutputNames: ['output'] });
      // 4 golden batches of 4 images [1, 28, 28] to train on, the 5th to validate on.
      const x = new Float32Array(16 * 784);
      const y = new Int32Array(16);
      g.steps.slice(0, 4).forEach(([inp, lab], k) => {
        x.set(inp.data, k * 4 * 784);
        y.set(Array.from(lab.data, Number), k * 4);
      });
      const [xVal, lVal] = g.steps[4];
      const yVal = new wt.Tensor(Int32Array.from(lVal.data, Number), [4]);
      const options = () => ({
        x: new wt.Tensor(x, [16, 1, 28, 28]), y: new wt.Tensor(y, [16]), validation: { x: xVal, y: yVal },
        batchSize: 4, epochs: 60, shuffle: true, seed: 5, metrics: ['accuracy'],
        earlyStopping: { monitor: 'valLoss', patience: 2, restoreBest: true },
      });
      const w = await wt.worker();
      const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await w.Module.create(art.trainingModel, state, art.evalModel);
      const optimizer = await w.Optimizer.create(art.optimizerModel, module);
      const res = await w.fit(module, optimizer, { ...options(), checkpoint: { path: 'idb://fit-cnn-{epoch}', every: 'epoch' } });
      const workerParams = {};
      for (const [name, p] of await state.parameters.entries()) workerParams[name] = p.data;
      const lastSaved = await wt.CheckpointState.loadCheckpoint(`idb://fit-cnn-${res.history.at(-1).epoch}`);
      const local = await t.session(art);
      const mainRes = await wt.fit(local.module, local.optimizer, options());
      const strip = (h) => h.map(({ seconds, ...e }) => e);
      const out = {
        stopped: res.stopped, bestEpoch: res.bestEpoch, restored: res.restored, history: strip(res.history),
        same: JSON.stringify(strip(res.history)) === JSON.stringify(strip(mainRes.history)) && res.bestEpoch === mainRes.bestEpoch,
        diff: t.bitDiff(workerParams, t.params(local.state)),
        savedDiffers: t.bitDiff(workerParams, t.params(lastSaved)) !== null,
      };
      await optimizer.release();
      await module.release();
      await state.release();
      w.terminate();
      t.log(`CNN fit in a worker: stopped by ${out.stopped} after ${out.history.length} epochs, best epoch ${out.bestEpoch}, val accuracy ${out.history[0].valAccuracy} -> ${out.history.at(-1).valAccuracy}`);
      return out;
    });
    assert.equal(r.stopped, 'earlyStopping');
    assert.ok(r.history.length < 60, `${r.history.length} epochs`);
    assert.equal(r.restored, true);
    const best = r.history.find((e) => e.epoch === r.bestEpoch);
    assert.equal(best.valLoss, Math.min(...r.history.map((e) => e.valLoss)), 'the best epoch has the lowest validation loss');
    for (const e of r.history) assert.ok(e.valAccuracy >= 0 && e.valAccuracy <= 1 && Number.isFinite(e.valLoss), `epoch ${e.epoch}`);
    assert.ok(r.history.at(-1).loss < r.history[0].loss, 'the training loss went down');
    assert.equal(r.same, true, 'worker and main-thread histories differ');
    assert.equal(r.diff, null, 'worker and main-thread parameters differ');
    // The last epoch's checkpoint holds that epoch's parameters; restoring the best epoch changed them.
    assert.equal(r.savedDiffers, r.bestEpoch !== r.history.at(-1).epoch);
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});
