#!/usr/bin/env node
// A frozen base saved with external data, fine-tuned from its URL in headless Chromium (docs/performance.md's
// benchmark rows; not part of npm test):
//   node tests/bench/big-chromium.mjs [LAYERS] [WIDTH] [--float16 | --inside] [--batch N] [--steps N] [--keep DIR]
// --inside: the base with its weights inside base.onnx (no side file; make_big_base.py --inside):
// generation streams it once keeping the head's bytes, Module.create streams the frozen weights'
// byte ranges of base.onnx into the heap.
// Default: the 100M-parameter base of big-base.mjs (24 x Linear(2048) + ReLU, a Linear(2048, 10)
// head), float32, batch 16. tests/bench/make_big_base.py writes base.onnx + base.onnx.data into
// DIR (reused when --keep names a folder that has them); a local server (tests/browser/harness.mjs)
// serves them under /big/ beside webtrain; the test page runs the README's flow on the URL:
// generateArtifacts(url, { requiresGrad: head }), loadCheckpoint, Module.create (the side file
// streams into the heap), Optimizer.create, a few train steps and an eval step, on the page's
// main thread (single-threaded build: the page is not cross-origin isolated). Prints one JSON
// line: generation / load seconds, ms per step, the wasm Memory after each phase against the side
// file's bytes, the renderer processes' RSS after each phase and their peak (sampled from /proc
// every 100 ms), and the
// error if the flow failed (e.g. out of memory), with where it failed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { options, rendererRss } from './cli-util.mjs';
import { serve, launch, guard, openPage } from '../browser/harness.mjs';

const args = process.argv.slice(2);
const { flag, bool } = options(args);
const batch = Number(flag('--batch', 16));
const steps = Number(flag('--steps', 5));
const keep = flag('--keep', null);
const half = bool('--float16');
const inside = bool('--inside');
const [layers = 24, width = 2048] = args.map(Number);
const classes = 10;
const MB = 2 ** 20;
const root = fileURLToPath(new URL('../../', import.meta.url));
const log = (s) => console.error(`[big-chromium ${(performance.now() / 1000).toFixed(1)}s] ${s}`);

const dir = keep ?? (await mkdtemp(join(tmpdir(), 'webtrain-bigchromium-')));
let server, browser, sampler;
try {
  const model = join(dir, 'base.onnx');
  if (!(keep && existsSync(model) && (inside || existsSync(`${model}.data`)))) {
    const t0 = performance.now();
    const made = spawnSync('/usr/bin/python3', [join(root, 'tests/bench/make_big_base.py'), model, String(layers), String(width), String(classes), ...(half ? ['--float16'] : inside ? ['--inside'] : [])], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`make_big_base.py failed: ${made.stderr}${made.error ?? ''}`);
    log(`${made.stdout.trim()} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  } else log(`reusing ${model}`);
  // the weights: the side file, or (inside) the initializers' bytes, all float32
  const weightBytes = inside ? 4 * (layers * (width * width + width) + classes * (width + 1)) : (await stat(`${model}.data`)).size;
  server = await serve({ mounts: { '/big/': dir } });
  browser = await launch(['--js-flags=--no-liftoff']);
  const ctx = await guard(await browser.newContext(), server.url);
  const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
  page.setDefaultTimeout(0);
  let peak = 0;
  sampler = setInterval(() => rendererRss().then((r) => { peak = Math.max(peak, r); }), 100);
  const rssAt = {};
  await page.exposeFunction('wtRss', async (phase) => {
    const now = await rendererRss();
    peak = Math.max(peak, now);
    rssAt[phase] = { rssMB: +(now / MB).toFixed(1), peakSoFarMB: +(peak / MB).toFixed(1) };
  });
  const load0 = loadavg()[0];
  const r = await page.evaluate(async ({ batch, steps, width, classes }) => {
    const wt = window.webtrain;
    const MB = 2 ** 20;
    const core = await wt.init();
    const at = {};
    const snap = async (phase) => {
      at[phase] = +(core.heapStats().memory / MB).toFixed(1);
      await window.wtRss(phase);
    };
    const out = { at };
    let phase = 'generateArtifacts';
    try {
      let t = performance.now();
      const art = await wt.artifacts.generateArtifacts('/big/base.onnx', { requiresGrad: ['head.weight', 'head.bias'], loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
      out.genSeconds = +((performance.now() - t) / 1000).toFixed(2);
      out.artifactBytes = Object.fromEntries(Object.entries(art).map(([k, v]) => [k, v?.byteLength ?? 0]));
      await snap('generated');
      phase = 'load';
      t = performance.now();
      const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
      let streamed = 0;
      const module = await wt.Module.create(art.trainingModel, state, art.evalModel, { onProgress: (p) => { streamed = p.loaded; } });
      const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
      out.loadSeconds = +((performance.now() - t) / 1000).toFixed(2);
      out.streamedBytes = streamed;
      await snap('loaded');
      phase = 'train';
      const x = new wt.Tensor('float32', Float32Array.from({ length: batch * width }, (_, i) => Math.sin(i * 0.37)), [batch, width]);
      const y = new wt.Tensor('int64', BigInt64Array.from({ length: batch }, (_, i) => BigInt(i % classes)), [batch]);
      const losses = [];
      const step = () => {
        losses.push(module.train().runAll(x, y)[0].data[0]);
        optimizer.step();
        module.lazyResetGrad();
      };
      step();
      t = performance.now();
      for (let i = 1; i < steps; i++) step();
      out.msPerStep = +((performance.now() - t) / Math.max(1, steps - 1)).toFixed(1);
      out.losses = losses;
      await snap('trained');
      out.evalLoss = module.eval().runAll(x, y)[0].data[0];
      await snap('evaluated');
      out.runtime = wt.runtimeInfo();
      optimizer.release();
      module.release();
      state.release();
    } catch (e) {
      out.error = `${phase}: ${e?.message ?? e}`;
      try { await snap('failed'); } catch { /* the instance may be gone */ }
    }
    return out;
  }, { batch, steps, width, classes });
  clearInterval(sampler);
  const memory = r.at.evaluated ?? r.at.failed ?? 0;
  const res = {
    env: 'chromium', browser: browser.version(), layers, width, batch, steps, frozenDtype: half ? 'float16' : 'float32', weights: inside ? 'inside' : 'external data', loadAvg: +load0.toFixed(2),
    params: layers * (width * width + width) + classes * (width + 1), weightMB: +(weightBytes / MB).toFixed(1),
    ...r, wasmMemoryMB: memory, wasmMemoryOverWeights: +((memory * MB) / weightBytes).toFixed(2),
    rendererRssAt: rssAt, rendererPeakRssMB: +(peak / MB).toFixed(1), rendererPeakRssOverWeights: +(peak / weightBytes).toFixed(2),
  };
  console.log(JSON.stringify(res));
  await ctx.close();
} finally {
  clearInterval(sampler);
  await browser?.close();
  await server?.close();
  if (!keep) await rm(dir, { recursive: true, force: true });
}
