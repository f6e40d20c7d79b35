// The same behaviour and the same errors on both sides of webtrain.worker(), in real Chromium:
// one scenario runs on the page's API and on a worker's, and every outcome matches: unknown
// option keys (TypeError, the nearest key named; fit's callbacks, which stay on the page, too),
// optimizer.step() without gradients and on a released module, predict's outputs, a fetch
// failure's `status`, calls on a released object ("the module was released", not an object id),
// a second release() doing nothing, isLive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, guard, openPage } from './harness.mjs';

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

test('page and worker: the same results and errors, class, code and status included', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden();
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      const [x, y] = g.steps[0];
      const missing = new URL('/no-such-checkpoint', location.href).href;
      const outcome = async (f) => {
        try {
          const v = await f();
          return { value: v === undefined ? 'undefined' : v };
        } catch (e) {
          return { error: { name: e.name, isTypeError: e instanceof TypeError, isWebtrainError: e instanceof wt.WebtrainError, message: e.message, code: e.code, status: e.status } };
        }
      };
      const live = async (o) => (typeof o.isLive === 'function' ? o.isLive() : o.isLive);
      async function scenario(api) {
        const out = {};
        out.generateTypo = await outcome(() => api.artifacts.generateArtifacts(g.model, { ...g.options, requiresgrad: ['fc1.weight'] }));
        out.emptyRequiresGrad = await outcome(() => api.artifacts.generateArtifacts(g.model, { ...g.options, requiresGrad: [] }));
        out.loadTypo = await outcome(() => api.CheckpointState.loadCheckpoint(art.checkpoint, { externaldata: 'x' }));
        out.fetchStatus = await outcome(() => api.CheckpointState.loadCheckpoint(missing));
        out.inspectModel = await api.inspect(g.model);
        out.inspectCheckpoint = await api.inspect(art.checkpoint);
        out.inspectTypo = await outcome(() => api.inspect(g.model, { externaldata: [] }));
        const state = await api.CheckpointState.loadCheckpoint(art.checkpoint);
        out.createTypo = await outcome(() => api.Module.create(art.trainingModel, state, art.evalModel, { onprogress: () => {} }));
        const module = await api.Module.create(art.trainingModel, state, art.evalModel);
        const optimizer = await api.Optimizer.create(art.optimizerModel, module);
        out.stepBeforeRun = await outcome(() => optimizer.step());
        await module.run(x, y);
        out.step = await outcome(() => optimizer.step());
        out.stepTwice = await outcome(() => optimizer.step());
        const p = await module.predict({ input: g.steps[1][0] });
        out.predict = { names: Object.keys(p), dims: p.output.dims, data: Array.from(p.output.data) };
        out.fitTypo = await outcome(() => api.fit(module, optimizer, { x, y, batchSize: 8, epoch: 2 }));
        out.fitCallbackTypo = await outcome(() => api.fit(module, optimizer, { x, y, batchSize: 8, callbacks: { onEpochEnds: () => {} } }));
        out.saveTypo = await outcome(() => api.CheckpointState.saveCheckpoint(state, null, { includeOptimizer: true }));
        await module.run(x, y);
        out.liveBefore = await live(module);
        out.release = await outcome(() => module.release());
        out.liveAfter = await live(module);
        out.runReleased = await outcome(() => module.run(x, y));
        out.predictReleased = await outcome(() => module.predict({ input: x }));
        out.stepReleasedModule = await outcome(() => optimizer.step());
        out.secondRelease = await outcome(() => module.release());
        await optimizer.release();
        await state.release();
        out.stateReleased = await outcome(() => state.toBytes());
        return out;
      }
      const onPage = await scenario(wt);
      const w = await wt.worker();
      try {
        const inWorker = await scenario(w);
        return { onPage, inWorker, workerTypo: await outcome(() => wt.worker({ wasmURL: 'x' })) };
      } finally {
        w.terminate();
      }
    });
    assert.deepEqual(r.inWorker, r.onPage);
    const { onPage: p } = r;
    assert.deepEqual(p.generateTypo.error, { name: 'TypeError', isTypeError: true, isWebtrainError: false, message: "unknown option 'requiresgrad' for generateArtifacts; did you mean 'requiresGrad'?", code: undefined, status: undefined });
    assert.match(p.emptyRequiresGrad.error.message, /requiresGrad is empty, so nothing would be trained/);
    assert.equal(p.inspectModel.kind, 'model');
    assert.deepEqual(p.inspectModel.inputs.map((v) => v.name), ['input']);
    assert.equal(p.inspectCheckpoint.kind, 'checkpoint');
    assert.ok(p.inspectCheckpoint.trainableElements > 0);
    assert.equal(p.inspectTypo.error.message, "unknown option 'externaldata' for inspect; did you mean 'externalData'?");
    assert.equal(p.loadTypo.error.message, "unknown option 'externaldata' for loadCheckpoint; did you mean 'externalData'?");
    assert.equal(p.fetchStatus.error.status, 404);
    assert.equal(p.fetchStatus.error.isWebtrainError, true);
    assert.equal(p.createTypo.error.message, "unknown option 'onprogress' for Module.create; did you mean 'onProgress'?");
    assert.match(p.stepBeforeRun.error.message, /^optimizer step: no gradients to apply/);
    assert.equal(p.step.value, 'undefined');
    assert.match(p.stepTwice.error.message, /^optimizer step: no gradients to apply/);
    assert.deepEqual(p.predict.names, ['output']);
    assert.deepEqual(p.predict.dims, [8, 10]);
    assert.equal(p.fitTypo.error.message, "unknown option 'epoch' for fit; did you mean 'epochs'?");
    assert.equal(p.fitCallbackTypo.error.message, "unknown option 'onEpochEnds' for fit's callbacks; did you mean 'onEpochEnd'?");
    assert.equal(p.saveTypo.error.message, "unknown option 'includeOptimizer' for saveCheckpoint; did you mean 'includeOptimizerState'?");
    assert.equal(p.liveBefore, true);
    assert.equal(p.liveAfter, false);
    assert.equal(p.runReleased.error.message, 'the module was released');
    assert.equal(p.predictReleased.error.message, 'the module was released');
    assert.match(p.stepReleasedModule.error.message, /^optimizer step: its module was released/);
    assert.equal(p.secondRelease.value, 'undefined');
    assert.equal(p.stateReleased.error.message, 'the checkpoint state was released');
    assert.equal(r.workerTypo.error.message, "unknown option 'wasmURL' for worker; did you mean 'wasmUrl'?");
  } finally {
    await ctx.close();
  }
});
