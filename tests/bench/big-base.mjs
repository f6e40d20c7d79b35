#!/usr/bin/env node
// A frozen base of configurable size saved with external data, fine-tuned from a path in Node
// (docs/performance.md's large-base rows; not part of npm test: the default base is 403 MB):
//   node tests/bench/big-base.mjs [LAYERS] [WIDTH] [--batch N] [--steps N] [--threads N] [--keep DIR] [--export]
//                                 [--float16 [--compare]] [--inside]
// Default: 24 x Linear(2048) + ReLU, a Linear(2048, 10) head (~100M parameters), batch 16.
// --inside: the same base with its weights inside base.onnx (no side file: how torch.onnx.export
// saves a model under 2 GB); the weight bytes are then its initializers' (the same bytes the
// side file holds). The losses print in full (losses) to compare the two forms bit for bit.
// --float16: the base's weights are float16 initializers (read through Casts) in the side file,
// written layer by layer (16 8192 --float16: 1.07B parameters, a 2.1 GB side file, offsets past
// 2 GB); --compare then also trains, in the same process, the twin whose float32 weights hold
// the same float16 values and reports how far the losses differ (small sizes only: both
// are in memory).
// tests/bench/make_big_base.py writes base.onnx + base.onnx.data; then, in this one process, the
// README's flow: generateArtifacts(path, { requiresGrad: head }) without artifactDirectory,
// CheckpointState.loadCheckpoint(art.checkpoint), Module.create(art.trainingModel, state,
// art.evalModel), Optimizer.create, a few train steps and one eval step. Prints one JSON line:
// generation / load seconds, ms per step, peak process RSS and the wasm Memory after each phase,
// against the side file's bytes. Run it in a fresh process per measurement (peak RSS is the
// process's). --export then also exports for inference, by reference and with the weights inside.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { options } from './cli-util.mjs';
import { artifacts, CheckpointState, Module, Optimizer, Tensor, init, runtimeInfo } from '../../js/index.js';

const args = process.argv.slice(2);
const { flag, bool } = options(args);
const batch = Number(flag('--batch', 16));
const steps = Number(flag('--steps', 5));
const keep = flag('--keep', null);
const threads = Number(flag('--threads', 1));
const exportToo = bool('--export');
const half = bool('--float16');
const compare = bool('--compare');
const inside = bool('--inside');
const [layers = 24, width = 2048] = args.map(Number);
const classes = 10;
const MB = 2 ** 20;
const root = fileURLToPath(new URL('../../', import.meta.url));
const log = (s) => console.error(`[big-base ${(performance.now() / 1000).toFixed(1)}s] ${s}`);
const peakRss = () => process.resourceUsage().maxRSS * 1024;

const dir = keep ?? (await mkdtemp(join(tmpdir(), 'webtrain-bigbase-')));
try {
  const model = join(dir, 'base.onnx');
  const make = (path, form) => {
    const t0 = performance.now();
    const made = spawnSync('/usr/bin/python3', [join(root, 'tests/bench/make_big_base.py'), path, String(layers), String(width), String(classes), ...(form ? [form] : [])], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`make_big_base.py failed: ${made.stderr}${made.error ?? ''}`);
    log(`${made.stdout.trim()} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  };
  make(model, half ? '--float16' : inside ? '--inside' : null);
  // the weights: the side file, or (inside) the initializers' bytes: all float32
  const weightBytes = inside ? 4 * (layers * (width * width + width) + classes * (width + 1)) : (await stat(`${model}.data`)).size;
  const startRss = process.memoryUsage().rss;
  const core = await init({ threads });
  const load0 = loadavg()[0];
  log(`runtime ${JSON.stringify(runtimeInfo())}, load ${load0.toFixed(2)}, RSS after init ${(process.memoryUsage().rss / MB).toFixed(0)} MB`);
  const at = {};
  const snap = (phase) => {
    const h = core.heapStats();
    at[phase] = { wasmMemoryMB: +(h.memory / MB).toFixed(1), mallocInUseMB: +(h.mallocInUse / MB).toFixed(1), rssMB: +(process.memoryUsage().rss / MB).toFixed(1), peakRssMB: +(peakRss() / MB).toFixed(1) };
    log(`${phase}: ${JSON.stringify(at[phase])}`);
  };

  let t = performance.now();
  const art = await artifacts.generateArtifacts(model, { requiresGrad: ['head.weight', 'head.bias'], loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const genSeconds = (performance.now() - t) / 1000;
  const artBytes = Object.fromEntries(Object.entries(art).map(([k, v]) => [k, v?.byteLength ?? 0]));
  log(`generated in ${genSeconds.toFixed(1)} s: ${JSON.stringify(artBytes)}`);
  snap('generated');

  t = performance.now();
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const loadSeconds = (performance.now() - t) / 1000;
  log(`loaded in ${loadSeconds.toFixed(1)} s`);
  snap('loaded');

  const x = new Tensor('float32', Float32Array.from({ length: batch * width }, (_, i) => Math.sin(i * 0.37)), [batch, width]);
  const y = new Tensor('int64', BigInt64Array.from({ length: batch }, (_, i) => BigInt(i % classes)), [batch]);
  const losses = [];
  const step = () => {
    losses.push(module.train().runAll(x, y)[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  };
  step(); // the first step plans
  t = performance.now();
  for (let i = 1; i < steps; i++) step();
  const msPerStep = (performance.now() - t) / Math.max(1, steps - 1);
  snap('trained');
  const evalLoss = module.eval().runAll(x, y)[0].data[0];
  snap('evaluated');
  if (!losses.every(Number.isFinite) || !Number.isFinite(evalLoss)) throw new Error(`non-finite loss: ${losses} / ${evalLoss}`);
  if (!(losses.at(-1) < losses[0])) throw new Error(`the loss did not fall: ${losses}`);
  let agreement = null;
  if (compare) {
    // The float32 twin holding the float16 values: the same losses at float32 tolerance.
    const twin = join(dir, 'twin.onnx');
    make(twin, '--float16-as-float32');
    const a2 = await artifacts.generateArtifacts(twin, { requiresGrad: ['head.weight', 'head.bias'], loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    const s2 = await CheckpointState.loadCheckpoint(a2.checkpoint);
    const m2 = await Module.create(a2.trainingModel, s2, a2.evalModel);
    const o2 = await Optimizer.create(a2.optimizerModel, m2);
    const l2 = [];
    for (let i = 0; i < steps; i++) {
      l2.push(m2.train().runAll(x, y)[0].data[0]);
      o2.step();
      m2.lazyResetGrad();
    }
    const e2 = m2.eval().runAll(x, y)[0].data[0];
    const rel = (a, b) => Math.abs(a - b) / Math.max(1e-30, Math.abs(b));
    const maxRel = Math.max(...losses.map((l, i) => rel(l, l2[i])), rel(evalLoss, e2));
    agreement = { float32TwinLosses: l2, float32TwinEvalLoss: e2, maxRelDiff: maxRel };
    log(`float16 vs float32 twin: ${JSON.stringify(agreement)}`);
    o2.release(); m2.release(); s2.release();
    if (!(maxRel <= 1e-5)) throw new Error(`float16 and float32-twin losses differ by ${maxRel} (relative)`);
  }
  const mem = module.memoryStats();
  const exported = {};
  if (exportToo) {
    for (const keepExternalData of [true, false]) {
      t = performance.now();
      const key = keepExternalData ? 'byReference' : 'embedded';
      try {
        const b = await module.exportModelForInferencing(['logits'], { keepExternalData });
        exported[key] = { bytes: b.byteLength, seconds: +((performance.now() - t) / 1000).toFixed(2) };
      } catch (e) {
        exported[key] = { error: e.message }; // past 2 GiB with the weights inside: refused
      }
      snap(keepExternalData ? 'exported by reference' : 'exported embedded');
    }
  }
  optimizer.release();
  module.release();
  state.release();
  const out = {
    layers, width, batch, steps, threads, frozenDtype: half ? 'float16' : 'float32', weights: inside ? 'inside' : 'external data', loadAvg: +load0.toFixed(2),
    params: layers * (width * width + width) + classes * (width + 1), startRssMB: +(startRss / MB).toFixed(1),
    weightMB: +(weightBytes / MB).toFixed(1),
    genSeconds: +genSeconds.toFixed(2), loadSeconds: +loadSeconds.toFixed(2), msPerStep: +msPerStep.toFixed(1),
    peakRssMB: +(peakRss() / MB).toFixed(1), peakRssOverWeights: +(peakRss() / weightBytes).toFixed(2),
    wasmMemoryMB: at.evaluated.wasmMemoryMB, wasmMemoryOverWeights: +((at.evaluated.wasmMemoryMB * MB) / weightBytes).toFixed(2),
    arenaMB: +(mem.arena / MB).toFixed(1), artifactBytes: artBytes, exported, agreement, at, losses, evalLoss,
  };
  console.log(JSON.stringify(out));
} finally {
  if (!keep) await rm(dir, { recursive: true, force: true });
}
