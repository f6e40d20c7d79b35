#!/usr/bin/env node
// The main job (`npm start`): personalize a pretrained digit classifier, in WebAssembly, in Node.
//
// demo/models/digits/ holds a small classifier (8x8 digits, Linear(64,32)-ReLU-Linear(32,10))
// pretrained on "public" handwriting, and a held-out "personal" set written with a strong slant,
// where it does much worse (both made by scripts/make_digits_model.py). This script:
//   1. generates the training artifacts (CrossEntropyLoss, AdamW, every parameter trainable)
//      into out/digits/;
//   2. measures accuracy on the personal test split before fine-tuning;
//   3. fine-tunes on the personal train split in minibatches, with a progress bar showing loss;
//   4. measures accuracy again, saves the checkpoint, exports the inference model, and checks
//      that the exported model (loaded in an InferenceSession) gives the same accuracy.
// Exits 0 only if accuracy improved and the exported model agrees.
//
// Every parameter is trained, not just the last layer: the shift is in the input (slanted
// strokes), so the first layer's features are what must adapt; the model has 2,410 parameters,
// so training all of them costs nothing.
import { mkdir, readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointState, InferenceSession, LinearLRScheduler, Module, Optimizer, Tensor, artifacts, fit, init } from '../js/index.js';

const EPOCHS = 8;
const BATCH = 32;
const LR = 5e-3;
const SEED = 1;

const t0 = performance.now();
const root = new URL('../', import.meta.url);
const path = (rel) => fileURLToPath(new URL(rel, root));
const show = (p) => relative(process.cwd(), p) || '.';
const step = (msg) => console.log(`[webtrain] ${msg}`);
const pct = (a) => `${(100 * a).toFixed(1)}%`;

const demoDir = path('demo/models/digits/');
const outDir = path('out/digits/');
const modelPath = `${demoDir}model.onnx`;
const checkpointPath = `${outDir}checkpoint.trained`;
const exportPath = `${outDir}digits-finetuned.onnx`;

// ---- data -----------------------------------------------------------------------------------
const meta = JSON.parse(await readFile(`${demoDir}meta.json`, 'utf8'));

async function loadSplit(name) {
  const load = async (ref, Arr) => {
    const buf = await readFile(`${demoDir}${ref.file}`);
    const data = new Arr(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    const n = ref.shape.reduce((a, b) => a * b, 1);
    if (data.length !== n) throw new Error(`${ref.file}: ${data.length} values; meta.json says [${ref.shape}]`);
    return data;
  };
  const x = await load(meta.files[`${name}_x`], Float32Array);
  const y = await load(meta.files[`${name}_y`], Int32Array);
  return { x, y, n: y.length, features: x.length / y.length };
}

/** Rows `idx` of a split as (input [b,64] float32, labels [b] int32) tensors. */
function batchOf(split, idx) {
  const f = split.features;
  const x = new Float32Array(idx.length * f);
  const y = new Int32Array(idx.length);
  idx.forEach((r, i) => {
    x.set(split.x.subarray(r * f, (r + 1) * f), i * f);
    y[i] = split.y[r];
  });
  return [new Tensor('float32', x, [idx.length, f]), new Tensor('int32', y, [idx.length])];
}

/** Deterministic shuffles (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function shuffled(n, rand) {
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

const argmaxHits = (logits, labels) => {
  const [n, k] = logits.dims;
  let hits = 0;
  for (let r = 0; r < n; r++) {
    let best = 0;
    for (let c = 1; c < k; c++) if (logits.data[r * k + c] > logits.data[r * k + best]) best = c;
    if (best === labels[r]) hits++;
  }
  return hits;
};

/** Accuracy and mean loss of the module's eval model (outputs: loss, logits) on a split. */
function evaluate(module, split) {
  module.eval();
  let hits = 0;
  let loss = 0;
  const all = Array.from({ length: split.n }, (_, i) => i);
  for (let i = 0; i < split.n; i += 128) {
    const idx = all.slice(i, i + 128);
    const [x, y] = batchOf(split, idx);
    const [l, logits] = module.runAll(x, y);
    loss += l.data[0] * idx.length;
    hits += argmaxHits(logits, y.data);
  }
  return { accuracy: hits / split.n, hits, loss: loss / split.n };
}

/** Accuracy of a plain inference model on a split, in one batch. */
async function inferenceAccuracy(model, split) {
  const session = await InferenceSession.create(model);
  try {
    const [x, y] = batchOf(split, Array.from({ length: split.n }, (_, i) => i));
    const { output } = await session.run({ input: x });
    const hits = argmaxHits(output, y.data);
    return { accuracy: hits / split.n, hits };
  } finally {
    session.release();
  }
}

// ---- the job ---------------------------------------------------------------------------------
step('loading the WebAssembly core');
const core = await init();
step(`core ready (kernels: ${core.simdName()})`);

const train = await loadSplit('personal_train');
const test = await loadSplit('personal_test');
step(`model ${show(modelPath)}: pretrained on public digits (${pct(meta.pretrained_accuracy.public_test)} on held-out public digits)`);
step(`personal data: ${train.n} digits to fine-tune on, ${test.n} to test on (slanted handwriting)`);

step(`generating training artifacts into ${show(outDir)} (CrossEntropyLoss, AdamW, every parameter trainable: ${meta.model.parameters.join(', ')})`);
await mkdir(outDir, { recursive: true });
await artifacts.generateArtifacts(modelPath, {
  requiresGrad: meta.model.parameters,
  frozenParams: [],
  loss: artifacts.LossType.CrossEntropyLoss,
  optimizer: artifacts.OptimType.AdamW,
  additionalOutputNames: ['output'],
  artifactDirectory: outDir,
});

const state = await CheckpointState.loadCheckpoint(`${outDir}checkpoint`);
const module = await Module.create(`${outDir}training_model.onnx`, state, `${outDir}eval_model.onnx`);
const optimizer = await Optimizer.create(`${outDir}optimizer_model.onnx`, module);
let ok = true;
try {
  const before = evaluate(module, test);
  const reference = await inferenceAccuracy(modelPath, test);
  step(`before fine-tuning: accuracy ${pct(before.accuracy)} (${before.hits}/${test.n}), loss ${before.loss.toFixed(4)} on the personal test set`);
  if (reference.hits !== before.hits) {
    step(`MISMATCH: the original model in an InferenceSession gets ${reference.hits}/${test.n}; the eval model ${before.hits}/${test.n}`);
    ok = false;
  }

  const perEpoch = Math.ceil(train.n / BATCH);
  const scheduler = new LinearLRScheduler(optimizer, 0, EPOCHS * perEpoch, LR);
  step(`fine-tuning: ${EPOCHS} epochs x ${perEpoch} minibatches of ${BATCH}, AdamW, learning rate ${LR} decaying linearly to 0`);
  const rand = rng(SEED);
  const tTrain = performance.now();
  // The package's training loop (js/loop.js's fit, as in the browser's worker), the batches of
  // each epoch in this job's own shuffled order, the personal test split validating each epoch;
  // its progress line on stderr (updating in place on a terminal, a line per epoch otherwise).
  const testAll = batchOf(test, Array.from({ length: test.n }, (_, i) => i));
  await fit(module, optimizer, {
    scheduler,
    epochs: EPOCHS,
    batches: () => {
      const order = shuffled(train.n, rand);
      return Array.from({ length: perEpoch }, (_, b) => batchOf(train, order.slice(b * BATCH, (b + 1) * BATCH)));
    },
    validation: { x: testAll[0], y: testAll[1] },
    metrics: ['accuracy'],
    progress: true,
  });
  const trainMs = performance.now() - tTrain;

  const after = evaluate(module, test);
  step(`after fine-tuning: accuracy ${pct(after.accuracy)} (${after.hits}/${test.n}), loss ${after.loss.toFixed(4)} on the personal test set`);

  await CheckpointState.saveCheckpoint(state, checkpointPath, { includeOptimizerState: true });
  step(`saved the checkpoint (parameters and optimizer state): ${show(checkpointPath)}`);
  await module.exportModelForInferencing(exportPath, ['output']);
  const exported = await inferenceAccuracy(exportPath, test);
  step(`exported the inference model: ${show(exportPath)}; in an InferenceSession it scores ${pct(exported.accuracy)} (${exported.hits}/${test.n})`);
  if (exported.hits !== after.hits) {
    step(`MISMATCH: the exported model gets ${exported.hits}/${test.n}; the eval model ${after.hits}/${test.n}`);
    ok = false;
  }

  const improved = after.accuracy > before.accuracy;
  if (!improved) ok = false;
  const kib = async (p) => `${((await stat(p)).size / 1024).toFixed(1)} KiB`;
  console.log('');
  console.log(`accuracy on personal test set: ${pct(before.accuracy)} -> ${pct(after.accuracy)} (${improved ? 'improved' : 'NOT improved'})`);
  console.log(`time: ${(trainMs / 1000).toFixed(2)} s fine-tuning, ${((performance.now() - t0) / 1000).toFixed(2)} s in all`);
  console.log('files:');
  for (const f of ['training_model.onnx', 'eval_model.onnx', 'optimizer_model.onnx', 'checkpoint', 'checkpoint.trained', 'digits-finetuned.onnx'])
    console.log(`  ${show(`${outDir}${f}`)}  (${await kib(`${outDir}${f}`)})`);
  console.log(ok ? 'done' : 'FAILED');
} finally {
  optimizer.release();
  module.release();
  state.release();
}
process.exit(ok ? 0 : 1);
