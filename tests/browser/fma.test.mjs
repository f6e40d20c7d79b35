// The relaxed-SIMD (fused multiply-add) builds in Chromium: Chromium validates the
// relaxed-SIMD probe, so a page loads dist/webtrain-core-fma.wasm (isolated: the threaded
// dist/mt/webtrain-core-mt-fma.wasm) and trains the golden MLP to PyTorch's numbers within the
// case's tolerances, to the same bits single-threaded and threaded; init({ simd: 'simd128' })
// and worker({ simd }) load the SIMD128 .wasm (other bits, same tolerances); a server without
// the FMA .wasm gives the SIMD128 build, no error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, guard, openPage, screenshot } from './harness.mjs';

let plain;
let isolated;
let noFma;
let browser;

before(async () => {
  plain = await serve();
  isolated = await serve({ isolated: true });
  noFma = await serve({ aliases: { '/dist/webtrain-core-fma.wasm': 'dist/no-such.wasm' } });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  for (const s of [plain, isolated, noFma]) await s?.close();
});

/** Trains the golden MLP's 5 steps on a page of `server` (init(opts), or in webtrain.worker(opts)); returns what the page saw. */
async function train(server, opts = {}, { inWorker = false, shot = null } = {}) {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    server.requests.length = 0;
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async ({ opts, inWorker }) => {
      const { t } = window;
      const g = await t.golden();
      const { info, losses, params } = await t.trainGolden(g, g.steps, opts, inWorker);
      const golden = t.closeDiff(params, await g.expected(g.steps.length - 1), g.c.tolerance.params);
      t.log(`runtimeInfo: ${JSON.stringify(info)}; losses ${losses.map((l) => l.toFixed(6)).join(' ')}`);
      t.status(`trained on the ${info.simd} ${info.build} build`);
      return { info, golden, finite: losses.every(Number.isFinite), losses: t.hex(Float32Array.from(losses)), params: Object.keys(params).sort().map((n) => `${n}:${t.hex(params[n])}`).join('|') };
    }, { opts, inWorker });
    if (shot) await screenshot(page, shot);
    assert.deepEqual(ctx.offsite, []);
    return { ...r, wasm: server.requests.filter((p) => p.endsWith('.wasm')) };
  } finally {
    await ctx.close();
  }
}

let fma; // the plain page's default run: the FMA build's bits

test('Chromium: the page loads the relaxed-SIMD build by default and trains the golden MLP to PyTorch\'s numbers', async () => {
  fma = await train(plain, {}, { shot: 'fma-default' });
  assert.deepEqual(fma.info, { threads: 1, simd: 'wasm-relaxed-simd', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.deepEqual(fma.wasm, ['/dist/webtrain-core-fma.wasm']);
  assert.ok(fma.finite);
  assert.equal(fma.golden, null, `PyTorch's parameters after 5 steps: ${fma.golden}`);
});

test('init({ simd: "simd128" }) loads the SIMD128 build: other bits, the same tolerances', async () => {
  const r = await train(plain, { simd: 'simd128' });
  assert.deepEqual(r.info, { threads: 1, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.deepEqual(r.wasm, ['/dist/webtrain-core.wasm']);
  assert.equal(r.golden, null, `PyTorch's parameters after 5 steps: ${r.golden}`);
  assert.notEqual(r.params, fma.params, 'the SIMD128 build gave the FMA build\'s bits: the FMA build is not fused');
});

test('a cross-origin-isolated page: the threaded relaxed-SIMD build, the same bits as single-threaded', async () => {
  const r = await train(isolated, { threads: 2 }, { shot: 'fma-threaded' });
  assert.equal(r.info.build, 'threaded');
  assert.equal(r.info.simd, 'wasm-relaxed-simd');
  assert.deepEqual(r.wasm, ['/dist/mt/webtrain-core-mt-fma.wasm']);
  assert.equal(r.losses, fma.losses);
  assert.equal(r.params, fma.params);
});

test('webtrain.worker(): the relaxed-SIMD build by default, SIMD128 with { simd: "simd128" }', async () => {
  const w = await train(plain, {}, { inWorker: true });
  assert.equal(w.info.simd, 'wasm-relaxed-simd');
  assert.equal(w.params, fma.params);
  const w128 = await train(plain, { simd: 'simd128' }, { inWorker: true });
  assert.equal(w128.info.simd, 'wasm-simd128');
  assert.equal(w128.golden, null);
});

test('a server without webtrain-core-fma.wasm: the SIMD128 build, no error', async () => {
  const r = await train(noFma, {});
  assert.deepEqual(r.info, { threads: 1, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.deepEqual(r.wasm, ['/dist/webtrain-core-fma.wasm', '/dist/webtrain-core.wasm']);
  assert.equal(r.golden, null);
});
