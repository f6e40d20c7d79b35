// One benchmark measurement per process (so that every runtime starts with a fresh wasm heap and
// the peak heap belongs to one model). Used by tests/bench/run.mjs:
//   node tests/bench/worker.mjs prepare KEY                       -> webtrain artifacts + io.json
//   node tests/bench/worker.mjs run RUNTIME KEY STEPS WARMUP EVALS -> one "RESULT {json}" line
//   node tests/bench/worker.mjs gemm N REPS                        -> one "RESULT {json}" line
// RUNTIME: webtrain | ort (webtrain's artifacts) | ort-own (ONNX Runtime's MNIST artifacts) |
//          webtrain-own (webtrain on ONNX Runtime's MNIST artifacts) | tfjs |
//          ort-patched (webtrain's artifacts with optimizer_model.flag_noshape.onnx)
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { modelSpecs, makeBatches, MODELS_DIR, ORT_MNIST, ROOT } from './models.mjs';
import { watchMemories, timeLoop, measureWebtrain, measureOrt, configureOrt, modelResult } from './measure.mjs';

const [cmd, ...args] = process.argv.slice(2);
// webtrain's js/ + dist/ as run.mjs snapshotted them (the repository's dist/ may be rebuilt by
// someone else during a run); falls back to the repository's own.
const WT_JS = process.env.WT_BENCH_JS ?? `${ROOT}js/`;
const THREADS = Number(process.env.WT_BENCH_THREADS ?? 1); // run.mjs --threads
const RSS_START = process.memoryUsage().rss; // before any runtime is loaded

const memories = watchMemories();

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

const WARMUP_MS = Number(process.env.WT_BENCH_WARMUP_MS ?? 2000);

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

async function runWebtrain(s, art, labelType, o) {
  const wt = await import(`${WT_JS}index.js`);
  const { init, runtimeInfo } = await import(`${WT_JS}core.js`);
  const core = await init({ threads: THREADS });
  return { ...(await measureWebtrain(wt, core, s, art, labelType, o)), threadsReported: runtimeInfo().threads, build: runtimeInfo().build };
}

async function loadOrt() {
  const dist = `${ROOT}node_modules/onnxruntime-web/dist/`;
  const ort = await import(`${dist}ort.training.wasm.min.mjs`);
  configureOrt(ort, THREADS, dist); // wasmPaths: a plain path (a file:// URL makes it fetch its worker and fail)
  return ort;
}

async function runOrt(s, art, io, o) {
  return { ...(await measureOrt(await loadOrt(), s, art, io, o)), heapBytes: memories.heapBytes() };
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
  const train = await timeLoop(o.steps, o.warmup, step, WARMUP_MS);
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
  await wt.init({ threads: THREADS }); // one thread unless asked: init()'s default would take every core
  const session = await wt.InferenceSession.create(readFileSync(`${MODELS_DIR}matmul_${n}.onnx`));
  const a = new wt.Tensor('float32', Float32Array.from({ length: n * n }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5), [n, n]);
  const run = () => session.run({ A: a });
  const t = await timeLoop(reps, Math.max(3, reps >> 2), run, WARMUP_MS);
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
  const o = { steps: Number(steps), warmup: Number(warmup), evals: Number(evals), warmupMs: WARMUP_MS };
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
  // The process's peak resident set (Node reports KiB): what the runtime and its threads cost the
  // machine, beside the wasm Memory (which pthreads share) and malloc's peak.
  const mem = { rssStartBytes: RSS_START, rssPeakBytes: process.resourceUsage().maxRSS * 1024 };
  const out = modelResult(s, runtime, artifacts, r, { env: 'node', threads: runtime === 'tfjs' ? 1 : THREADS, loadavg: loadavg()[0], ...mem }); // (TF.js's wasm backend runs without threads here)
  emit(out);
}

main().catch((err) => {
  emit({ error: String(err?.stack ?? err) });
  process.exit(1);
});
