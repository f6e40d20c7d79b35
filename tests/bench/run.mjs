#!/usr/bin/env node
// Speed and memory benchmark, not part of the test suite:
//   node tests/bench/run.mjs [--quick] [--models a,b] [--runtimes webtrain,ort,tfjs] [--rounds N] [--no-gemm] [--tiering]
//                            [--backend webgpu: tests/bench/webgpu.mjs instead, with the options it takes]
//                            [--threads N | --threads 1,2,4] [--env node,chromium | --browser chromium] [--simd relaxed]
// Trains each model with webtrain, onnxruntime-web 1.19.2's training build (webtrain's generated
// artifacts; for the MNIST MLP also ONNX Runtime's own artifacts) and TensorFlow.js's wasm
// backend, at each thread count (default 1: webtrain's single-threaded build; N > 1: its threaded
// build, onnxruntime-web at numThreads N), one process per (model, runtime, thread count) in Node
// and one Web Worker per measurement in headless Chromium, and prints tables; every measurement is
// also a JSON line appended to build/bench/results.jsonl. See tests/bench/README.md.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, cpus, availableParallelism } from 'node:os';
import { ROOT, MODELS_DIR, OUT_DIR, modelSpecs } from './models.mjs';
import { printTable } from './tables.mjs';

const argv = process.argv.slice(2);
const flag = (f) => argv.includes(f);
const opt = (f) => {
  const i = argv.indexOf(f);
  return i >= 0 ? argv[i + 1] : undefined;
};
// --backend webgpu: the webgpu backend's benchmark (tests/bench/webgpu.mjs), with the options
// after it passed on.
if (opt('--backend') && opt('--backend') !== 'wasm') {
  if (opt('--backend') !== 'webgpu') throw new Error(`--backend: expected wasm or webgpu, got ${opt('--backend')}`);
  const rest = argv.filter((a, i) => a !== '--backend' && argv[i - 1] !== '--backend');
  process.exit(spawnSync(process.execPath, [new URL('./webgpu.mjs', import.meta.url).pathname, ...rest], { stdio: 'inherit' }).status ?? 1);
}
const quick = flag('--quick');
const onlyModels = opt('--models')?.split(',');
const onlyRuntimes = opt('--runtimes')?.split(',');
const rounds = Math.max(1, Number(opt('--rounds') ?? (quick ? 1 : 2)));
const CORES = availableParallelism();
const threadCounts = parseThreads(opt('--threads') ?? '1');
const envs = parseEnvs();
// --simd relaxed: webtrain's relaxed-SIMD (fused multiply-add) builds, which Node 20 runs behind
// --experimental-wasm-relaxed-simd (added to every worker process; init()'s 'auto' then picks
// them), and gemm_bench.c compiled with -mrelaxed-simd. Default simd128: the SIMD128 builds.
// (Chromium picks the relaxed-SIMD build by itself wherever it runs it.)
const SIMD = opt('--simd') ?? 'simd128';
if (SIMD !== 'simd128' && SIMD !== 'relaxed') throw new Error(`--simd: expected simd128 or relaxed, got ${SIMD}`);
const RELAXED_FLAGS = SIMD === 'relaxed' ? ['--experimental-wasm-relaxed-simd'] : [];
const PY = '/usr/bin/python3';
// --tv-optimizer sgd|adamw: the torchvision rows' optimizer, in webtrain and PyTorch alike (models.mjs).
if (opt('--tv-optimizer')) process.env.WT_BENCH_TV_OPTIMIZER = opt('--tv-optimizer');
const WORKER = `${ROOT}tests/bench/worker.mjs`;
const TV = `${ROOT}tests/bench/torchvision_models.py`;
const wantTorchvision = () => !onlyModels || onlyModels.some((m) => m.startsWith('tv_'));
const t0 = Date.now();

/**
 * --threads N (that count, as asked) or a list such as 1,2,4: the counts above the cores this
 * machine reports are skipped (and said so), as 4 threads on 2 cores measure the scheduler.
 */
function parseThreads(arg) {
  const list = [...new Set(String(arg).split(',').map((x) => Number(x.trim())))];
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--threads: expected a whole number >= 1 or a list such as 1,2,4; got '${arg}'`);
  if (list.length === 1) {
    if (list[0] > CORES) process.stderr.write(`[bench] note: ${list[0]} threads on ${CORES} cores reported: the threads share cores\n`);
    return list;
  }
  const kept = list.filter((n) => n <= CORES).sort((a, b) => a - b);
  const skipped = list.filter((n) => n > CORES);
  if (skipped.length) process.stderr.write(`[bench] skipping ${skipped.join(', ')} thread(s): os.availableParallelism() is ${CORES}\n`);
  if (!kept.length) throw new Error(`--threads ${arg}: every count is above the ${CORES} cores reported`);
  return kept;
}

/** --env node,chromium (default node); --browser chromium adds Chromium to it. */
function parseEnvs() {
  const list = (opt('--env') ?? 'node').split(',');
  if (opt('--browser')) list.push(opt('--browser'));
  const unknown = list.filter((e) => e !== 'node' && e !== 'chromium');
  if (unknown.length) throw new Error(`--env/--browser: expected node and/or chromium; got ${unknown.join(', ')}`);
  return [...new Set(list)];
}

// A measurement's configuration beyond (model, runtime, environment): its thread count. The
// worker reads it from its environment (configEnv); run.mjs keys the rounds by configKey.
const configs = threadCounts.map((threads) => ({ threads }));
const configEnv = (c) => ({ WT_BENCH_THREADS: String(c.threads) }); // worker.mjs: webtrain's init({ threads }), ORT's numThreads
const configKey = (c) => `${c.threads}`;

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
  mkdirSync(`${snap}web`, { recursive: true });
  for (const f of readdirSync(`${ROOT}web`)) if (f.endsWith('.js')) cpSync(`${ROOT}web/${f}`, `${snap}web/${f}`); // the Chromium benchmark's entry
  if (existsSync(`${dist}mt`)) cpSync(`${dist}mt`, `${snap}dist/mt`, { recursive: true }); // the threaded build
  writeFileSync(`${snap}package.json`, '{"type":"module"}\n');
  return { root: snap, js: `${snap}js/`, wasmMtime: new Date(statSync(`${dist}webtrain-core.wasm`).mtimeMs).toISOString() };
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

// PyTorch on one thread, the native reference of the torchvision rows: one python process per
// measurement (torchvision_models.py time), its row shaped as the JS workers' (modelResult).
async function pytorch(s, steps, warmup, evals, env) {
  const r = sh(PY, [TV, 'time', s.pytorch, s.optimizer.type, String(s.lr), String(steps), String(warmup), String(evals), env.WT_BENCH_WARMUP_MS]);
  const line = r.out.split('\n').filter((l) => l.startsWith('RESULT ')).pop();
  if (!line) return { error: `torchvision_models.py time ${s.pytorch} failed: ${(r.err || r.out).trim().split('\n').slice(-2).join(' | ')}` };
  const { modelResult } = await import('./measure.mjs');
  return modelResult(s, 'pytorch', 'torch.nn (same architecture)', JSON.parse(line.slice(7)), { env: 'node', threads: 1, loadavg: loadavg()[0] });
}

// 2. The C GEMM micro-benchmark (tests/bench/gemm_bench.c) in wasm, built from src/backend/cpu (128 MB:
// its frozen-base pass holds 8 weights of 1024 x 1024 and their packed copies, 64 MB).
function gemmC(build) {
  const dir = `${OUT_DIR}gemm${SIMD === 'relaxed' ? '-relaxed' : ''}/`;
  const simdFlags = SIMD === 'relaxed' ? ['-msimd128', '-mrelaxed-simd'] : ['-msimd128'];
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}package.json`, '{"type":"commonjs"}\n'); // the repository's package.json says "module"
  const src = ['tests/bench/gemm_bench.c', 'src/backend/cpu/gemm.c', 'src/backend/cpu/gemm_small.c', 'src/backend/cpu/gemm_buffers.c', 'src/backend/cpu/gemm_ref.c', 'src/base/pool.c'].map((f) => ROOT + f);
  let b = !build && existsSync(`${dir}gemm_bench.wasm`) ? { ok: true } : sh('emcc', ['-O3', ...simdFlags, `-I${ROOT}src`, `-I${ROOT}include`, ...src, '-sINITIAL_MEMORY=128MB', '-o', `${dir}gemm_bench.js`], { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' } });
  // (relaxed: clang 14's prototype f32x4.fma -> the final f32x4.relaxed_madd, as the package's build does)
  if (b.ok && build && SIMD === 'relaxed') b = sh(process.execPath, [...RELAXED_FLAGS, `${ROOT}scripts/wasm-relaxed.mjs`, `${dir}gemm_bench.wasm`, `${dir}gemm_bench.wasm`]);
  if (!b.ok) return [{ kind: 'gemm-c', error: `emcc failed: ${b.err.trim().split('\n').slice(-2).join(' | ')}` }];
  const r = sh(process.execPath, ['--no-experimental-fetch', ...RELAXED_FLAGS, `${dir}gemm_bench.js`]);
  const rows = [];
  for (const line of r.out.split('\n')) {
    const m = /^(\S+)\s+([NT]{2}) M=\s*(\d+) N=\s*(\d+) K=\s*(\d+)\s+([\d.]+) GFLOP\/s\s+([\d.]+) us/.exec(line);
    if (m) rows.push({ kind: 'gemm-c', source: `tests/bench/gemm_bench.c (wt_sgemm from src/backend/cpu, emcc -O3 ${simdFlags.join(' ')})`, simd: SIMD, shape: m[1], trans: m[2], M: +m[3], N: +m[4], K: +m[5], gflops: +m[6], us: +m[7] });
  }
  if (!rows.length) rows.push({ kind: 'gemm-c', error: `gemm_bench printed nothing usable: ${(r.err || r.out).slice(-200)}` });
  else if (!r.ok) rows.push({ kind: 'gemm-c', error: `gemm_bench stopped after ${rows.length} shapes: ${r.err.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}` });
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
  const peak = (f) => Math.max(...ok.map((r) => r[f] ?? 0)) || null;
  const cpuMs = ok.every((r) => r.train?.cpuMedian) ? med((r) => r.train.cpuMedian) : undefined;
  return { ...ok[0], rounds: ok.length, stepMs, cpuMs, evalMs: med((r) => r.evalMs), train: { ...ok[0].train, min: Math.min(...ok.map((r) => r.train.min)) }, heapBytes: peak('heapBytes'), mallocPeakBytes: peak('mallocPeakBytes'), rssPeakBytes: peak('rssPeakBytes'), loadavg: med((r) => r.loadavg), gflops: ok[0].stepFlops / (stepMs * 1e6), gflopsExact: ok[0].exactFlops / (stepMs * 1e6) };
}

async function main() {
  log(`node ${process.version} ${NODE_FLAGS.join(' ')}, ${cpus().length} cpus (${cpus()[0]?.model}), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}${quick ? ', --quick' : ''}`);
  log(`threads: ${threadCounts.join(', ')} (webtrain init({ threads }), onnxruntime-web numThreads); environments: ${envs.join(', ')}; webtrain's ${SIMD === 'relaxed' ? 'relaxed-SIMD (FMA)' : 'SIMD128'} builds in Node (--simd)`);
  mkdirSync(OUT_DIR, { recursive: true });
  const mm = sh(PY, [`${ROOT}tests/bench/make_models.py`, MODELS_DIR]);
  if (!mm.ok) throw new Error(`make_models.py failed: ${mm.err}`);
  // The torchvision architectures (skipped, and said so, without Debian's python3-torchvision).
  const tv = wantTorchvision() ? sh(PY, [TV, 'export', MODELS_DIR]) : { ok: true, out: 'SKIP not asked for (--models)' };
  if (!tv.ok) throw new Error(`torchvision_models.py export failed: ${tv.err.trim().split('\n').slice(-3).join(' | ')}`);
  if (tv.out.startsWith('SKIP')) log(`torchvision models: ${tv.out.trim()}`);
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
      const r = worker(['gemm', String(n), String(reps)], { ...env, ...configEnv({ threads: 1 }) });
      record({ ...(r.error ? { kind: 'gemm', n, error: r.error } : r), round });
    }
    log(`gemm_bench.c (emcc), round ${round + 1}/2`);
    for (const r of gemmC(round === 0)) record({ ...r, round });
  };
  if (!flag('--no-gemm')) gemmRound(0);

  let specs = modelSpecs();
  if (onlyModels) specs = specs.filter((s) => onlyModels.includes(s.key));
  const wantRt = (r) => !onlyRuntimes || onlyRuntimes.includes(r);
  const browser = envs.includes('chromium') ? await (await import('./chromium.mjs')).startChromium({ js: snap.root, liftoff: flag('--tiering') }) : null;
  if (browser) log(`Chromium ${browser.version} (${process.env.WEBTRAIN_CHROMIUM ?? '/usr/bin/chromium'}), a cross-origin-isolated page, one Web Worker per measurement`);

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
    if (s.pytorch) runtimes.push('pytorch');
    else runtimes.push('tfjs');
    const perRt = new Map();
    // One measurement: a worker process in Node, a Web Worker of the isolated page in Chromium.
    const measure = (e, rt, c) => {
      if (rt === 'pytorch') return pytorch(s, steps, warmup, evals, env);
      if (e === 'node') return worker(['run', rt, s.key, String(steps), String(warmup), String(evals)], { ...env, ...configEnv(c) });
      return browser.measure({ spec: s, runtime: rt, threads: c.threads, steps, warmup, evals, warmupMs: Number(env.WT_BENCH_WARMUP_MS) });
    };
    const run1 = async (e, rt, c, round) => {
      const id = `${e}|${rt}|${configKey(c)}`;
      log(`${s.key}: ${rt}${e === 'node' ? '' : ` in ${e}`} at ${c.threads} thread(s) (${steps} steps${rounds > 1 ? `, round ${round + 1}/${rounds}` : ''})`);
      let r = await measure(e, rt, c);
      if (r.error && !r.model) r = { kind: 'model', env: e, model: s.key, label: s.label, runtime: rt, threads: c.threads, error: r.error };
      r.round = round;
      if (e !== 'node') r.loadavg = loadavg()[0];
      record(r);
      if (!perRt.has(id)) perRt.set(id, []);
      perRt.get(id).push(r);
      return r;
    };
    // Rounds interleave the runtimes, thread counts and environments, so that a noisy neighbour
    // hurts them alike. TF.js (no threads) runs once per round, in Node only; the Chromium page runs webtrain and ORT.
    for (let round = 0; round < rounds; round++) {
      for (const c of configs) {
        for (const rt of runtimes) {
          if (!wantRt(rt.replace(/-(own|patched)$/, ''))) continue;
          for (const e of envs) {
            if ((rt === 'tfjs' || rt === 'pytorch') && (c !== configs[0] || e !== 'node')) continue; // one thread: measured once
            if (e !== 'node' && !['webtrain', 'ort', 'ort-patched'].includes(rt)) continue;
            if (round > 0 && perRt.get(`${e}|${rt}|${configKey(c)}`)?.every((x) => x.error)) continue;
            const r = await run1(e, rt, c, round);
            if (rt === 'ort' && r.error && /TrainingSession.create/.test(r.error) && !runtimes.includes('ort-patched')) {
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
      }
    }
    for (const [, rs] of perRt) summaries.push(summarize(rs));
  }
  await browser?.close();

  if (!flag('--no-gemm')) gemmRound(1);

  appendFileSync(`${OUT_DIR}results.jsonl`, results.map((r) => JSON.stringify(r)).join('\n') + '\n');
  printTable([...summaries, ...results.filter((r) => r.kind !== 'model')], { threads: threadCounts, envs });
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; JSON lines in ${OUT_DIR}results.jsonl`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
