// Threads in Chromium: a cross-origin-isolated page (the test server sends
// COOP/COEP) loads the threaded build (dist/mt/: pthread workers on a SharedArrayBuffer
// Memory); a page served without those headers loads the single-threaded build with 1 thread,
// no error. Both train the golden MLP (PyTorch's numbers within the case's tolerances) to the
// same bits, on the main thread and inside webtrain.worker() (which passes `threads` through).
// runtimeInfo().threads is what the core reports (_wt_get_threads): > 1 once the C side's
// thread pool exports it, 1 before (the threaded build then runs its kernels on one thread).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, guard, openPage, screenshot } from './harness.mjs';

// Chromium runs WebAssembly Relaxed SIMD: init()'s default simd: 'auto' loads the relaxed-SIMD
// (FMA) .wasm of each build (tests/browser/fma.test.mjs checks the choice).
const CHROMIUM_SIMD = 'wasm-relaxed-simd';

let isolated;
let plain;
let browser;

before(async () => {
  isolated = await serve({ isolated: true });
  plain = await serve();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await isolated?.close();
  await plain?.close();
});

/** Trains the golden MLP (its 5 steps, twice over) on a page of `server`; returns what the page saw, with the bits as hex. */
async function train(server, { inWorker = false, threads } = {}, shot = null) {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    const r = await page.evaluate(async ({ inWorker, threads }) => {
      const { webtrain: wt, t } = window;
      const g = await t.golden();
      const batches = [...g.steps, ...g.steps];
      const opts = threads === undefined ? {} : { threads };
      const { info, losses, params } = await t.trainGolden(g, batches, opts, inWorker);
      // After the first 5 steps the parameters are PyTorch's (within tolerance): checked on a fresh run of 5.
      const again = inWorker ? null : await (async () => {
        const art = await wt.artifacts.generateArtifacts(g.model, g.options);
        const s = await t.session(art);
        t.trainSteps(s, g.steps);
        return t.closeDiff(t.params(s.state), await g.expected(g.steps.length - 1), g.c.tolerance.params);
      })();
      t.log(`runtimeInfo: ${JSON.stringify(info)}; crossOriginIsolated ${globalThis.crossOriginIsolated}`);
      t.log(`losses: ${losses.map((l) => l.toFixed(6)).join(' ')}`);
      t.status(`trained with ${info.threads} thread(s), ${info.build} build`);
      return {
        info,
        pageIsolated: globalThis.crossOriginIsolated === true,
        losses: t.hex(Float32Array.from(losses)),
        finite: losses.every(Number.isFinite),
        params: Object.keys(params).sort().map((n) => `${n}:${t.hex(params[n])}`).join('|'),
        golden: again,
      };
    }, { inWorker, threads });
    if (shot) await screenshot(page, shot);
    assert.deepEqual(ctx.offsite, []);
    return r;
  } finally {
    await ctx.close();
  }
}

let reference; // the non-isolated page's main-thread run: the bits every other run must match

test('a page served without COOP/COEP loads the single-threaded build (1 thread) and trains the golden MLP', async () => {
  const r = await train(plain, {}, 'threads-not-isolated');
  assert.equal(r.pageIsolated, false);
  assert.deepEqual(r.info, { threads: 1, simd: CHROMIUM_SIMD, crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.ok(r.finite, 'finite losses');
  assert.equal(r.golden, null, `PyTorch's parameters after 5 steps: ${r.golden}`);
  reference = r;
});

test('a cross-origin-isolated page loads the threaded build and trains the golden MLP to the same bits', async () => {
  const r = await train(isolated, {}, 'threads-isolated');
  assert.equal(r.pageIsolated, true);
  assert.equal(r.info.build, 'threaded');
  assert.equal(r.info.crossOriginIsolated, true);
  assert.equal(r.info.simd, CHROMIUM_SIMD);
  assert.ok(r.info.threads >= 1 && r.info.threads <= 8, `threads ${r.info.threads}`);
  assert.equal(r.golden, null, `PyTorch's parameters after 5 steps: ${r.golden}`);
  assert.equal(r.losses, reference.losses, 'losses: the same bits as the single-threaded build');
  assert.equal(r.params, reference.params, 'parameters: the same bits as the single-threaded build');
});

test('isolated page, init({ threads: 2 }): the threaded build, 2 threads where the core reports its pool, same bits', async () => {
  const r = await train(isolated, { threads: 2 });
  assert.equal(r.info.build, 'threaded');
  // The C side's pool (wt_set_threads/wt_get_threads) reports 2; before it lands the core reports 1.
  assert.ok(r.info.threads === 2 || r.info.threads === 1, `threads ${r.info.threads}`);
  assert.equal(r.losses, reference.losses);
  assert.equal(r.params, reference.params);
});

test('isolated page, init({ threads: 1 }): the single-threaded build', async () => {
  const r = await train(isolated, { threads: 1 });
  assert.deepEqual(r.info, { threads: 1, simd: CHROMIUM_SIMD, crossOriginIsolated: true, build: 'single', backend: 'wasm', adapter: null });
  assert.equal(r.losses, reference.losses);
});

test('webtrain.worker() in an isolated page: the threaded build in the worker, same bits; not isolated: single', async () => {
  const iso = await train(isolated, { inWorker: true, threads: 2 });
  assert.equal(iso.info.build, 'threaded');
  assert.equal(iso.info.crossOriginIsolated, true);
  assert.equal(iso.losses, reference.losses);
  assert.equal(iso.params, reference.params);
  const not = await train(plain, { inWorker: true });
  assert.deepEqual(not.info, { threads: 1, simd: CHROMIUM_SIMD, crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.equal(not.losses, reference.losses);
  assert.equal(not.params, reference.params);
});

test('an isolated page whose thread worker script is missing loads the single-threaded build (no hang, no error), same bits', async () => {
  const broken = await serve({ isolated: true, aliases: { '/dist/mt/webtrain-core-mt.worker.js': 'dist/mt/no-such-worker.js' } });
  try {
    const r = await train(broken);
    assert.equal(r.pageIsolated, true);
    assert.deepEqual(r.info, { threads: 1, simd: CHROMIUM_SIMD, crossOriginIsolated: true, build: 'single', backend: 'wasm', adapter: null });
    assert.equal(r.losses, reference.losses);
    assert.ok(broken.requests.includes('/dist/mt/webtrain-core-mt.worker.js'), 'the threaded build was not tried');
  } finally {
    await broken.close();
  }
});

test('worker({ threadedUrl }) where nothing is served: an error naming worker({ threadedUrl }) in an isolated page; ignored in a page that is not', async () => {
  for (const [server, isIsolated] of [[isolated, true], [plain, false]]) {
    const ctx = await guard(await browser.newContext(), server.url);
    try {
      const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
      const r = await page.evaluate(async () => {
        try {
          const w = await window.webtrain.worker({ threads: 2, threadedUrl: '/nowhere/webtrain-core-mt.mjs' });
          const info = await w.runtimeInfo();
          w.terminate();
          return { info };
        } catch (e) {
          return { error: `${e.name}: ${e.message}`, code: e.code };
        }
      });
      if (isIsolated) {
        assert.match(r.error ?? '', /^WebtrainError: cannot load webtrain's WebAssembly core from .*\/nowhere\/webtrain-core-mt\.wasm: HTTP 404/);
        assert.match(r.error, /\(worker\(\{ threadedUrl \}\) tells webtrain where webtrain-core-mt\.mjs is served/);
        assert.equal(r.code, 'ERR_WEBTRAIN_WASM');
      } else {
        assert.equal(r.error, undefined);
        assert.equal(r.info.build, 'single');
      }
    } finally {
      await ctx.close();
    }
  }
});
