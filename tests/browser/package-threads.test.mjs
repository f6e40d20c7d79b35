// The threaded build from an npm install, in a page bundled by Vite (helpers:
// ./package-bundle.mjs). Bundlers emit only the single-threaded .wasm; the threaded build's
// files (dist/mt/: webtrain-core-mt.{mjs,wasm,worker.js}) are copied as they are into the
// app's public folder and found through init({ threadedUrl }) / worker({ threadedUrl }), the
// setup docs/api.md documents. Served with COOP/COEP, the built page and its worker load the
// threaded build; served without, the same build loads the single-threaded one (no error, no
// request for dist/mt/). Both train the golden MLP to the same losses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { installPackage, devDependency, assertTrained } from './package-bundle.mjs';
import { serve, launch, guard, watch, screenshot } from './harness.mjs';

const THREADED_URL = '/webtrain-mt/webtrain-core-mt.mjs';
const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>webtrain threads, bundled by Vite</title></head>
<body><h1>webtrain threads from an npm install, bundled by Vite</h1>
<div>main thread: <span id="status">loading…</span> <code id="info"></code></div>
<div>worker: <span id="worker-status">waiting…</span> <code id="worker-info"></code></div>
<pre id="out"></pre>
<script type="module" src="./main.js"></script></body></html>
`;
const main = `import { artifacts, CheckpointState, init, Module, Optimizer, Tensor, runtimeInfo, worker } from 'webtrain';
const opts = { threads: 2, threadedUrl: ${JSON.stringify(THREADED_URL)} };
const REQUIRES_GRAD = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'];
const bytes = async (name) => new Uint8Array(await (await fetch(name)).arrayBuffer());
const result = { losses: [], workerLosses: [] };
const [x, y] = await Promise.all([bytes('step0__input.bin'), bytes('step0__labels.bin')]);
const input = new Tensor('float32', new Float32Array(x.buffer), [8, 784]);
const labels = new Tensor('int32', new Int32Array(y.buffer), [8]);
try {
  await init(opts);
  result.info = runtimeInfo();
  document.getElementById('info').textContent = JSON.stringify(result.info);
  const art = await artifacts.generateArtifacts(await bytes('model.onnx'), { requiresGrad: REQUIRES_GRAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(0.001);
  module.train();
  for (let step = 0; step < 3; step++) {
    result.losses.push(module.runAll(input, labels)[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  document.getElementById('status').textContent = 'done';
  const w = await worker(opts);
  result.workerInfo = await w.runtimeInfo();
  document.getElementById('worker-info').textContent = JSON.stringify(result.workerInfo);
  const wart = await w.artifacts.generateArtifacts('model.onnx', { requiresGrad: REQUIRES_GRAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const ws = await w.CheckpointState.loadCheckpoint(wart.checkpoint);
  const wm = await w.Module.create(wart.trainingModel, ws, wart.evalModel);
  const wo = await w.Optimizer.create(wart.optimizerModel, wm);
  await wo.setLearningRate(0.001);
  await wm.train();
  for (let step = 0; step < 3; step++) {
    result.workerLosses.push((await wm.runAll(input, labels))[0].data[0]);
    await wo.step();
    await wm.lazyResetGrad();
  }
  w.terminate();
  document.getElementById('worker-status').textContent = 'done';
} catch (err) {
  result.error = \`\${err.name}: \${err.message}\`;
}
document.getElementById('out').textContent = JSON.stringify(result, null, 1);
window.result = result;
`;

let installed;
let outDir;
let browser;

before(async () => {
  installed = await installPackage('vite-threads', { html, main });
  // What docs/api.md tells a bundled app to do: copy the threaded build into the public folder.
  await cp(join(installed.project, 'node_modules/webtrain/dist/mt'), join(installed.project, 'public/webtrain-mt'), { recursive: true });
  const { build } = await devDependency('vite', 'dist/node/index.js');
  await build({ root: installed.project, configFile: false, logLevel: 'error', build: { outDir: 'dist', emptyOutDir: true } });
  outDir = join(installed.project, 'dist');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await installed?.remove();
});

async function open(isolated, name) {
  const server = await serve({ dir: outDir, isolated });
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = watch(await ctx.newPage());
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60_000 });
    const r = await page.evaluate(() => ({ ...window.result, isolated: globalThis.crossOriginIsolated }));
    await screenshot(page, name);
    assert.deepEqual(ctx.offsite, []);
    return { ...r, requests: [...server.requests], log: page.log };
  } finally {
    await ctx.close();
    await server.close();
  }
}

let plainLosses;

test('Vite-built page without COOP/COEP: the single-threaded build in the page and the worker, no request for the threaded files', async () => {
  const r = await open(false, 'package-threads-plain');
  assert.equal(r.error, undefined, `${r.error}\n${r.log.join('\n')}`);
  assert.equal(r.isolated, false);
  assert.equal(r.info.build, 'single');
  assert.equal(r.info.threads, 1);
  assert.equal(r.workerInfo.build, 'single');
  assert.deepEqual(r.requests.filter((p) => p.startsWith('/webtrain-mt/')), []);
  await assertTrained(r.losses, 'main thread');
  assert.deepEqual(r.workerLosses, r.losses);
  plainLosses = r.losses;
});

test('Vite-built page with COOP/COEP and dist/mt/ copied to public/: the threaded build in the page and the worker, same losses', async () => {
  const r = await open(true, 'package-threads-isolated');
  assert.equal(r.error, undefined, `${r.error}\n${r.log.join('\n')}`);
  assert.equal(r.isolated, true);
  assert.equal(r.info.build, 'threaded');
  assert.equal(r.info.crossOriginIsolated, true);
  assert.equal(r.workerInfo.build, 'threaded');
  assert.ok(r.requests.includes('/webtrain-mt/webtrain-core-mt.worker.js'), 'no pthread worker was started');
  await assertTrained(r.losses, 'main thread');
  assert.deepEqual(r.losses, plainLosses, 'the threaded build computed other losses');
  assert.deepEqual(r.workerLosses, plainLosses, 'the worker computed other losses');
});
