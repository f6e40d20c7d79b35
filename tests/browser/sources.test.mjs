// Model and checkpoint sources in Chromium (js/bytes.js, as in tests/js/sources.test.mjs for
// Node): a File (as from <input type="file">), a Blob and a Response train in the page, Files
// and Blobs in the worker (a Response cannot cross to it: a clear error); relative URLs resolve
// against the page; a wrong URL that the server answers with an HTML page, a 404 and a bogus
// object get their errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser, onTestPage } from './harness.mjs';

const env = startBrowser();

test('Files, Blobs and Responses train in the page and in the worker; wrong sources get clear errors', () =>
  onTestPage(env, async (page, ctx) => {
    const { server } = env;
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden();
      const file = new File([g.model], 'model.onnx', { type: 'application/octet-stream' });
      // Page: artifacts from a File, the checkpoint from a Blob, the models from Responses.
      const art = await wt.artifacts.generateArtifacts(file, g.options);
      const state = await wt.CheckpointState.loadCheckpoint(new Blob([art.checkpoint]));
      const module = await wt.Module.create(new Response(art.trainingModel), state, new Response(art.evalModel));
      const optimizer = await wt.Optimizer.create(new File([art.optimizerModel], 'optimizer_model.onnx'), module);
      const page = t.trainSteps({ module, optimizer }, g.steps.slice(0, 2));
      // Worker: the File crosses to it.
      const w = await wt.worker();
      const wart = await w.artifacts.generateArtifacts(file, g.options);
      const wstate = await w.CheckpointState.loadCheckpoint(new Blob([wart.checkpoint]));
      const wmodule = await w.Module.create(new Blob([wart.trainingModel]), wstate);
      const woptimizer = await w.Optimizer.create(new File([wart.optimizerModel], 'o.onnx'), wmodule);
      const worker = [];
      for (const b of g.steps.slice(0, 2)) {
        worker.push((await wmodule.runAll(...b))[0].data[0]);
        await woptimizer.step();
        await wmodule.lazyResetGrad();
      }
      const error = async (p) => p.then(() => 'resolved', (e) => `${e.name}: ${e.message}`);
      const errors = {
        html: await error(wt.InferenceSession.create('/tests/browser/pages/index.html')),
        workerHtml: await error(w.InferenceSession.create('index.html')), // relative to the page, not the worker script
        missing: await error(wt.InferenceSession.create('/tests/no-such-model.onnx')),
        bogus: await error(wt.InferenceSession.create({ model: 'x' })),
        workerResponse: await error((async () => w.InferenceSession.create(new Response(g.model)))()),
      };
      w.terminate();
      t.status('passed: sources');
      return { page, worker, errors, base: document.baseURI };
    });
    assert.equal(r.page.length, 2);
    assert.deepEqual(r.worker, r.page, 'the worker trained differently from the page');
    for (const l of r.page) assert.ok(Number.isFinite(l) && l > 0, `loss ${l}`);
    const html = `${server.url}/tests/browser/pages/index.html`;
    assert.equal(r.errors.html, r.errors.workerHtml, 'page and worker disagree');
    assert.match(r.errors.html, new RegExp(`^WebtrainError: '${html}' is an HTML page, not an ONNX model or checkpoint .*: check the URL \\(HTTP status 200 from ${html}\\)$`));
    assert.equal(r.errors.missing, `WebtrainError: cannot fetch '${server.url}/tests/no-such-model.onnx': HTTP 404 Not Found`);
    assert.equal(r.errors.bogus, 'TypeError: expected a path, URL, Uint8Array, ArrayBuffer, Blob, File, Response or idb:// name; got a plain object');
    assert.equal(r.errors.workerResponse, 'WebtrainError: a Response cannot be sent to the webtrain worker: pass its bytes (await res.arrayBuffer()) or its URL');
    assert.deepEqual(ctx.offsite, []);
  }));
