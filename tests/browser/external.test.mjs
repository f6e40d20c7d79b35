// Models saved with external data in Chromium: from a URL, the side file is fetched relative to
// the model's URL (also from a subfolder, and in the worker); from Files/Blobs, through the
// externalData option (in the page and in the worker); generateArtifacts + training from a URL
// equal the model with its weights inside; a missing side file is an error naming the tensor,
// the file and the option. Test models: tests/data/external/make.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser, onTestPage } from './harness.mjs';

const env = startBrowser();

test('external data from URLs (fetched relative) and from Blobs via externalData, in the page and the worker', () =>
  onTestPage(env, async (page, ctx) => {
    const { server } = env;
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const base = '/tests/data/external/';
      const X = new wt.Tensor('float32', Float32Array.from({ length: 8 }, (_, i) => Math.sin(i)), [2, 4]);
      const run = async (create, ...args) => {
        const s = await create(...args);
        const out = Array.from((await s.run({ X })).logits.data);
        await s.release();
        return out;
      };
      const page = (...args) => run(wt.InferenceSession.create, ...args);
      const bytes = async (name) => new Uint8Array(await (await fetch(base + name)).arrayBuffer());
      const w = await wt.worker();
      const inWorker = (...args) => run(w.InferenceSession.create, ...args);
      const file = new File([await bytes('mlp.onnx')], 'mlp.onnx');
      const data = new File([await bytes('mlp.onnx.data')], 'mlp.onnx.data');
      const outs = {
        embedded: await page(`${base}mlp-embedded.onnx`),
        url: await page(`${base}mlp.onnx`),
        relativeUrl: await page('../../data/external/mlp.onnx'), // relative to the page
        subfolder: await page(new URL(`${base}sub.onnx`, location.href)),
        blobs: await page(file, { externalData: [{ path: 'mlp.onnx.data', data }] }),
        bytesAndUrl: await page(await bytes('mlp.onnx'), { externalData: [{ path: 'mlp.onnx.data', data: `${base}mlp.onnx.data` }] }),
        workerUrl: await inWorker(`${base}mlp.onnx`),
        workerBlobs: await inWorker(file, { externalData: [{ path: 'mlp.onnx.data', data }] }),
      };
      // training from a URL: the same losses as from the model with its weights inside
      const train = async (model) => {
        const art = await wt.artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
        const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
        const module = await wt.Module.create(art.trainingModel, state, art.evalModel);
        const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
        const labels = new wt.Tensor('int64', BigInt64Array.from([0n, 2n]), [2]);
        const losses = [];
        for (let i = 0; i < 3; i++) {
          losses.push(module.run(X, labels).data[0]);
          optimizer.step();
          module.lazyResetGrad();
        }
        return losses;
      };
      const losses = { embedded: await train(`${base}mlp-embedded.onnx`), url: await train(`${base}mlp.onnx`) };
      const error = async (p) => p.then(() => 'resolved', (e) => `${e.name}: ${e.message}`);
      const errors = {
        missing: await error(wt.InferenceSession.create(`${base}missing.onnx`)),
        blobNoData: await error(wt.InferenceSession.create(file)),
        workerMissing: await error(w.InferenceSession.create(`${base}missing.onnx`)),
        badType: await error(wt.InferenceSession.create(file, { externalData: [{ path: 'mlp.onnx.data', data: 7 }] })),
      };
      w.terminate();
      t.status('passed: external data');
      return { outs, losses, errors };
    });
    for (const [k, v] of Object.entries(r.outs)) assert.deepEqual(v, r.outs.embedded, k);
    assert.equal(r.outs.embedded.length, 6);
    assert.deepEqual(r.losses.url, r.losses.embedded);
    const missingUrl = `${server.url}/tests/data/external/missing.onnx.data`;
    assert.equal(r.errors.missing, `WebtrainError: InferenceSession.create: tensor 'W1' is stored in external file 'missing.onnx.data': cannot fetch external data file '${missingUrl}': HTTP 404 Not Found; fetch it yourself and pass it with externalData: [{ path: 'missing.onnx.data', data }]`);
    assert.equal(r.errors.workerMissing, r.errors.missing);
    assert.match(r.errors.blobNoData, /^WebtrainError: cannot load model: tensor 'W1': external file 'mlp\.onnx\.data' is not available: the model was given as bytes .*pass it with externalData: \[\{ path: 'mlp\.onnx\.data', data \}\]$/);
    assert.match(r.errors.badType, /^TypeError: InferenceSession.create: externalData\[0\] \('mlp\.onnx\.data'\)\.data: expected a Uint8Array/);
    // the side files were fetched from beside the models
    for (const f of ['/tests/data/external/mlp.onnx.data', '/tests/data/external/weights/sub.data']) assert.ok(server.requests.includes(f), `${f} not requested`);
    assert.deepEqual(ctx.offsite, []);
  }));
