#!/usr/bin/env node
// LoRA on a decoder with SmolLM2-135M's shape (docs/performance.md's LoRA rows; not part of npm test):
//   node tests/bench/smollm-lora.mjs [--env node|chromium] [--threads N] [--float16] [--seq 128]
//        [--batch 1] [--steps 6] [--keep DIR] [--layers 30 --hidden 576 --heads 9 --kv-heads 3
//        --mlp 1536 --vocab 49152] [--backend wasm|webgpu]
// tests/bench/make_smollm.py writes base.onnx + base.onnx.data into DIR (random weights, exported
// by PyTorch in training mode with dynamic [batch, seq]; reused when --keep names a folder that
// has them for these sizes); then, in this one process (Node) or on a page of headless Chromium
// (served from a local server; the threaded build when --threads > 1, the page then being
// cross-origin isolated), tests/bench/smollm-flow.mjs: generateArtifacts with LoRA rank 8 on
// q/k/v/o/gate/up/down, loadCheckpoint, Module.create, AdamW, `steps` train steps at [batch, seq]
// and an eval step. Prints one JSON line: ms per step (median after the first, which plans),
// tokens/s, the side file's bytes (the base weights), module.memoryStats() (saved: the forward
// values the backward pass reads, at this shape), the wasm Memory and peak RSS (Node: the
// process's; Chromium: its renderers', sampled every 100 ms) against weights + 1.5 x saved.
// Run one measurement per process (peak RSS is the process's).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { options, rendererRss } from './cli-util.mjs';
import { loraFlow } from './smollm-flow.mjs';

const args = process.argv.slice(2);
const { flag, bool } = options(args);
const env = flag('--env', 'node');
const threads = Number(flag('--threads', 1));
const half = bool('--float16');
const seq = Number(flag('--seq', 128));
const batch = Number(flag('--batch', 1));
const steps = Number(flag('--steps', 6));
const keep = flag('--keep', null);
const backend = flag('--backend', 'wasm'); // Module.create's (webgpu in Node: the webgpu package)
const shape = {
  layers: Number(flag('--layers', 30)), hidden: Number(flag('--hidden', 576)), heads: Number(flag('--heads', 9)),
  'kv-heads': Number(flag('--kv-heads', 3)), mlp: Number(flag('--mlp', 1536)), vocab: Number(flag('--vocab', 49152)),
};
if (args.length) throw new Error(`unknown arguments: ${args.join(' ')}`);
const MB = 2 ** 20;
const root = fileURLToPath(new URL('../../', import.meta.url));
const log = (s) => console.error(`[smollm-lora ${(performance.now() / 1000).toFixed(1)}s] ${s}`);

const dir = keep ?? (await mkdtemp(join(tmpdir(), 'webtrain-smollm-')));
const model = join(dir, 'base.onnx');
const made = JSON.stringify({ ...shape, half });
let server, browser, sampler;
try {
  const stamp = join(dir, 'base.json');
  if (!(existsSync(model) && existsSync(stamp) && (await readFile(stamp, 'utf8')) === made)) {
    const t0 = performance.now();
    const opts = Object.entries(shape).flatMap(([k, v]) => [`--${k}`, String(v)]);
    const r = spawnSync('/usr/bin/python3', [join(root, 'tests/bench/make_smollm.py'), model, ...opts, ...(half ? ['--float16'] : [])], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`make_smollm.py failed: ${r.stderr}${r.error ?? ''}`);
    await writeFile(stamp, made);
    log(`${r.stdout.trim()} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  } else log(`reusing ${model}`);
  const weightBytes = (await stat(`${model}.data`)).size;
  const load0 = loadavg()[0];
  const opts = { batch, seq, vocab: shape.vocab, steps, backend };
  let r;
  let peak = 0;
  if (env === 'node') {
    const wt = await import('../../js/index.js');
    const core = await wt.init({ threads });
    const at = {};
    const peakRss = () => process.resourceUsage().maxRSS * 1024;
    const snap = async (phase) => {
      const h = core.heapStats();
      at[phase] = { wasmMemoryMB: +(h.memory / MB).toFixed(1), mallocInUseMB: +(h.mallocInUse / MB).toFixed(1), rssMB: +(process.memoryUsage().rss / MB).toFixed(1), peakRssMB: +(peakRss() / MB).toFixed(1) };
      log(`${phase}: ${JSON.stringify(at[phase])}`);
    };
    await snap('init');
    try {
      r = await loraFlow(wt, model, { ...opts, snap });
    } catch (e) {
      r = { ...e.partial, error: e.message };
    }
    r.at = at;
    r.runtime = wt.runtimeInfo();
    peak = peakRss();
  } else if (env === 'chromium') {
    const { serve, launch, guard, openPage } = await import('../browser/harness.mjs');
    const isolated = threads > 1;
    server = await serve({ mounts: { '/smollm/': dir, '/bench/': 'tests/bench' }, isolated });
    browser = await launch(['--js-flags=--no-liftoff']);
    const ctx = await guard(await browser.newContext(), server.url);
    const page = await openPage(ctx, `${server.url}/tests/browser/pages/index.html`);
    page.setDefaultTimeout(0);
    sampler = setInterval(() => rendererRss().then((x) => { peak = Math.max(peak, x); }), 100);
    const rssAt = {};
    await page.exposeFunction('wtRss', async (phase) => {
      const now = await rendererRss();
      peak = Math.max(peak, now);
      rssAt[phase] = { rssMB: +(now / MB).toFixed(1), peakSoFarMB: +(peak / MB).toFixed(1) };
    });
    r = await page.evaluate(async ({ opts, threads }) => {
      const wt = window.webtrain;
      const { loraFlow } = await import('/bench/smollm-flow.mjs');
      const core = await wt.init({ threads });
      const at = {};
      const snap = async (phase) => {
        at[phase] = { wasmMemoryMB: +(core.heapStats().memory / 2 ** 20).toFixed(1) };
        await window.wtRss(phase);
      };
      let res;
      try {
        res = await loraFlow(wt, '/smollm/base.onnx', { ...opts, snap });
      } catch (e) {
        res = { ...e.partial, error: e.message };
      }
      return { ...res, at, runtime: wt.runtimeInfo() };
    }, { opts, threads });
    clearInterval(sampler);
    r.rendererRssAt = rssAt;
    r.browser = browser.version();
    await ctx.close();
  } else throw new Error(`--env: node or chromium; got ${env}`);
  const saved = r.memoryStats?.saved ?? null;
  const goal = saved === null ? null : weightBytes + 1.5 * saved;
  const wasmPeak = Math.max(...Object.values(r.at ?? {}).map((a) => a.wasmMemoryMB ?? 0)) * MB;
  const out = {
    env, backend, threads, frozenDtype: half ? 'float16' : 'float32', ...shape, seq, batch, steps, loadAvg: +load0.toFixed(2),
    weightMB: +(weightBytes / MB).toFixed(1), savedMB: saved === null ? null : +(saved / MB).toFixed(1),
    goalMB: goal === null ? null : +(goal / MB).toFixed(1), peakRssMB: +(peak / MB).toFixed(1),
    peakRssOverGoal: goal ? +(peak / goal).toFixed(2) : null, wasmMemoryMB: +(wasmPeak / MB).toFixed(1),
    wasmOverGoal: goal ? +(wasmPeak / goal).toFixed(2) : null, ...r,
  };
  console.log(JSON.stringify(out));
  if (out.error) process.exitCode = 1;
} finally {
  clearInterval(sampler);
  await browser?.close();
  await server?.close();
  if (!keep) await rm(dir, { recursive: true, force: true });
}
