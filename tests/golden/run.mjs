#!/usr/bin/env node
// Golden runner: trains each case directory (format: tests/golden/FORMAT.md) with webtrain's
// WebAssembly build through the public JS API, and compares with the PyTorch vectors:
// loss, every gradient, parameters after every optimizer step, BatchNorm buffers, gradient
// accumulation, eval loss and inference outputs (through the exported inference model), at the
// case's tolerances.
//   node tests/golden/run.mjs DIR...
// Prints one line per case (first mismatch: tensor, index, expected, actual) and
// "N passed, M failed"; exits 1 on any failure.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CheckpointState, Module, Optimizer, LinearLRScheduler, InferenceSession, Tensor, artifacts, onnxblock } from '../../js/index.js';

const ARRAYS = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array };

class Mismatch extends Error {}

async function loadRef(dir, ref) {
  const buf = await readFile(join(dir, ref.file));
  const Arr = ARRAYS[ref.dtype];
  if (!Arr) throw new Error(`unsupported dtype ${ref.dtype} in ${ref.file}`);
  const data = new Arr(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const n = ref.shape.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new Error(`${ref.file}: ${data.length} elements, shape [${ref.shape}] needs ${n}`);
  return new Tensor(ref.dtype, data, ref.shape);
}

function compare(what, expected, actual, tol) {
  const e = expected.data ?? expected;
  const a = actual.data ?? actual;
  if (expected.dims && actual.dims && expected.dims.join() !== actual.dims.join())
    throw new Mismatch(`${what}: shape [${actual.dims}], expected [${expected.dims}]`);
  if (e.length !== a.length) throw new Mismatch(`${what}: ${a.length} elements, expected ${e.length}`);
  for (let i = 0; i < e.length; i++) {
    const x = Number(e[i]);
    const y = Number(a[i]);
    if (!(Math.abs(y - x) <= tol.atol + tol.rtol * Math.abs(x))) throw new Mismatch(`${what}[${i}]: expected ${x}, actual ${y}`);
  }
}

/** The case's custom loss, as the ONNX Runtime docs' WeightedAverageLoss example, in JS. */
function customLoss(spec) {
  if (spec.custom !== 'weighted_mse') throw new Error(`unknown custom loss ${spec.custom}`);
  class WeightedAverageLoss extends onnxblock.Block {
    constructor() {
      super();
      this._loss1 = new onnxblock.loss.MSELoss();
      this._loss2 = new onnxblock.loss.MSELoss();
      this._w1 = new onnxblock.blocks.Constant(spec.weights[0]);
      this._w2 = new onnxblock.blocks.Constant(spec.weights[1]);
      this._add = new onnxblock.blocks.Add();
      this._mul = new onnxblock.blocks.Mul();
    }
    build(lossInputName1, lossInputName2) {
      return this._add(
        this._mul(this._w1(), this._loss1(lossInputName1, { targetName: spec.targets[0] })),
        this._mul(this._w2(), this._loss2(lossInputName2, { targetName: spec.targets[1] })),
      );
    }
  }
  return new WeightedAverageLoss();
}

function optimizerOptions(o) {
  if (o.type === 'SGD') return { type: 'SGD' };
  return { type: 'AdamW', betas: o.betas, eps: o.eps, weightDecay: o.weight_decay, adamMode: o.adam_mode, biasCorrection: o.bias_correction !== false };
}

async function inputsOf(dir, refs, names) {
  const out = [];
  for (const n of names) out.push(await loadRef(dir, refs[n]));
  return out;
}

async function setup(c, art) {
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  let scheduler = null;
  if (c.lr_schedule) {
    const s = c.lr_schedule;
    scheduler = new LinearLRScheduler(optimizer, s.warmup_step_count, s.total_step_count, s.initial_lr);
  } else {
    optimizer.setLearningRate(c.optimizer.lr);
  }
  return { state, module, optimizer, scheduler };
}

async function runCase(dir) {
  const c = JSON.parse(await readFile(join(dir, 'case.json'), 'utf8'));
  const tol = c.tolerance;
  const loss = typeof c.loss === 'string' ? artifacts.LossType[c.loss] : customLoss(c.loss);
  const art = await artifacts.generateArtifacts(join(dir, c.model), {
    requiresGrad: c.requires_grad,
    frozenParams: c.frozen_params,
    loss,
    optimizer: optimizerOptions(c.optimizer),
    lossInputNames: typeof c.loss === 'object' ? c.loss.outputs : undefined,
  });
  const { state, module, optimizer, scheduler } = await setup(c, art);
  try {
    const trainNames = module.inputNames();
    for (const step of c.steps) {
      const k = step.index;
      if (Math.abs(optimizer.getLearningRate() - step.lr) > 1e-9 + 1e-6 * step.lr)
        throw new Mismatch(`step ${k}: learning rate ${optimizer.getLearningRate()}, expected ${step.lr}`);
      module.train();
      const out = module.runAll(...(await inputsOf(dir, step.inputs, trainNames)));
      compare(`step ${k} loss`, [step.loss], out[0].data, tol.loss);
      for (const [name, ref] of Object.entries(step.grads)) compare(`step ${k} grad ${name}`, await loadRef(dir, ref), state.parameters.get(name).grad, tol.grads);
      optimizer.step();
      module.lazyResetGrad();
      if (scheduler) scheduler.step();
      for (const [name, ref] of Object.entries(step.params_after)) compare(`step ${k} param ${name}`, await loadRef(dir, ref), state.parameters.get(name).data, tol.params);
      for (const [name, ref] of Object.entries(step.buffers_after ?? {})) compare(`step ${k} buffer ${name}`, await loadRef(dir, ref), state.parameters.get(name).data, tol.buffers);
    }
    for (const name of c.frozen_params) compare(`frozen ${name}`, await loadRef(dir, c.initial_params[name]), state.parameters.get(name).data, { rtol: 0, atol: 0 });
    module.eval();
    const evalOut = module.runAll(...(await inputsOf(dir, c.eval.inputs, module.inputNames())));
    compare('eval loss', [c.eval.loss], evalOut[0].data, tol.loss);
    const outputNames = Object.keys(c.inference.outputs);
    const exported = await module.exportModelForInferencing(outputNames);
    const session = await InferenceSession.create(exported);
    try {
      const feeds = {};
      for (const n of session.inputNames) feeds[n] = await loadRef(dir, c.inference.inputs[n]);
      const got = await session.run(feeds);
      for (const n of outputNames) compare(`inference ${n}`, await loadRef(dir, c.inference.outputs[n]), got[n], tol.outputs);
    } finally {
      session.release();
    }
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
  if (c.grad_accumulation) await gradAccumulation(dir, c, art);
}

async function gradAccumulation(dir, c, art) {
  const ga = c.grad_accumulation;
  const { state, module, optimizer } = await setup({ ...c, lr_schedule: null }, art);
  try {
    module.train();
    for (const b of ga.batches) {
      const out = module.runAll(...(await inputsOf(dir, b.inputs, module.inputNames())));
      compare(`accumulation batch ${b.name} loss`, [b.loss], out[0].data, c.tolerance.loss);
    }
    for (const [name, ref] of Object.entries(ga.grads_accumulated)) compare(`accumulated grad ${name}`, await loadRef(dir, ref), state.parameters.get(name).grad, c.tolerance.grads);
    optimizer.step();
    for (const [name, ref] of Object.entries(ga.params_after)) compare(`accumulation param ${name}`, await loadRef(dir, ref), state.parameters.get(name).data, c.tolerance.params);
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
}

const dirs = process.argv.slice(2);
if (!dirs.length) {
  console.error('usage: node tests/golden/run.mjs CASE_DIR...');
  process.exit(2);
}
let passed = 0;
let failed = 0;
for (const d of dirs) {
  const label = resolve(d).split('/').pop();
  try {
    await runCase(d);
    passed++;
    console.log(`ok   ${label}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${label}: ${err instanceof Mismatch ? '' : 'error: '}${err.message}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
