// The browser entry (web/index.js) from a plain <script type="module">: the .wasm is found next
// to dist/webtrain-core.mjs by default, init({ wasmUrl }) overrides it (page and worker), a
// .wasm that cannot be fetched, a page served where the .wasm or the worker script should be (a
// server's fallback for unknown paths) and an engine without WebAssembly SIMD give clear errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, guard, openPage, screenshot } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await serve({
    aliases: { '/elsewhere/core.wasm': 'dist/webtrain-core.wasm', '/fallback/core.wasm': 'tests/browser/pages/index.html', '/fallback/worker.js': 'tests/browser/pages/index.html' },
  });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const wasmRequests = () => server.requests.filter((p) => p.endsWith('.wasm'));

test('default: the .wasm next to the module; SIMD detected', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    server.requests.length = 0;
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const core = await wt.init();
      const simd = wt.simdSupported();
      const session = await wt.InferenceSession.create((await t.golden()).model);
      t.log(`plain <script type="module">: core ${core.simdName()}, SIMD ${simd}, model inputs ${session.inputNames}`);
      t.status('passed: default .wasm location');
      return { simd, name: core.simdName(), inputs: session.inputNames };
    });
    assert.equal(r.simd, true);
    assert.equal(r.name, 'wasm-relaxed-simd'); // Chromium runs relaxed SIMD: the FMA .wasm beside the SIMD128 one
    assert.deepEqual(r.inputs, ['input']);
    assert.deepEqual(wasmRequests(), ['/dist/webtrain-core-fma.wasm']);
    await screenshot(page, 'entry-default');
    assert.deepEqual(ctx.offsite, []);
  } finally {
    await ctx.close();
  }
});

test('init({ wasmUrl }) overrides the location, in the page and in a worker', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    server.requests.length = 0;
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const core = await wt.init({ wasmUrl: '/elsewhere/core.wasm' });
      const w = await wt.worker({ wasmUrl: '/elsewhere/core.wasm' });
      const simd = await w.simdName();
      w.terminate();
      t.log(`wasmUrl override: page ${core.simdName()}, worker ${simd}`);
      t.status('passed: wasmUrl override');
      return simd;
    });
    assert.equal(r, 'wasm-simd128');
    assert.deepEqual(wasmRequests(), ['/elsewhere/core.wasm', '/elsewhere/core.wasm']);
    await screenshot(page, 'entry-wasm-url');
  } finally {
    await ctx.close();
  }
});

test('a .wasm that cannot be fetched: a clear error, and a later init can succeed', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      let err = null;
      try {
        await wt.init({ wasmUrl: '/nowhere/core.wasm' });
      } catch (e) {
        err = `${e.name}: ${e.message}`;
      }
      const core = await wt.init();
      t.log(`missing .wasm: ${err}`);
      t.status('passed: missing .wasm reported');
      return { err, ok: core.simdName() };
    });
    assert.match(r.err, /^WebtrainError: cannot load webtrain's WebAssembly core from http:\/\/127\.0\.0\.1:\d+\/nowhere\/core\.wasm: HTTP 404 Not Found \(init\(\{ wasmUrl \}\)/);
    assert.equal(r.ok, 'wasm-relaxed-simd');
    await screenshot(page, 'entry-missing-wasm');
  } finally {
    await ctx.close();
  }
});

test('a page where the .wasm or the worker should be: errors naming wasmUrl and workerUrl', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const error = (p) => p.then(() => 'no error', (e) => `${e.name}: ${e.message}`);
      const wasm = await error(wt.init({ wasmUrl: '/fallback/core.wasm' }));
      const workerWasm = await error(wt.worker({ wasmUrl: '/fallback/core.wasm' }));
      const worker = await error(wt.worker({ workerUrl: '/fallback/worker.js' }));
      t.log(`a page for the .wasm: ${wasm}\nin a worker: ${workerWasm}\na page for the worker: ${worker}`);
      t.status('passed: a page served for the .wasm and the worker reported');
      return { wasm, workerWasm, worker };
    });
    const page404 = ": what is served there is not WebAssembly \\(content-type 'text/html; charset=utf-8': a page, such as a server's answer to an unknown path\\)";
    const at = (path) => `http://127\\.0\\.0\\.1:\\d+/fallback/${path}`;
    assert.match(r.wasm, new RegExp(`^WebtrainError: cannot load webtrain's WebAssembly core from ${at('core\\.wasm')}${page404} \\(init\\(\\{ wasmUrl \\}\\) tells webtrain where the \\.wasm is served\\)$`));
    assert.match(r.workerWasm, new RegExp(`^WebtrainError: cannot load webtrain's WebAssembly core from ${at('core\\.wasm')}${page404} \\(worker\\(\\{ wasmUrl \\}\\) tells webtrain where the \\.wasm is served\\)$`));
    assert.match(r.worker, new RegExp(`^WebtrainError: cannot start webtrain's worker from ${at('worker\\.js')}: it is served as 'text/html; charset=utf-8', not as JavaScript \\(worker\\(\\{ workerUrl \\}\\) tells webtrain where web/worker\\.js, bundled as an entry point of its own, is served\\)$`));
    await screenshot(page, 'entry-fallback-page');
  } finally {
    await ctx.close();
  }
});

test('no WebAssembly SIMD: a clear error before loading the core', async () => {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    // An engine without SIMD rejects SIMD modules in validation: emulate that.
    await ctx.addInitScript(() => {
      const validate = WebAssembly.validate;
      WebAssembly.validate = (bytes) => (new Uint8Array(bytes).includes(0xfd) ? false : validate(bytes));
    });
    server.requests.length = 0;
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      let err = null;
      try {
        await wt.init();
      } catch (e) {
        err = `${e.name}: ${e.message}`;
      }
      t.log(`without SIMD: ${err}`);
      t.status('passed: missing SIMD reported');
      return { err, simd: wt.simdSupported() };
    });
    assert.equal(r.simd, false);
    assert.match(r.err, /^WebtrainError: this browser does not support WebAssembly SIMD/);
    assert.deepEqual(wasmRequests(), [], 'the core was fetched although SIMD is missing');
    await screenshot(page, 'entry-no-simd');
  } finally {
    await ctx.close();
  }
});
