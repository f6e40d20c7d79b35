// One benchmark measurement per process (so that every runtime starts with a fresh wasm heap and
// the peak heap belongs to one model). Used by tests/bench/run.mjs:
//   node tests/bench/worker.mjs prepare KEY                       -> webtrain artifacts + io.json
//   node tests/bench/worker.mjs run RUNTIME KEY STEPS WARMUP EVALS -> one "RESULT {json}" line
//   node tests/bench/worker.mjs gemm N REPS                        -> one "RESULT {json}" line
// RUNTIME: webtrain | ort (webtrain's artifacts) | ort-own (ONNX Runtime's MNIST artifacts) |
//          webtrain-own (webtrain on ONNX Runtime's MNIST artifacts) | tfjs |
//          ort-patched (webtrain's artifacts with optimizer_model.flag_noshape.onnx)
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { modelSpecs, makeBatches, median, MODELS_DIR, ORT_MNIST, ROOT } from './models.mjs';

const [cmd, ...args] = process.argv.slice(2);
// webtrain's js/ + dist/ as run.mjs snapshotted them (the repository's dist/ may be rebuilt by
// someone else during a run); falls back to the repository's own.
const WT_JS = process.env.WT_BENCH_JS ?? `${ROOT}js/`;
const THREADS = Number(process.env.WT_BENCH_THREADS ?? 1); // run.mjs --threads

// Every wasm Memory any runtime instantiates (exported or imported), to read its size after a run.
const memories = [];
{
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
}
const heapBytes = () => (memories.length ? Math.max(...memories.map((m) => m.buffer.byteLength)) : null);

function spec(key) {
  const s = modelSpecs().find((m) => m.key === key);
  if (!s) throw new Error(`unknown model ${key}`);
  return s;
}

function artDir(key) {
  return `${MODELS_DIR}${key}/`;
}

const ART_FILES = { trainingModel: 'training_model.onnx', evalModel: 'eval_model.onnx', optimizerModel: 'optimizer_model.onnx', checkpoint: 'checkpoint' };

function readArtifacts(dir) {
  return Object.fromEntries(Object.entries(ART_FILES).map(([k, f]) => [k, new Uint8Array(readFileSync(dir + f))]));
}

/** Checkpoint (ODTC flatbuffer) format version: root table field 0. */
function checkpointVersion(bytes, set) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const root = dv.getUint32(0, true);
  const vt = root - dv.getInt32(root, true);
  const off = dv.getUint16(vt + 4, true);
  if (!off) return 0;
  if (set !== undefined) dv.setInt32(root + off, set, true);
  return dv.getInt32(root + off, true);
}

function emit(obj) {
  process.stdout.write(`RESULT ${JSON.stringify(obj)}\n`);
}

// Warm-up: at least `warmup` calls and WARMUP_MS of wall time (V8 compiles wasm in a baseline
// tier first and optimizes hot functions in the background: onnxruntime-web's large module
// needs ~100 steps / 0.6 s of an MLP before its step time settles, at 2x CPU for the tier-up).
const WARMUP_MS = Number(process.env.WT_BENCH_WARMUP_MS ?? 2000);

async function timeLoop(steps, warmup, fn, warmupMs = WARMUP_MS) {
  const w0 = performance.now();
  for (let i = 0; i < warmup || performance.now() - w0 < warmupMs; i++) await fn();
  const t = [];
  for (let i = 0; i < steps; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return { median: median(t), min: Math.min(...t), n: t.length };
}

async function prepare(key) {
  const s = spec(key);
  const wt = await import(`${WT_JS}index.js`);
  const art = await wt.artifacts.generateArtifacts(s.forward, {
    requiresGrad: s.requiresGrad,
    frozenParams: s.frozenParams,
    loss: wt.artifacts.LossType.CrossEntropyLoss,
    optimizer: s.optimizer,
  });
  const dir = artDir(key);
  mkdirSync(dir, { recursive: true });
  for (const [k, f] of Object.entries(ART_FILES)) writeFileSync(dir + f, art[k]);
  const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await wt.Module.create(art.trainingModel, state, art.evalModel);
  const io = {};
  for (const [mode, name] of [[0, 'train'], [1, 'eval']]) {
    if (mode) module.eval();
    io[name] = module.inputNames().map((n, i) => ({ name: n, dtype: wt.Tensor.typeName(module.m._wtw_module_input_dtype(module.h, mode, i)) }));
  }
  io.checkpointVersion = checkpointVersion(art.checkpoint);
  writeFileSync(`${dir}io.json`, JSON.stringify(io));
  module.release();
  state.release();
  emit({ prepared: key, io });
}

function labelsAs(labels, dtype) {
  return dtype === 'int64' ? BigInt64Array.from(labels, (v) => BigInt(v)) : dtype === 'int32' ? labels : Float32Array.from(labels);
}

async function runWebtrain(s, art, labelType, o) {
  const wt = await import(`${WT_JS}index.js`);
  const { init } = await import(`${WT_JS}core.js`);
  const core = await init({ threads: THREADS });
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
  const train = await timeLoop(o.steps, o.warmup, step);
  module.eval();
  const ev = await timeLoop(o.evals, Math.min(5, o.warmup), () => module.runAll(...batches[k++ % batches.length]), WARMUP_MS / 3);
  const r = { train, eval: ev, heapBytes: core.heap.buffer.byteLength, heapInitBytes: heap0, brkGrowthBytes: brk() - brk0, params: module.getParametersSize(true), paramsAll: module.getParametersSize(false), loss0, loss };
  if (stats && module.m._wtw_module_memory) {
    // Issue 6's bound: parameters + gradients + optimizer moments + the activations the backward
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

async function loadOrt() {
  const dist = `${ROOT}node_modules/onnxruntime-web/dist/`;
  const ort = await import(`${dist}ort.training.wasm.min.mjs`);
  ort.env.wasm.numThreads = THREADS;
  ort.env.wasm.wasmPaths = dist;
  ort.env.wasm.proxy = false;
  // ORT infers a scalar for SGDOptimizerV2's flag while its kernel returns shape [1]: without
  // this, every optimizer step of an SGD model prints a warning (and pays for it); see also the
  // session option logSeverityLevel in runOrt.
  ort.env.logLevel = 'error';
  return ort;
}

async function runOrt(s, art, io, o) {
  const ort = await loadOrt();
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
    train = await timeLoop(o.steps, o.warmup, step);
  } catch (err) {
    return { error: `runTrainStep: ${String(err?.message ?? err).split('\n').slice(0, 3).join(' | ')}` };
  }
  const ev = await timeLoop(o.evals, Math.min(5, o.warmup), () => session.runEvalStep(evalFeeds[k++ % evalFeeds.length]), WARMUP_MS / 3);
  const params = await session.getParametersSize(true);
  await session.release();
  return { train, eval: ev, heapBytes: heapBytes(), params, loss0, loss };
}

async function runTfjs(s, o) {
  const tf = await import('@tensorflow/tfjs');
  const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
  setWasmPaths(`${ROOT}node_modules/@tensorflow/tfjs-backend-wasm/dist/`);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  await tf.setBackend('wasm');
  await tf.ready();
  if (!s.tf) return { error: 'no equivalent TF.js model in this benchmark' };
  const data = makeBatches(s);
  const model = tf.sequential();
  let optimizer;
  let toX;
  if (s.tf.kind === 'mlp') {
    const sz = s.tf.sizes;
    for (let i = 1; i < sz.length; i++) model.add(tf.layers.dense({ units: sz[i], activation: i < sz.length - 1 ? 'relu' : 'linear', inputShape: i === 1 ? [sz[0]] : undefined }));
    optimizer = tf.train.adam(s.lr); // TF.js has no AdamW; Adam does the same work per parameter
    toX = (inputs) => tf.tensor2d(inputs[0].data, inputs[0].dims);
  } else {
    model.add(tf.layers.conv2d({ filters: 8, kernelSize: 3, padding: 'same', inputShape: [28, 28, 1] }));
    model.add(tf.layers.batchNormalization({ momentum: 0.9, epsilon: 1e-5 }));
    model.add(tf.layers.activation({ activation: 'relu' }));
    model.add(tf.layers.maxPooling2d({ poolSize: 2 }));
    model.add(tf.layers.conv2d({ filters: 16, kernelSize: 3, padding: 'same', activation: 'relu' }));
    model.add(tf.layers.globalAveragePooling2d({}));
    model.add(tf.layers.dense({ units: 10 }));
    optimizer = tf.train.sgd(s.lr);
    toX = (inputs) => tf.tensor4d(inputs[0].data, [s.batch, 28, 28, 1]); // NHWC, same values
  }
  const batches = data.map(({ inputs, labels }) => ({ x: toX(inputs), y: tf.tidy(() => tf.oneHot(tf.tensor1d(labels, 'int32'), s.classes).toFloat()) }));
  let k = 0;
  const lossOf = (training) => {
    const { x, y } = batches[k++ % batches.length];
    return tf.losses.softmaxCrossEntropy(y, model.apply(x, { training }));
  };
  let loss0 = null;
  let loss = null;
  const step = () => {
    const l = optimizer.minimize(() => lossOf(true), true);
    loss = l.dataSync()[0];
    if (loss0 === null) loss0 = loss;
    l.dispose();
  };
  const train = await timeLoop(o.steps, o.warmup, step);
  const ev = await timeLoop(o.evals, Math.min(5, o.warmup), () => {
    const l = tf.tidy(() => lossOf(false));
    l.dataSync();
    l.dispose();
  }, WARMUP_MS / 3);
  const params = model.countParams();
  return { train, eval: ev, heapBytes: tf.backend().wasm.HEAPU8.buffer.byteLength, params, loss0, loss, note: s.optimizer.type === 'AdamW' ? 'Adam (TF.js has no AdamW)' : undefined };
}

async function gemm(n, reps) {
  const wt = await import(`${WT_JS}index.js`);
  const session = await wt.InferenceSession.create(readFileSync(`${MODELS_DIR}matmul_${n}.onnx`));
  const a = new wt.Tensor('float32', Float32Array.from({ length: n * n }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5), [n, n]);
  const run = () => session.run({ A: a });
  const t = await timeLoop(reps, Math.max(3, reps >> 2), run);
  session.release();
  const flops = 2 * n * n * n;
  emit({ kind: 'gemm', source: 'webtrain InferenceSession, one MatMul (includes input copy-in/out)', n, ms: t.median, gflops: flops / (t.median * 1e6), reps: t.n, simd: wt.runtimeInfo()?.simd });
}

async function main() {
  if (cmd === 'prepare') return prepare(args[0]);
  if (cmd === 'gemm') return gemm(Number(args[0]), Number(args[1]));
  if (cmd !== 'run') throw new Error(`unknown command ${cmd}`);
  const [runtime, key, steps, warmup, evals] = args;
  const s = spec(key);
  const o = { steps: Number(steps), warmup: Number(warmup), evals: Number(evals) };
  const io = JSON.parse(readFileSync(`${artDir(key)}io.json`, 'utf8'));
  let r;
  let artifacts = 'webtrain';
  if (runtime === 'webtrain') {
    r = await runWebtrain(s, readArtifacts(artDir(key)), io.train[io.train.length - 1].dtype, o);
  } else if (runtime === 'ort' || runtime === 'ort-patched') {
    const art = readArtifacts(artDir(key));
    if (runtime === 'ort-patched') {
      // webtrain's artifacts except the optimizer model, copied by make_models.py --flag-without-shape
      artifacts = 'webtrain, optimizer output patched';
      art.optimizerModel = new Uint8Array(readFileSync(`${artDir(key)}optimizer_model.flag_noshape.onnx`));
    }
    r = await runOrt(s, art, io, o);
  } else if (runtime === 'ort-own' || runtime === 'webtrain-own') {
    artifacts = 'onnxruntime';
    const art = readArtifacts(ORT_MNIST);
    checkpointVersion(art.checkpoint, 2); // ORT-web 1.19.2 reads version 2 only; v2 only adds an optional field
    const ioOwn = { train: [{ name: 'input', dtype: 'float32' }, { name: 'labels', dtype: 'int64' }], eval: [{ name: 'input', dtype: 'float32' }, { name: 'labels', dtype: 'int64' }] };
    if (runtime === 'ort-own') r = await runOrt(s, art, ioOwn, o);
    else {
      try {
        r = await runWebtrain(s, art, 'int64', o);
      } catch (err) {
        r = { error: String(err?.message ?? err).split('\n')[0] };
      }
    }
  } else if (runtime === 'tfjs') {
    artifacts = 'tfjs layers';
    r = await runTfjs(s, o);
  } else throw new Error(`unknown runtime ${runtime}`);
  const stepFlops = 3 * s.forwardFlops;
  const exactFlops = s.forwardFlops + s.backwardFlops;
  const out = { kind: 'model', time: new Date().toISOString(), loadavg: (await import('node:os')).loadavg()[0], model: key, label: s.label, runtime, artifacts, batch: s.batch, optimizer: s.optimizer.type, forwardFlops: s.forwardFlops, stepFlops, exactFlops, ...r };
  if (r.train) {
    out.stepMs = r.train.median;
    out.evalMs = r.eval.median;
    out.gflops = stepFlops / (r.train.median * 1e6); // 3x forward, as issue 6 counts
    out.gflopsExact = exactFlops / (r.train.median * 1e6); // forward + the gradient products actually needed
  }
  emit(out);
}

main().catch((err) => {
  emit({ error: String(err?.stack ?? err) });
  process.exit(1);
});
