// Golden case runner (format: tests/golden/FORMAT.md), through webtrain's public JS API:
// generates the artifacts, trains the case's steps and compares loss, every gradient, the
// parameters after every optimizer step, BatchNorm buffers, gradient accumulation, the eval loss
// and the inference outputs (through the exported inference model) at the case's tolerances.
// Used by tests/golden/run.mjs (CLI) and tests/js/golden.test.mjs / ort-crosscheck.test.mjs.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointState, Module, Optimizer, LinearLRScheduler, InferenceSession, Tensor, artifacts, onnxblock } from '../../js/index.js';

const ARRAYS = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array };

/** A value outside the tolerance (as opposed to an error thrown by the runtime). */
export class Mismatch extends Error {}

export async function readCase(dir) {
  return JSON.parse(await readFile(join(dir, 'case.json'), 'utf8'));
}

export async function loadRef(dir, ref) {
  const buf = await readFile(join(dir, ref.file));
  const Arr = ARRAYS[ref.dtype];
  if (!Arr) throw new Error(`unsupported dtype ${ref.dtype} in ${ref.file}`);
  const data = new Arr(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const n = ref.shape.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new Error(`${ref.file}: ${data.length} elements, shape [${ref.shape}] needs ${n}`);
  return new Tensor(ref.dtype, data, ref.shape);
}

/** Elementwise |actual - expected| <= atol + rtol·|expected|; throws a Mismatch naming the first bad element. */
export function compare(what, expected, actual, tol) {
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

/**
 * The seed's WeightedAverageLoss example (../shared/reference/prepare-for-training-api.txt),
 * translated to JS as written there: two MSE losses on the model's two outputs (in graph
 * order), weighted 0.4 and 0.6, targets "target1" and "target2". A case with other weights or
 * target names gets them from its case.json.
 */
export function customLoss(spec) {
  if (spec.custom !== 'weighted_mse') throw new Error(`unknown custom loss ${spec.custom}`);
  const [w1, w2] = spec.weights ?? [0.4, 0.6];
  const [t1, t2] = spec.targets ?? ['target1', 'target2'];
  class WeightedAverageLoss extends onnxblock.Block {
    constructor() {
      super();
      this._loss1 = new onnxblock.loss.MSELoss();
      this._loss2 = new onnxblock.loss.MSELoss();
      this._w1 = new onnxblock.blocks.Constant(w1);
      this._w2 = new onnxblock.blocks.Constant(w2);
      this._add = new onnxblock.blocks.Add();
      this._mul = new onnxblock.blocks.Mul();
    }

    build(lossInputName1, lossInputName2) {
      // The build method defines how the block is stacked on top of lossInputName1 and
      // lossInputName2. Returns the weighted average of the two losses.
      return this._add(
        this._mul(this._w1(), this._loss1(lossInputName1, { targetName: t1 })),
        this._mul(this._w2(), this._loss2(lossInputName2, { targetName: t2 })),
      );
    }
  }
  return new WeightedAverageLoss();
}

export function optimizerOptions(o) {
  if (o.type === 'SGD') return { type: 'SGD' };
  return { type: 'AdamW', betas: o.betas, eps: o.eps, weightDecay: o.weight_decay, adamMode: o.adam_mode, biasCorrection: o.bias_correction !== false };
}

/** generateArtifacts options for a case, as a user would write them. */
export function artifactOptions(c) {
  const custom = typeof c.loss === 'object';
  const opts = {
    requiresGrad: c.requires_grad,
    frozenParams: c.frozen_params,
    loss: custom ? customLoss(c.loss) : artifacts.LossType[c.loss],
    optimizer: optimizerOptions(c.optimizer),
  };
  // LoRA: the adapters are trained besides requires_grad; their initial values are set in setup
  if (c.lora) opts.lora = { rank: c.lora.rank, alpha: c.lora.alpha, targets: c.lora.targets };
  // The custom loss takes the model's outputs in graph order, as generate_artifacts passes them;
  // name them only when the case's loss takes them in another order.
  if (custom && c.loss.outputs && c.loss.outputs.join() !== c.output_names.join()) opts.lossInputNames = c.loss.outputs;
  return opts;
}

export async function inputsOf(dir, refs, names) {
  const out = [];
  for (const n of names) {
    if (!refs[n]) throw new Error(`case has no tensor for input '${n}'`);
    out.push(await loadRef(dir, refs[n]));
  }
  return out;
}

/** backend: Module.create's { backend, gpu } (default: the wasm backend). */
export async function setup(c, art, dir, backend = {}) {
  if (c.lora && !dir) throw new Error(`setup: case ${c.name} has LoRA adapters; give its directory (their initial values)`);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  // LoRA: the adapters' initial values are the case's (webtrain draws its own at generation)
  for (const [name, ref] of Object.entries(c.lora ? c.initial_params : {}))
    if (/\.lora_[AB]$/.test(name)) state.parameters.set(name, (await loadRef(dir, ref)).data);
  const module = await Module.create(art.trainingModel, state, art.evalModel, backend);
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

/**
 * Runs one case directory; throws a Mismatch (or the runtime's error) on the first failure.
 * Returns what the run produced, for cross-checks: { case, artifacts, params (name ->
 * Float32Array + dims, every parameter after training), evalLoss, exported (inference model
 * bytes), inference ({ name: Tensor } from the exported model on the eval batch) }.
 */
export async function runCase(dir, backend = {}) {
  const c = await readCase(dir);
  const tol = c.tolerance;
  const art = await artifacts.generateArtifacts(join(dir, c.model), artifactOptions(c));
  // every call awaited: on the webgpu backend steps and reads of the state are Promises
  const { state, module, optimizer, scheduler } = await setup(c, art, dir, backend);
  const result = { case: c, artifacts: art };
  try {
    const trainNames = module.inputNames();
    for (const step of c.steps) {
      const k = step.index;
      if (Math.abs(optimizer.getLearningRate() - step.lr) > 1e-9 + 1e-6 * step.lr)
        throw new Mismatch(`step ${k}: learning rate ${optimizer.getLearningRate()}, expected ${step.lr}`);
      module.train();
      const out = await module.runAll(...(await inputsOf(dir, step.inputs, trainNames)));
      compare(`step ${k} loss`, [step.loss], out[0].data, tol.loss);
      for (const [name, ref] of Object.entries(step.grads)) compare(`step ${k} grad ${name}`, await loadRef(dir, ref), (await state.parameters.get(name)).grad, tol.grads);
      await optimizer.step();
      module.lazyResetGrad();
      if (scheduler) scheduler.step();
      for (const [name, ref] of Object.entries(step.params_after)) compare(`step ${k} param ${name}`, await loadRef(dir, ref), (await state.parameters.get(name)).data, tol.params);
      for (const [name, ref] of Object.entries(step.buffers_after ?? {})) compare(`step ${k} buffer ${name}`, await loadRef(dir, ref), (await state.parameters.get(name)).data, tol.buffers);
    }
    for (const name of c.frozen_params) compare(`frozen ${name}`, await loadRef(dir, c.initial_params[name]), (await state.parameters.get(name)).data, { rtol: 0, atol: 0 });
    module.eval();
    const evalOut = await module.runAll(...(await inputsOf(dir, c.eval.inputs, module.inputNames())));
    compare('eval loss', [c.eval.loss], evalOut[0].data, tol.loss);
    result.evalLoss = evalOut[0].data[0];
    await state.parameters.get(c.frozen_params[0] ?? [...state.parameters.keys()][0]); // read back from the GPU, if there
    result.params = new Map([...state.parameters].map(([n, p]) => [n, { data: p.data, dims: p.dims }]));
    const outputNames = Object.keys(c.inference.outputs);
    const exported = await module.exportModelForInferencing(outputNames);
    result.exported = exported;
    const session = await InferenceSession.create(exported);
    try {
      const feeds = {};
      for (const n of session.inputNames) feeds[n] = await loadRef(dir, c.inference.inputs[n]);
      const got = await session.run(feeds);
      for (const n of outputNames) compare(`inference ${n}`, await loadRef(dir, c.inference.outputs[n]), got[n], tol.outputs);
      result.inference = got;
    } finally {
      session.release();
    }
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
  if (c.grad_accumulation) await gradAccumulation(dir, c, art, backend);
  return result;
}

async function gradAccumulation(dir, c, art, backend) {
  const ga = c.grad_accumulation;
  const { state, module, optimizer } = await setup({ ...c, lr_schedule: null }, art, dir, backend);
  try {
    module.train();
    for (const b of ga.batches) {
      const out = await module.runAll(...(await inputsOf(dir, b.inputs, module.inputNames())));
      compare(`accumulation batch ${b.name} loss`, [b.loss], out[0].data, c.tolerance.loss);
    }
    for (const [name, ref] of Object.entries(ga.grads_accumulated)) compare(`accumulated grad ${name}`, await loadRef(dir, ref), (await state.parameters.get(name)).grad, c.tolerance.grads);
    await optimizer.step();
    for (const [name, ref] of Object.entries(ga.params_after)) compare(`accumulation param ${name}`, await loadRef(dir, ref), (await state.parameters.get(name)).data, c.tolerance.params);
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
}
