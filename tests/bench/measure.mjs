// One training measurement, shared by the Node worker (worker.mjs: one process per measurement)
// and the Chromium page's worker (pages/bench-worker.mjs: one Web Worker per measurement). No
// Node built-ins here: the caller loads the runtime (webtrain's core at its thread count,
// onnxruntime-web configured by configureOrt) and reads the artifacts.
import { makeBatches, median } from './data.mjs';

/**
 * Records every wasm Memory any runtime instantiates from now on (exported or imported), to
 * read its size after a run: { heapBytes() } -> the largest one's byteLength, or null.
 */
export function watchMemories() {
  const memories = [];
  const orig = WebAssembly.instantiate;
  const note = (imports, result) => {
    const inst = result instanceof WebAssembly.Instance ? result : result.instance;
    for (const v of Object.values(inst?.exports ?? {})) if (v instanceof WebAssembly.Memory) memories.push(v);
    for (const mod of Object.values(imports ?? {})) for (const v of Object.values(mod ?? {})) if (v instanceof WebAssembly.Memory) memories.push(v);
    return result;
  };
  WebAssembly.instantiate = async function (src, imports) {
    return note(imports, await orig.call(this, src, imports));
  };
  if (WebAssembly.instantiateStreaming) {
    const origS = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = async function (src, imports) {
      return note(imports, await origS.call(this, src, imports));
    };
  }
  return { heapBytes: () => (memories.length ? Math.max(...memories.map((m) => m.buffer.byteLength)) : null) };
}

/**
 * Times `steps` calls of fn after a warm-up of at least `warmup` calls and `warmupMs` of wall
 * time (V8 compiles wasm in a baseline tier first and optimizes hot functions in the background:
 * onnxruntime-web's large module needs ~100 steps / 0.6 s of an MLP before its step time
 * settles, at 2x CPU for the tier-up). -> { median, min, n } in ms, and in Node cpuMedian: the
 * median of each step's process CPU time (user + system, every thread: on a busy shared machine
 * it leaves out the time the process waited for a core, which the wall clock counts).
 */
export async function timeLoop(steps, warmup, fn, warmupMs) {
  const w0 = performance.now();
  for (let i = 0; i < warmup || performance.now() - w0 < warmupMs; i++) await fn();
  const t = [];
  const cpu = [];
  const usage = globalThis.process?.cpuUsage; // Node only (not in Chromium's workers)
  for (let i = 0; i < steps; i++) {
    const c0 = usage?.();
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
    if (c0) {
      const c = usage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
  }
  return { median: median(t), min: Math.min(...t), n: t.length, ...(cpu.length ? { cpuMedian: median(cpu) } : {}) };
}

export function labelsAs(labels, dtype) {
  return dtype === 'int64' ? BigInt64Array.from(labels, (v) => BigInt(v)) : dtype === 'int32' ? labels : Float32Array.from(labels);
}

/**
 * webtrain: `wt` is its API (js/index.js or web/index.js), `core` what init() resolved to (at
 * the thread count wanted). art: { trainingModel, evalModel, optimizerModel, checkpoint } bytes;
 * o: { steps, warmup, evals, warmupMs }. -> timings, heap figures and losses.
 */
export async function measureWebtrain(wt, core, s, art, labelType, o) {
  // Builds with wtw_heap_stats report malloc's own figures; older ones are probed by a malloc
  // (which itself grows the heap by 8 MB, so their Memory size is not comparable).
  const stats = typeof core.heapStats === 'function' && core.m._wtw_heap_stats ? () => core.heapStats() : null;
  const brk = () => {
    if (stats) return stats().heapTop;
    const p = core.malloc(8 << 20);
    core.free(p);
    return p;
  };
  const stats0 = stats?.();
  const brk0 = brk();
  const heap0 = core.heap.buffer.byteLength;
  const batches = makeBatches(s).map(({ inputs, labels }) => [
    ...inputs.map((i) => new wt.Tensor(i.kind === 'ids' ? 'int64' : 'float32', i.data, i.dims)),
    new wt.Tensor(labelType, labelsAs(labels, labelType), [s.batch]),
  ]);
  let k = 0;
  const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await wt.Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(s.lr);
  module.train();
  let loss0 = null;
  let loss = null;
  const step = () => {
    const out = module.runAll(...batches[k++ % batches.length]);
    loss = out[0].data[0];
    if (loss0 === null) loss0 = loss;
    optimizer.step();
    module.lazyResetGrad();
  };
  const train = await timeLoop(o.steps, o.warmup, step, o.warmupMs);
  module.eval();
  const ev = await timeLoop(o.evals, Math.min(5, o.warmup), () => module.runAll(...batches[k++ % batches.length]), o.warmupMs / 3);
  const r = { train, eval: ev, heapBytes: core.heap.buffer.byteLength, heapInitBytes: heap0, brkGrowthBytes: brk() - brk0, params: module.getParametersSize(true), paramsAll: module.getParametersSize(false), loss0, loss };
  if (stats && module.m._wtw_module_memory) {
    // The memory bound: parameters + gradients + optimizer moments + the activations the backward
    // pass needs (the forward values it reads: savedBytes), +20%. livePeakTrainBytes is what the
    // training plan's arena needs at its busiest step (saved activations + activation gradients
    // + gradient temporaries + scratch).
    const h = stats();
    module.train();
    const mm = module.memoryStats();
    Object.assign(r, { heapBaseBytes: h.heapBase, mallocPeakBytes: h.mallocPeak, mallocInUseBytes: h.mallocInUse, mallocAtStartBytes: stats0.mallocInUse, arenaBytes: mm.arena, livePeakTrainBytes: mm.livePeakTrain, livePeakEvalBytes: mm.livePeakEval, savedBytes: mm.saved, stateBytes: { params: mm.params, grads: mm.grads, moments: mm.moments } });
    r.needBytes = mm.params + mm.grads + mm.moments + mm.saved;
    r.boundBytes = 1.2 * r.needBytes;
  }
  optimizer.release();
  module.release();
  state.release();
  return r;
}

/** onnxruntime-web 1.19.2's training build: `threads` threads, its files at `wasmPaths` (ending in '/'), no proxy worker. */
export function configureOrt(ort, threads, wasmPaths) {
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.wasmPaths = wasmPaths;
  ort.env.wasm.proxy = false;
  // ORT infers a scalar for SGDOptimizerV2's flag while its kernel returns shape [1]: without
  // this, every optimizer step of an SGD model prints a warning (and pays for it); see also the
  // session option logSeverityLevel in measureOrt.
  ort.env.logLevel = 'error';
  return ort;
}

/** onnxruntime-web (configured) on the same artifacts; io: the input names and dtypes webtrain's prepare step wrote. */
export async function measureOrt(ort, s, art, io, o) {
  const names = io.train.map((x) => x.name);
  const lt = io.train[names.length - 1].dtype;
  const allFeeds = makeBatches(s).map(({ inputs, labels }) => {
    const feeds = {};
    inputs.forEach((inp, i) => {
      feeds[names[i]] = new ort.Tensor(inp.kind === 'ids' ? 'int64' : 'float32', inp.data, inp.dims);
    });
    feeds[names[names.length - 1]] = new ort.Tensor(lt, labelsAs(labels, lt), [s.batch]);
    return feeds;
  });
  let k = 0;
  let session;
  try {
    session = await ort.TrainingSession.create({ checkpointState: art.checkpoint, trainModel: art.trainingModel, evalModel: art.evalModel, optimizerModel: art.optimizerModel }, { logSeverityLevel: 3 });
  } catch (err) {
    return { error: `TrainingSession.create: ${String(err?.message ?? err).split('\n').slice(0, 3).join(' | ')}` };
  }
  const evalFeeds = allFeeds.map((feeds) => Object.fromEntries(session.evalInputNames.map((n) => [n, feeds[n]])));
  let loss0 = null;
  let loss = null;
  const lossName = session.trainingOutputNames[0];
  const step = async () => {
    const out = await session.runTrainStep(allFeeds[k++ % allFeeds.length]);
    loss = out[lossName].data[0];
    if (loss0 === null) loss0 = loss;
    await session.runOptimizerStep();
    await session.lazyResetGrad();
  };
  let train;
  try {
    train = await timeLoop(o.steps, o.warmup, step, o.warmupMs);
  } catch (err) {
    return { error: `runTrainStep: ${String(err?.message ?? err).split('\n').slice(0, 3).join(' | ')}` };
  }
  const ev = await timeLoop(o.evals, Math.min(5, o.warmup), () => session.runEvalStep(evalFeeds[k++ % evalFeeds.length]), o.warmupMs / 3);
  const params = await session.getParametersSize(true);
  await session.release();
  // ORT falls back to 1 thread (with a console warning) where threads cannot run: what it used.
  return { train, eval: ev, params, loss0, loss, threadsReported: ort.env.wasm.numThreads };
}

/** The JSON record of one model measurement (run.mjs reads these): `r` from measureWebtrain/measureOrt/..., `extra` (threads, env, memory) added. */
export function modelResult(s, runtime, artifacts, r, extra) {
  const stepFlops = 3 * s.forwardFlops;
  const exactFlops = s.forwardFlops + s.backwardFlops;
  const out = { kind: 'model', time: new Date().toISOString(), model: s.key, label: s.label, runtime, artifacts, batch: s.batch, optimizer: s.optimizer.type, forwardFlops: s.forwardFlops, stepFlops, exactFlops, ...extra, ...r };
  if (r.train) {
    out.stepMs = r.train.median;
    out.evalMs = r.eval.median;
    out.gflops = stepFlops / (r.train.median * 1e6); // 3x forward, the usual count
    out.gflopsExact = exactFlops / (r.train.median * 1e6); // forward + the gradient products actually needed
  }
  return out;
}
