// run.mjs's tables: the training steps (one row per model, environment, runtime and thread
// count), the thread speed-ups and the memory threads add, webtrain's memory against its
// bound, and the GEMM rows.

const fmt = (x, d = 2) => (x === undefined || x === null || Number.isNaN(x) ? 'n/a' : x.toFixed(d));
const mb = (b) => (b ? (b / 1048576).toFixed(1) : 'n/a');

/** Prints rows (the first is the header) as aligned columns: the first `left` columns left-aligned, the rest right-aligned (but the last, with `note`). */
function columns(t, left = 1, note = false) {
  const w = t[0].map((_, i) => Math.max(...t.map((r) => String(r[i]).length)));
  const right = (i) => i >= left && !(note && i === t[0].length - 1);
  const line = (r) => r.map((c, i) => (right(i) ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  ').trimEnd();
  console.log(line(t[0]));
  console.log(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of t.slice(1)) console.log(line(r));
}

/** The row's model label with its environment and thread count where the run has several. */
const where = (r, many) => [r.label ?? r.model, many.envs ? r.env : '', many.threads ? `${r.threads} thr` : ''].filter(Boolean).join(', ');

/**
 * The memory bound: peak heap <= parameters + gradients + optimizer moments + the
 * activations the backward pass needs, + 20%. "saved" = the forward activations the backward
 * pass reads (alive when it starts); "live" = the training plan's busiest step (saved + activation
 * gradients + gradient temporaries + scratch), which is what its arena must hold.
 */
function printMemory(rows, many) {
  if (!rows.length) return;
  const t = [['model', 'Memory', 'static+stack', 'malloc peak', 'P+G+M', 'saved', 'live', 'arena', 'bound', 'peak/bound', 'bound(live)', 'peak/bound(live)']];
  for (const r of rows) {
    const st = r.stateBytes.params + r.stateBytes.grads + r.stateBytes.moments;
    const boundLive = 1.2 * (st + r.livePeakTrainBytes);
    t.push([where(r, many), mb(r.heapBytes), mb(r.heapBaseBytes), mb(r.mallocPeakBytes), mb(st), mb(r.savedBytes), mb(r.livePeakTrainBytes), mb(r.arenaBytes), mb(r.boundBytes), fmt(r.mallocPeakBytes / r.boundBytes), mb(boundLive), fmt(r.mallocPeakBytes / boundLive)]);
  }
  console.log('\nwebtrain memory (MB; bound: peak <= 1.2 x (params + grads + optimizer moments + activations the backward pass needs))');
  console.log('Memory = wasm Memory size after the run (its peak: it only grows), = static data + 256 KiB stack + malloc\'s heap + growth slack;');
  console.log('malloc peak = the most bytes malloc took (dlmalloc footprint); saved = forward activations read by the backward pass;');
  console.log('live = the training plan\'s busiest step (saved + activation gradients + gradient temporaries + scratch); bound = 1.2 x (P+G+M + saved).');
  columns(t);
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

/** The row's ratio partner: webtrain in the same environment at the same thread count. */
const key = (r, runtime = r.runtime) => `${r.env ?? 'node'}|${r.model}|${runtime}|${r.threads ?? 1}`;

/**
 * All tables. `all`: the summarized model rows and the GEMM records; `run`: { threads: the
 * thread counts measured, envs: the environments }.
 */
export function printTable(all, run) {
  const many = { threads: run.threads.length > 1, envs: run.envs.length > 1 };
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
  const rows = [['model', 'env', 'runtime', 'thr', 'artifacts', 'ms/step', 'min', 'cpu ms', 'eval ms', 'heap MB', 'GF/s 3x', 'GF/s exact', 'webtrain/peer', 'note']];
  const byKey = new Map(models.map((r) => [key(r), r]));
  const order = [...new Set(models.map((r) => r.model))];
  const sorted = order.flatMap((m) => models.filter((r) => r.model === m));
  for (const r of sorted) {
    const wt = byKey.get(key(r, 'webtrain'));
    const cpuRatio = r.runtime !== 'webtrain' && r.cpuMs && wt?.cpuMs ? ` (cpu ${fmt(wt.cpuMs / r.cpuMs)}x)` : '';
    const ratio = r.runtime !== 'webtrain' && r.stepMs && wt?.stepMs ? `${fmt(wt.stepMs / r.stepMs)}x${cpuRatio}` : '';
    const note = r.error ? `ERROR ${r.error.split('\n')[0]}`.slice(0, 160) : [r.note, r.runtime === 'webtrain' && r.mallocPeakBytes ? `malloc peak ${mb(r.mallocPeakBytes)} MB (bound ${mb(r.boundBytes)} MB)` : r.runtime === 'webtrain' && r.brkGrowthBytes ? `malloc'd ${mb(r.brkGrowthBytes)} MB (params+grads+moments ${mb(4 * (r.paramsAll + r.params * (r.optimizer === 'SGD' ? 1 : 3)))} MB)` : '', r.threadsReported && r.threadsReported !== r.threads ? `RAN ${r.threadsReported} THREAD(S)` : '', `load ${fmt(r.loadavg, 1)}`].filter(Boolean).join('; ');
    rows.push([r.label ?? r.model, r.env ?? 'node', r.runtime, String(r.threads ?? 1), r.artifacts ?? '', fmt(r.stepMs), fmt(r.train?.min), fmt(r.cpuMs), fmt(r.evalMs), mb(r.heapBytes), fmt(r.gflops, 1), fmt(r.gflopsExact, 1), ratio, note]);
  }
  console.log(`\nTraining step (train + optimizer + lazyResetGrad) at ${run.threads.join(', ')} thread(s) (thr), in ${run.envs.join(' and ')}; median over the timed steps`);
  console.log('GF/s: MatMul/Gemm/Conv FLOPs per step / median step time; "3x" counts forward+backward as 3x forward,');
  console.log('"exact" counts forward + only the gradient products needed (no dX of a first layer). heap = wasm Memory bytes after the run.');
  console.log('webtrain/peer: webtrain\'s step / the peer\'s, in the same environment at the same thread count; (cpu ...): the same');
  console.log('with cpu ms, the median step\'s process CPU time (Node and PyTorch only; all threads): on a busy machine it leaves out waiting for a core.');
  columns(rows, 5, true);
  if (many.threads) printThreads(models, run);
  if (many.threads) printThreadMemory(models, run);
  printMemory(models.filter((r) => r.runtime === 'webtrain' && r.mallocPeakBytes), many);
  console.log('\nGEMM (single thread, float32; best of the rounds before and after the models)');
  for (const r of results.filter((x) => x.kind === 'gemm')) console.log(r.error ? `  n=${r.n}: ERROR ${r.error}` : `  webtrain MatMul n=${String(r.n).padEnd(4)} ${fmt(r.gflops, 1).padStart(6)} GFLOP/s  (${fmt(r.ms, 3)} ms, through InferenceSession.run; ${r.simd ?? 'wasm-simd128'})`);
  for (const r of results.filter((x) => x.kind === 'gemm-c')) console.log(r.error ? `  gemm_bench.c: ERROR ${r.error}` : `  gemm_bench.c ${r.shape.padEnd(7)} ${r.trans} M=${String(r.M).padStart(4)} N=${String(r.N).padStart(4)} K=${String(r.K).padStart(4)} ${fmt(r.gflops, 1).padStart(6)} GFLOP/s  (${r.simd ?? 'simd128'})`);
  if (ceiling) {
    console.log(`\nwebtrain step GFLOP/s as a fraction of the best GEMM n=512 rate (${fmt(ceiling, 1)} GFLOP/s): 3x count / exact count`);
    for (const r of models.filter((x) => x.runtime === 'webtrain' && x.gflops && (x.threads ?? 1) === 1)) console.log(`  ${where(r, many).padEnd(36)} ${fmt((100 * r.gflops) / ceiling, 0).padStart(4)}% / ${fmt((100 * r.gflopsExact) / ceiling, 0).padStart(3)}%`);
  }
}

/** onnxruntime-web's row for (env, model, threads): on webtrain's artifacts, else on the patched ones. */
function ortRow(byKey, r, threads) {
  for (const rt of ['ort', 'ort-patched']) {
    const o = byKey.get(key({ ...r, threads }, rt));
    if (o?.stepMs) return o;
  }
  return null;
}

/** Per model and environment: webtrain's and ORT's step at each thread count, the speed-up over 1 thread, and webtrain/ORT at the same count. */
function printThreads(models, run) {
  const ts = run.threads;
  const up = ts.filter((t) => t > 1);
  const byKey = new Map(models.map((r) => [key(r), r]));
  const t = [['model', 'env', ...ts.map((n) => `wt ${n}`), ...up.map((n) => `wt x${n}`), ...ts.map((n) => `ort ${n}`), ...up.map((n) => `ort x${n}`), ...ts.map((n) => `wt/ort ${n}`)]];
  const seen = new Set();
  for (const r of models) {
    const id = `${r.env}|${r.model}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const wt = (n) => byKey.get(key({ ...r, threads: n }, 'webtrain'))?.stepMs;
    const ort = (n) => ortRow(byKey, r, n)?.stepMs;
    const speedup = (f, n) => (f(1) && f(n) ? `${fmt(f(1) / f(n))}x` : 'n/a');
    const ratio = (n) => (wt(n) && ort(n) ? `${fmt(wt(n) / ort(n))}x` : 'n/a');
    t.push([r.label ?? r.model, r.env ?? 'node', ...ts.map((n) => fmt(wt(n))), ...up.map((n) => speedup(wt, n)), ...ts.map((n) => fmt(ort(n))), ...up.map((n) => speedup(ort, n)), ...ts.map(ratio)]);
  }
  console.log('\nThreads: ms/step at each thread count (wt = webtrain: at 1 thread its single-threaded build, above that the threaded one;');
  console.log('ort = onnxruntime-web 1.19.2 numThreads), xN = the step at 1 thread / at N threads, wt/ort N = webtrain / ORT at N threads.');
  columns(t, 2);
}

/** What threads add to memory: per model, environment, runtime and thread count, the wasm Memory, malloc's peak and the process's peak RSS, and each minus its 1-thread value. */
function printThreadMemory(models, run) {
  const byKey = new Map(models.map((r) => [key(r), r]));
  const delta = (r, f) => {
    const one = byKey.get(key({ ...r, threads: 1 }));
    return r.threads > 1 && f(r) && f(one ?? {}) ? `${f(r) >= f(one) ? '+' : ''}${((f(r) - f(one)) / 1048576).toFixed(1)}` : '';
  };
  const t = [['model', 'env', 'runtime', 'thr', 'Memory', '+thr', 'malloc peak', '+thr', 'RSS peak', '+thr', 'RSS at start']];
  const rows = models.filter((r) => r.stepMs && (r.runtime === 'webtrain' || r.runtime.startsWith('ort')));
  const order = [...new Map(rows.map((r) => [key({ ...r, threads: 1 }), r])).values()];
  for (const first of order) {
    for (const n of run.threads) {
      const r = byKey.get(key({ ...first, threads: n }));
      if (!r?.stepMs) continue;
      t.push([r.label ?? r.model, r.env ?? 'node', r.runtime, String(n), mb(r.heapBytes), delta(r, (x) => x.heapBytes), mb(r.mallocPeakBytes), delta(r, (x) => x.mallocPeakBytes), mb(r.rssPeakBytes), delta(r, (x) => x.rssPeakBytes), mb(r.rssStartBytes)]);
    }
  }
  console.log('\nMemory per thread count (MB; +thr = minus the same runtime at 1 thread). Memory = the wasm Memory\'s size after the run (its peak;');
  console.log('shared by the threads); malloc peak = webtrain\'s dlmalloc peak (thread stacks and per-thread scratch come from it);');
  console.log('RSS peak = the Node worker process\'s peak resident set (process.resourceUsage().maxRSS; Chromium: n/a), RSS at start = before loading a runtime.');
  columns(t, 4);
}
