// Weights held once in Chromium: a model whose frozen weights are in a side file,
// fine-tuned from its URL with only the last layer trained — the artifacts refer to the side
// file (a few hundred bytes), Module.create streams it from the server into the heap with
// onProgress, in the page and through worker() (the artifacts' bytes sent back to the worker
// find it by content) — trains to the same losses as the model with its weights inside.
// Test models: tests/data/external/make.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser, onTestPage } from './harness.mjs';

const env = startBrowser();

test('a frozen base by reference from a URL: page and worker train like the embedded model', () =>
  onTestPage(env, async (page) => {
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const base = '/tests/data/external/';
      const X = new wt.Tensor('float32', Float32Array.from({ length: 8 }, (_, i) => Math.sin(i)), [2, 4]);
      const labels = new wt.Tensor('int64', BigInt64Array.from([0n, 2n]), [2]);
      const options = { requiresGrad: ['W2', 'B2'], loss: 'CrossEntropyLoss', optimizer: 'AdamW' };
      const train = async (api, model, progress) => {
        const art = await api.artifacts.generateArtifacts(model, options);
        const losses = await t.trainArtifacts(api, art, X, labels, { onProgress: progress && ((p) => progress.push(p)) });
        return { losses, sizes: [art.trainingModel.byteLength, art.evalModel.byteLength] };
      };
      const progress = [];
      const w = await wt.worker();
      const out = {
        embedded: await train(wt, `${base}mlp-embedded.onnx`),
        url: await train(wt, `${base}mlp.onnx`, progress),
        worker: await train(w, `${base}mlp.onnx`),
      };
      w.terminate();
      t.status('passed: weights once');
      return { out, progress };
    });
    assert.deepEqual(r.out.url.losses, r.out.embedded.losses);
    assert.deepEqual(r.out.worker.losses, r.out.embedded.losses);
    // W1 (4 x 8 floats) and B1 stay in mlp.onnx.data: both models hold references (~50 bytes each) instead
    assert.ok(r.out.url.sizes.every((n, i) => n < r.out.embedded.sizes[i]), JSON.stringify(r.out));
    // the frozen W1 and B1 (128 + 32 bytes) streamed once, for both models
    assert.deepEqual(r.progress.at(-1), { loaded: 160, total: 160 });
  }));

test('weights inside the .onnx (keepExternalData: true) from a URL: page and worker train like the embedded artifacts; onProgress crosses worker()', () =>
  onTestPage(env, async (page) => {
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const url = '/tests/data/external/wide.onnx';
      const X = new wt.Tensor('float32', Float32Array.from({ length: 128 }, (_, i) => Math.sin(i)), [2, 64]);
      const labels = new wt.Tensor('int64', BigInt64Array.from([0n, 2n]), [2]);
      const train = async (api, options, progress) => {
        const art = await api.artifacts.generateArtifacts(url, { requiresGrad: ['W2', 'B2'], loss: 'CrossEntropyLoss', optimizer: 'AdamW', ...options });
        const losses = await t.trainArtifacts(api, art, X, labels, { onProgress: progress && ((p) => progress.push(p)) });
        return { losses, size: art.trainingModel.byteLength };
      };
      const w = await wt.worker();
      const pageProgress = [];
      const workerProgress = [];
      const out = {
        embedded: await train(wt, { keepExternalData: false }),
        page: await train(wt, { keepExternalData: true }, pageProgress),
        worker: await train(w, { keepExternalData: true }, workerProgress),
      };
      w.terminate();
      t.status('passed: weights inside');
      return { out, pageProgress, workerProgress };
    });
    assert.deepEqual(r.out.page.losses, r.out.embedded.losses);
    assert.deepEqual(r.out.worker.losses, r.out.embedded.losses);
    // W1 (64 x 32 floats, 8 KiB) stays in wide.onnx: the training model refers to it there
    assert.ok(r.out.page.size < r.out.embedded.size - 8000, JSON.stringify(r.out));
    // streamed from the URL once, for both models; the worker's progress arrives on the page
    assert.deepEqual(r.pageProgress.at(-1), { loaded: 8192, total: 8192 });
    assert.deepEqual(r.workerProgress.at(-1), { loaded: 8192, total: 8192 });
  }));
