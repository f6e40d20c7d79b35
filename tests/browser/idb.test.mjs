// IndexedDB in real Chromium: idb:// save/load round trip (bit-identical parameters), a
// checkpoint with external data in chunked records across a page reload, save →
// reload the page → load → continue training (identical to training without the reload),
// listing and deleting. (Quota errors: Chromium 156 ignores CDP Storage.overrideQuotaForOrigin,
// so no test forces one here.)
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

async function context() {
  return guard(await browser.newContext(), server.url);
}

test('idb round trip: parameters bit-identical, list and delete', async () => {
  const ctx = await context();
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      t.status('idb round trip');
      const g = await t.golden();
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      const s = await t.session(art);
      t.trainSteps(s, g.steps.slice(0, 2));
      s.state.properties.set('step', 2);
      const before = t.params(s.state);
      await wt.CheckpointState.saveCheckpoint(s.state, 'idb://round-trip', { includeOptimizerState: true });
      const exported = await s.module.exportModelForInferencing('idb://round-trip.onnx', ['output']);
      const loaded = await wt.CheckpointState.loadCheckpoint('idb://round-trip');
      const diff = t.bitDiff(before, t.params(loaded));
      const listed = await wt.idb.list();
      const session = await wt.InferenceSession.create('idb://round-trip.onnx');
      const out = await session.run({ input: g.steps[0][0] });
      const deleted = await wt.idb.delete('idb://round-trip.onnx');
      const after = (await wt.idb.list()).map((e) => e.name);
      let missing = null;
      try {
        await wt.CheckpointState.loadCheckpoint('idb://round-trip.onnx');
      } catch (e) {
        missing = `${e.name}: ${e.message}`;
      }
      t.log(`saved ${listed.map((e) => `${e.url} (${e.size} bytes)`).join(', ')}`);
      t.log(`loaded back: ${diff ?? 'bit-identical parameters'}; step property = ${loaded.properties.get('step')}`);
      t.log(`inference from idb: output dims [${out.output.dims}]; after delete: ${after.join(', ')}`);
      t.status(diff ? 'FAILED' : 'passed');
      return { diff, step: loaded.properties.get('step'), listed, exportedSize: exported.byteLength, outDims: out.output.dims, deleted, after, missing };
    });
    assert.equal(r.diff, null);
    assert.equal(r.step, 2);
    assert.deepEqual(r.listed.map((e) => e.name), ['round-trip', 'round-trip.onnx']);
    assert.equal(r.listed[1].size, r.exportedSize);
    assert.deepEqual(r.outDims, [8, 10]);
    assert.equal(r.deleted, true);
    assert.deepEqual(r.after, ['round-trip']);
    assert.match(r.missing, /WebtrainError: no IndexedDB entry 'idb:\/\/round-trip.onnx'/);
    await screenshot(page, 'idb-round-trip');
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});

test('a checkpoint with external data (ONNX Runtime\'s layout over 2 GB) in chunked records: save, reload the page, load', async () => {
  const ctx = await context();
  try {
    const url = `${server.url}/tests/browser/pages/index.html`;
    const page = await openPage(ctx, url);
    const saved = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      t.status('idb external data');
      wt.idb.configure({ chunkBytes: 65536 });
      const g = await t.golden();
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      const s = await t.session(art);
      t.trainSteps(s, g.steps.slice(0, 2));
      await wt.CheckpointState.saveCheckpoint(s.state, 'idb://ext/run', { includeOptimizerState: true, externalData: true });
      const [entry] = await wt.idb.list('ext/');
      return { inline: Array.from(s.state.toBytes({ includeOptimizerState: true })), size: entry.size };
    });
    await page.reload();
    await openPage(ctx, url, page);
    const loaded = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const state = await wt.CheckpointState.loadCheckpoint('idb://ext/run');
      t.status('passed');
      return Array.from(state.toBytes({ includeOptimizerState: true }));
    });
    assert.deepEqual(loaded, saved.inline, 'reloaded from IndexedDB bit for bit');
    assert.ok(saved.size > saved.inline.length - 4096, `list counts the external data (${saved.size} bytes)`);
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});

test('reload and resume: save, reload the page, load from idb, continue training', async () => {
  const ctx = await context();
  try {
    const url = `${server.url}/tests/browser/pages/index.html`;
    const page = await openPage(ctx, url);
    // Artifacts into IndexedDB too (artifactDirectory), then 3 steps and a save.
    const first = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden();
      await wt.artifacts.generateArtifacts(g.model, { ...g.options, artifactDirectory: 'idb://mlp/' });
      const state = await wt.CheckpointState.loadCheckpoint('idb://mlp/checkpoint');
      const module = await wt.Module.create('idb://mlp/training_model.onnx', state, 'idb://mlp/eval_model.onnx');
      const optimizer = await wt.Optimizer.create('idb://mlp/optimizer_model.onnx', module);
      const losses = t.trainSteps({ module, optimizer }, g.steps.slice(0, 3));
      state.properties.set('steps_done', 3);
      await wt.CheckpointState.saveCheckpoint(state, 'idb://mlp/trained', { includeOptimizerState: true });
      return { losses, entries: (await wt.idb.list('mlp/')).map((e) => e.name) };
    });
    assert.deepEqual(first.entries, ['mlp/checkpoint', 'mlp/eval_model.onnx', 'mlp/optimizer_model.onnx', 'mlp/trained', 'mlp/training_model.onnx']);
    await page.reload();
    await openPage(ctx, url, page);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      t.status('resumed after reload');
      const g = await t.golden();
      const state = await wt.CheckpointState.loadCheckpoint('idb://mlp/trained');
      const done = state.properties.get('steps_done');
      const module = await wt.Module.create('idb://mlp/training_model.onnx', state, 'idb://mlp/eval_model.onnx');
      const optimizer = await wt.Optimizer.create('idb://mlp/optimizer_model.onnx', module);
      const losses = t.trainSteps({ module, optimizer }, g.steps.slice(done));
      // The same 5 steps without a reload, from the stored initial checkpoint.
      const ref = await t.session({
        checkpoint: await wt.idb.load('mlp/checkpoint'),
        trainingModel: await wt.idb.load('mlp/training_model.onnx'),
        evalModel: await wt.idb.load('mlp/eval_model.onnx'),
        optimizerModel: await wt.idb.load('mlp/optimizer_model.onnx'),
      });
      const refLosses = t.trainSteps(ref, g.steps);
      const diff = t.bitDiff(t.params(state), t.params(ref.state));
      const golden = t.closeDiff(t.params(state), await g.expected(g.steps.length - 1), g.c.tolerance.params);
      t.log(`resumed at step ${done}; losses after reload: ${losses.map((x) => x.toFixed(5)).join(', ')}`);
      t.log(`vs. uninterrupted run: ${diff ?? 'bit-identical parameters'}; vs. PyTorch golden: ${golden ?? 'within tolerance'}`);
      t.status(diff || golden ? 'FAILED' : 'passed: resumed after reload');
      return { done, losses, refLosses, diff, golden };
    });
    assert.equal(r.done, 3);
    assert.equal(r.diff, null);
    assert.equal(r.golden, null);
    assert.deepEqual(r.losses, r.refLosses.slice(3));
    assert.deepEqual(first.losses, r.refLosses.slice(0, 3));
    await screenshot(page, 'idb-reload-resume');
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});
