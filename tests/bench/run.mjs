#!/usr/bin/env node
// Speed and memory benchmark (issue 6), not part of the test suite:
//   node tests/bench/run.mjs [--quick] [--models a,b] [--runtimes webtrain,ort,tfjs] [--rounds N] [--no-gemm] [--tiering] [--threads N] [--simd relaxed]
// Trains each model with webtrain, onnxruntime-web 1.19.2's training build (webtrain's generated
// artifacts; for the MNIST MLP also ONNX Runtime's own artifacts) and TensorFlow.js's wasm
// backend, single-threaded (--threads N: webtrain's threaded build and onnxruntime-web at N threads), one process per (model, runtime), and prints a table; every
// measurement is also a JSON line appended to build/bench/results.jsonl. See tests/bench/README.md.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { ROOT, MODELS_DIR, OUT_DIR, modelSpecs } from './models.mjs';

const argv = process.argv.slice(2);
const flag = (f) => argv.includes(f);
const opt = (f) => {
  const i = argv.indexOf(f);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = flag('--quick');
const onlyModels = opt('--models')?.split(',');
const onlyRuntimes = opt('--runtimes')?.split(',');
const rounds = Math.max(1, Number(opt('--rounds') ?? (quick ? 1 : 2)));
const threads = Math.max(1, Number(opt('--threads') ?? 1));
process.env.WT_BENCH_THREADS = String(threads); // read by worker.mjs (webtrain's init, ORT's numThreads)
// --simd relaxed: webtrain's relaxed-SIMD (fused multiply-add) builds, which Node 20 runs behind
// --experimental-wasm-relaxed-simd (added to every worker process; init()'s 'auto' then picks
// them), and gemm_bench.c compiled with -mrelaxed-simd. Default simd128: the SIMD128 builds.
const SIMD = opt('--simd') ?? 'simd128';
if (SIMD !== 'simd128' && SIMD !== 'relaxed') throw new Error(`--simd: expected simd128 or relaxed, got ${SIMD}`);
const RELAXED_FLAGS = SIMD === 'relaxed' ? ['--experimental-wasm-relaxed-simd'] : [];
const PY = '/usr/bin/python3';
const WORKER = `${ROOT}tests/bench/worker.mjs`;
const t0 = Date.now();

function log(msg) {
  process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(3)}s] ${msg}\n`);
}

function sh(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  return { ok: r.status === 0, out: r.stdout ?? '', err: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

// 1. A consistent snapshot of webtrain's js/ + dist/ (dist/ may be rebuilt while we run).
function snapshot() {
  const dist = `${ROOT}dist/`;
  const files = ['webtrain-core.mjs', 'webtrain-core.wasm', ...(SIMD === 'relaxed' ? ['webtrain-core-fma.wasm'] : [])];
  for (let tries = 0; ; tries++) {
    const st = () => files.map((f) => (existsSync(dist + f) ? `${statSync(dist + f).mtimeMs}:${statSync(dist + f).size}` : 'missing')).join();
    const a = st();
    spawnSync('sleep', ['1']);
    if (!a.includes('missing') && a === st()) break;
    if (tries > 60) throw new Error('dist/webtrain-core.{mjs,wasm} missing or changing: run bash scripts/build.sh');
  }
  const snap = `${OUT_DIR}snapshot/`;
  mkdirSync(`${snap}js`, { recursive: true });
  mkdirSync(`${snap}dist`, { recursive: true });
  for (const f of readdirSync(`${ROOT}js`)) if (f.endsWith('.js')) cpSync(`${ROOT}js/${f}`, `${snap}js/${f}`);
  for (const f of files) cpSync(dist + f, `${snap}dist/${f}`);
  if (existsSync(`${dist}mt`)) cpSync(`${dist}mt`, `${snap}dist/mt`, { recursive: true }); // the threaded build
  writeFileSync(`${snap}package.json`, '{"type":"module"}\n');
  return { js: `${snap}js/`, wasmMtime: new Date(statSync(`${dist}webtrain-core.wasm`).mtimeMs).toISOString() };
}

// V8 runs wasm in a baseline tier (Liftoff) and optimizes hot functions on background threads;
// on a loaded 2-core machine that tier-up starves, and onnxruntime-web's large module then stays
// partly unoptimized for many seconds (its median step time doubled at load 5). --no-liftoff
// compiles every function with the optimizing tier on first call: steady-state numbers for every
// runtime. --tiering keeps V8's default.
const NODE_FLAGS = [...(flag('--tiering') ? [] : ['--no-liftoff']), ...RELAXED_FLAGS];

function worker(args, env) {
  const r = sh(process.execPath, [...NODE_FLAGS, WORKER, ...args], { env: { ...process.env, ...env } });
  const lines = r.out.split('\n').filter((l) => l.startsWith('RESULT '));
  if (!lines.length) return { error: `worker ${args.join(' ')} failed: ${(r.err || r.out).trim().split('\n').slice(-3).join(' | ')}` };
  return JSON.parse(lines[lines.length - 1].slice(7));
}

// 2. The C GEMM micro-benchmark (tests/bench/gemm_bench.c) in wasm, built from src/kernels.
function gemmC(build) {
  const dir = `${OUT_DIR}gemm${SIMD === 'relaxed' ? '-relaxed' : ''}/`;
  const simdFlags = SIMD === 'relaxed' ? ['-msimd128', '-mrelaxed-simd'] : ['-msimd128'];
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}package.json`, '{"type":"commonjs"}\n'); // the repository's package.json says "module"
  const src = ['tests/bench/gemm_bench.c', 'src/kernels/gemm.c', 'src/kernels/gemm_ref.c', 'src/base/pool.c'].map((f) => ROOT + f);
  let b = !build && existsSync(`${dir}gemm_bench.wasm`) ? { ok: true } : sh('emcc', ['-O3', ...simdFlags, `-I${ROOT}src`, `-I${ROOT}include`, ...src, '-sINITIAL_MEMORY=64MB', '-o', `${dir}gemm_bench.js`], { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' } });
  // (relaxed: clang 14's prototype f32x4.fma -> the final f32x4.relaxed_madd, as the package's build does)
  if (b.ok && build && SIMD === 'relaxed') b = sh(process.execPath, [...RELAXED_FLAGS, `${ROOT}scripts/wasm-relaxed.mjs`, `${dir}gemm_bench.wasm`, `${dir}gemm_bench.wasm`]);
  if (!b.ok) return [{ kind: 'gemm-c', error: `emcc failed: ${b.err.trim().split('\n').slice(-2).join(' | ')}` }];
  const r = sh(process.execPath, ['--no-experimental-fetch', ...RELAXED_FLAGS, `${dir}gemm_bench.js`]);
  const rows = [];
  for (const line of r.out.split('\n')) {
    const m = /^(\S+)\s+([NT]{2}) M=\s*(\d+) N=\s*(\d+) K=\s*(\d+)\s+([\d.]+) GFLOP\/s\s+([\d.]+) us/.exec(line);
    if (m) rows.push({ kind: 'gemm-c', source: `tests/bench/gemm_bench.c (wt_sgemm from src/kernels, emcc -O3 ${simdFlags.join(' ')})`, simd: SIMD, shape: m[1], trans: m[2], M: +m[3], N: +m[4], K: +m[5], gflops: +m[6], us: +m[7] });
  }
  if (!rows.length) rows.push({ kind: 'gemm-c', error: `gemm_bench printed nothing usable: ${(r.err || r.out).slice(-200)}` });
  return rows;
}

/** One row per (model, runtime): medians over rounds of each round's median. */
function summarize(rs) {
  const ok = rs.filter((r) => r.stepMs);
  if (!ok.length) return rs[0];
  const med = (f) => {
    const v = ok.map(f).sort((a, b) => a - b);
    return v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  const stepMs = med((r) => r.stepMs);
  return { ...ok[0], rounds: ok.length, stepMs, evalMs: med((r) => r.evalMs), train: { ...ok[0].train, min: Math.min(...ok.map((r) => r.train.min)) }, heapBytes: Math.max(...ok.map((r) => r.heapBytes ?? 0)) || null, loadavg: med((r) => r.loadavg), gflops: ok[0].stepFlops / (stepMs * 1e6), gflopsExact: ok[0].exactFlops / (stepMs * 1e6) };
}

const fmt = (x, d = 2) => (x === undefined || x === null || Number.isNaN(x) ? 'n/a' : x.toFixed(d));
const mb = (b) => (b ? (b / 1048576).toFixed(1) : 'n/a');

async function main() {
  log(`node ${process.version} ${NODE_FLAGS.join(' ')}, ${cpus().length} cpus (${cpus()[0]?.model}), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}${quick ? ', --quick' : ''}`);
  log(`threads: ${threads} (webtrain init({ threads }), onnxruntime-web numThreads); webtrain's ${SIMD === 'relaxed' ? 'relaxed-SIMD (FMA)' : 'SIMD128'} builds (--simd)`);
  mkdirSync(OUT_DIR, { recursive: true });
  const mm = sh(PY, [`${ROOT}tests/bench/make_models.py`, MODELS_DIR]);
  if (!mm.ok) throw new Error(`make_models.py failed: ${mm.err}`);
  const snap = snapshot();
  const env = { WT_BENCH_JS: snap.js, WT_BENCH_WARMUP_MS: quick ? '1000' : '2000' };
  log(`webtrain snapshot of dist/ built ${snap.wasmMtime}`);
  const results = [];
  const summaries = [];
  const record = (r) => {
    results.push({ ...r, run: new Date(t0).toISOString() });
  };

  // GEMM rounds before and after the models; the table keeps the best of the two (a noisy
  // neighbour only ever slows a kernel down).
  const gemmRound = (round) => {
    for (const [n, reps] of [[256, quick ? 20 : 60], [512, quick ? 8 : 20], [1024, quick ? 3 : 6]]) {
      log(`gemm n=${n} through webtrain (one MatMul), round ${round + 1}/2`);
      const r = worker(['gemm', String(n), String(reps)], env);
      record({ ...(r.error ? { kind: 'gemm', n, error: r.error } : r), round });
    }
    log(`gemm_bench.c (emcc), round ${round + 1}/2`);
    for (const r of gemmC(round === 0)) record({ ...r, round });
  };
  if (!flag('--no-gemm')) gemmRound(0);

  let specs = modelSpecs();
  if (onlyModels) specs = specs.filter((s) => onlyModels.includes(s.key));
  const wantRt = (r) => !onlyRuntimes || onlyRuntimes.includes(r);

  for (const s of specs) {
    const prep = worker(['prepare', s.key], env);
    if (prep.error) {
      record({ kind: 'model', model: s.key, label: s.label, runtime: 'webtrain', error: `generateArtifacts: ${prep.error}` });
      log(`${s.key}: prepare failed: ${prep.error}`);
      continue;
    }
    const steps = quick ? (s.heavy ? 10 : 30) : 100;
    const warmup = quick ? (s.heavy ? 2 : 10) : s.heavy ? 5 : 30;
    const evals = quick ? (s.heavy ? 3 : 10) : s.heavy ? 10 : 50;
    const runtimes = ['webtrain', 'ort'];
    if (s.ortOwn) runtimes.push('ort-own', 'webtrain-own');
    runtimes.push('tfjs');
    const perRt = new Map();
    const run1 = (rt, round) => {
      log(`${s.key}: ${rt} (${steps} steps${rounds > 1 ? `, round ${round + 1}/${rounds}` : ''})`);
      let r = worker(['run', rt, s.key, String(steps), String(warmup), String(evals)], env);
      if (r.error && !r.model) r = { kind: 'model', model: s.key, label: s.label, runtime: rt, error: r.error };
      r.round = round;
      record(r);
      if (!perRt.has(rt)) perRt.set(rt, []);
      perRt.get(rt).push(r);
      return r;
    };
    // Rounds interleave the runtimes, so that a noisy neighbour hurts them alike.
    for (let round = 0; round < rounds; round++) {
      for (const rt of runtimes) {
        if (!wantRt(rt.replace(/-(own|patched)$/, ''))) continue;
        if (round > 0 && perRt.get(rt)?.every((x) => x.error)) continue;
        const r = run1(rt, round);
        if (rt === 'ort' && round === 0 && r.error && /TrainingSession.create/.test(r.error)) {
          // Find out whether the optimizer model is what ORT rejects (SGDOptimizerV2's flag declared [1]).
          const dir = `${MODELS_DIR}${s.key}/`;
          const p = sh(PY, [`${ROOT}tests/bench/make_models.py`, '--flag-without-shape', `${dir}optimizer_model.onnx`, `${dir}optimizer_model.flag_noshape.onnx`]);
          if (p.ok) {
            log(`${s.key}: ort rejected webtrain's artifacts; retrying with the optimizer's flag output declared without a shape`);
            runtimes.splice(runtimes.indexOf('ort') + 1, 0, 'ort-patched');
          }
        }
      }
    }
    for (const [, rs] of perRt) summaries.push(summarize(rs));
  }

  if (!flag('--no-gemm')) gemmRound(1);

  appendFileSync(`${OUT_DIR}results.jsonl`, results.map((r) => JSON.stringify(r)).join('\n') + '\n');
  printTable([...summaries, ...results.filter((r) => r.kind !== 'model')]);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; JSON lines in ${OUT_DIR}results.jsonl`);
}

/**
 * Issue 6, "Done when" 3: peak heap <= parameters + gradients + optimizer moments + the
 * activations the backward pass needs, + 20%. "saved" = the forward activations the backward
 * pass reads (alive when it starts); "live" = the training plan's busiest step (saved + activation
 * gradients + gradient temporaries + scratch), which is what its arena must hold.
 */
function printMemory(rows) {
  if (!rows.length) return;
  const t = [['model', 'Memory', 'static+stack', 'malloc peak', 'P+G+M', 'saved', 'live', 'arena', 'bound', 'peak/bound', 'bound(live)', 'peak/bound(live)']];
  for (const r of rows) {
    const st = r.stateBytes.params + r.stateBytes.grads + r.stateBytes.moments;
    const boundLive = 1.2 * (st + r.livePeakTrainBytes);
    t.push([r.label ?? r.model, mb(r.heapBytes), mb(r.heapBaseBytes), mb(r.mallocPeakBytes), mb(st), mb(r.savedBytes), mb(r.livePeakTrainBytes), mb(r.arenaBytes), mb(r.boundBytes), fmt(r.mallocPeakBytes / r.boundBytes), mb(boundLive), fmt(r.mallocPeakBytes / boundLive)]);
  }
  const w = t[0].map((_, i) => Math.max(...t.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => (i ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  ');
  console.log('\nwebtrain memory (MB; issue 6: peak <= 1.2 x (params + grads + optimizer moments + activations the backward pass needs))');
  console.log('Memory = wasm Memory size after the run (its peak: it only grows), = static data + 256 KiB stack + malloc\'s heap + growth slack;');
  console.log('malloc peak = the most bytes malloc took (dlmalloc footprint); saved = forward activations read by the backward pass;');
  console.log('live = the training plan\'s busiest step (saved + activation gradients + gradient temporaries + scratch); bound = 1.2 x (P+G+M + saved).');
  console.log(line(t[0]));
  console.log(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of t.slice(1)) console.log(line(r));
}

/** Best GFLOP/s per GEMM row over the rounds. */
function bestGemm(results, kind, keyOf) {
  const best = new Map();
  for (const r of results.filter((x) => x.kind === kind)) {
    const k = keyOf(r);
    const b = best.get(k);
    if (!b || (b.error && !r.error) || (!r.error && r.gflops > b.gflops)) best.set(k, r);
  }
  return [...best.values()];
}

function printTable(all) {
  const models = all.filter((r) => r.kind === 'model');
  const results = [
    ...models,
    ...bestGemm(all, 'gemm', (r) => r.n),
    ...bestGemm(all, 'gemm-c', (r) => (r.error ? 'error' : `${r.shape}${r.trans}${r.M},${r.N},${r.K}`)),
  ];
  const gemmCRows = results.filter((r) => r.kind === 'gemm-c' && !r.error);
  // The n=512 GEMM rate: the best of gemm_bench.c's square n=512 variants (NN/TN/NT) and the
  // one-MatMul model (noise only ever lowers a rate).
  const n512 = [...gemmCRows.filter((r) => r.shape === 'square' && r.M === 512), ...results.filter((r) => r.kind === 'gemm' && r.n === 512 && !r.error)].map((r) => r.gflops);
  const ceiling = n512.length ? Math.max(...n512) : undefined;
  const rows = [['model', 'runtime', 'artifacts', 'ms/step', 'min', 'eval ms', 'heap MB', 'GF/s 3x', 'GF/s exact', 'webtrain/peer', 'note']];
  const byModel = new Map();
  for (const r of models) {
    if (!byModel.has(r.model)) byModel.set(r.model, []);
    byModel.get(r.model).push(r);
  }
  for (const [, rs] of byModel) {
    const wt = rs.find((r) => r.runtime === 'webtrain' && r.stepMs);
    for (const r of rs) {
      let ratio = '';
      if (r.runtime !== 'webtrain' && r.stepMs && wt) ratio = `${fmt(wt.stepMs / r.stepMs)}x`;
      const note = r.error ? `ERROR ${r.error.split('\n')[0]}`.slice(0, 160) : [r.note, r.runtime === 'webtrain' && r.mallocPeakBytes ? `malloc peak ${mb(r.mallocPeakBytes)} MB (bound ${mb(r.boundBytes)} MB)` : r.runtime === 'webtrain' && r.brkGrowthBytes ? `malloc'd ${mb(r.brkGrowthBytes)} MB (params+grads+moments ${mb(4 * (r.paramsAll + r.params * (r.optimizer === 'SGD' ? 1 : 3)))} MB)` : '', `load ${fmt(r.loadavg, 1)}`].filter(Boolean).join('; ');
      rows.push([r.label ?? r.model, r.runtime, r.artifacts ?? '', fmt(r.stepMs), fmt(r.train?.min), fmt(r.evalMs), mb(r.heapBytes), fmt(r.gflops, 1), fmt(r.gflopsExact, 1), ratio, note]);
    }
  }
  const w = rows[0].map((_, i) => Math.max(...rows.filter((r) => r.length > 1).map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => (i >= 3 && i <= 9 ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  ').trimEnd();
  console.log('\nTraining step (train + optimizer + lazyResetGrad), single thread; median over the timed steps');
  console.log('GF/s: MatMul/Gemm/Conv FLOPs per step / median step time; "3x" counts forward+backward as 3x forward,');
  console.log('"exact" counts forward + only the gradient products needed (no dX of a first layer). heap = wasm Memory bytes after the run.');
  console.log(line(rows[0]));
  console.log(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of rows.slice(1)) console.log(line(r));
  printMemory(models.filter((r) => r.runtime === 'webtrain' && r.mallocPeakBytes));
  console.log('\nGEMM (single thread, float32; best of the rounds before and after the models)');
  for (const r of results.filter((x) => x.kind === 'gemm')) console.log(r.error ? `  n=${r.n}: ERROR ${r.error}` : `  webtrain MatMul n=${String(r.n).padEnd(4)} ${fmt(r.gflops, 1).padStart(6)} GFLOP/s  (${fmt(r.ms, 3)} ms, through InferenceSession.run; ${r.simd ?? SIMD})`);
  for (const r of results.filter((x) => x.kind === 'gemm-c')) console.log(r.error ? `  gemm_bench.c: ERROR ${r.error}` : `  gemm_bench.c ${r.shape.padEnd(7)} ${r.trans} M=${String(r.M).padStart(4)} N=${String(r.N).padStart(4)} K=${String(r.K).padStart(4)} ${fmt(r.gflops, 1).padStart(6)} GFLOP/s  (${r.simd ?? 'simd128'})`);
  if (ceiling) {
    console.log(`\nwebtrain step GFLOP/s as a fraction of the best GEMM n=512 rate (${fmt(ceiling, 1)} GFLOP/s): 3x count / exact count`);
    for (const r of models.filter((x) => x.runtime === 'webtrain' && x.gflops)) console.log(`  ${r.label.padEnd(30)} ${fmt((100 * r.gflops) / ceiling, 0).padStart(4)}% / ${fmt((100 * r.gflopsExact) / ceiling, 0).padStart(3)}%`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
