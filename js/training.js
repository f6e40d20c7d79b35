// ONNX Runtime's on-device training API in JavaScript: CheckpointState, Module, Optimizer,
// LinearLRScheduler. Parameters, gradients and optimizer state live in the wasm heap, owned by
// the C core; JS holds handles. Inputs are copied in and outputs copied out per call.
import { coreFor, gpuFor, chosenBackend, warnOnce, WebtrainError } from './core.js';
import { checkOptions, INIT_OPTIONS, MODEL_OPTIONS } from './options.js';
import { Tensor } from './tensor.js';
import { readBytes, describe } from './bytes.js';
import { AUTO_EXTERNAL_BYTES, defaultSide, intoHeap, loadExternal, saveExternal } from './checkpoint-data.js';
import { Staging, feedInputs, readOutputs } from './feeds.js';
import { writeBytes } from './storage.js';
import { Mode, PropertyType, ModuleMem } from './abi.js';
import { externalDataOption, externalReaders, placeSideFiles, rememberSource, sourceOf } from './external.js';
import { exportMergedModel, exportLoraAdapter, saveTrainable, loadParameters } from './lora.js';
import { importNode, isNode } from './node-builtin.js';
import { Life, StateLife } from './lifetime.js';
import { GpuStepResult } from './gpu/step-result.js';

/** f(outs) now, or when a step's Promise gives them (a GpuStepResult stays unread until awaited). */
function then(outs, f) {
  return outs instanceof GpuStepResult ? outs.map(f) : outs instanceof Promise ? outs.then(f) : f(outs);
}

/** An onProgress option: undefined or a function. */
function progressOption(value, context) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'function') throw new TypeError(`${context}: onProgress must be a function ({ loaded, total }) => void; got ${describe(value)}`);
  return value;
}

/**
 * loadCheckpoint's externalData: the side file itself, or (the form models take) one
 * [{ path, data }] entry.
 */
function checkpointSide(value) {
  if (!Array.isArray(value)) return value;
  const entries = externalDataOption(value, 'loadCheckpoint');
  if (entries.length !== 1) throw new WebtrainError(`loadCheckpoint: externalData: a checkpoint has one side file; got ${entries.length} entries`);
  return entries[0].data;
}

/** loadCheckpoint's options (js/training.d.ts LoadCheckpointOptions). */
export const LOAD_OPTIONS = [...INIT_OPTIONS, 'onProgress', 'externalData'];
/** saveCheckpoint's options (SaveCheckpointOptions). */
const SAVE_OPTIONS = ['includeOptimizerState', 'externalData', 'trainableOnly'];
/** Module.create's options (ModuleOptions). */
export const MODULE_OPTIONS = [...MODEL_OPTIONS, 'onProgress'];

/**
 * A cross-entropy loss's refusal of a negative label: -100 is PyTorch's default ignore index,
 * which the loss takes as its ignoreIndex option.
 */
function withLossHint(message) {
  const m = /labels\[\d+\] = (-\d+) is out of range; expected 0 <= label < \d+$/.exec(message);
  if (!m) return message;
  return `${message}; to skip samples labelled ${m[1]} (${m[1] === '-100' ? "PyTorch's default ignore index" : 'an ignore index'}), generate the artifacts with the loss's ignoreIndex option: loss: { type: 'CrossEntropyLoss', ignoreIndex: ${m[1]} }`;
}

class Handle {
  #core;
  #h;
  #what;
  constructor(core, h, what) {
    this.#core = core;
    this.#h = h;
    this.#what = what;
  }
  get core() {
    return this.#core;
  }
  get m() {
    return this.#core.m;
  }
  get h() {
    if (!this.#h) throw new WebtrainError(`the ${this.#what} was released`);
    return this.#h;
  }
  /** False once released. */
  get isLive() {
    return !!this.#h;
  }
  drop() {
    const h = this.#h;
    this.#h = 0;
    return h;
  }
}

class Parameters {
  #s;
  constructor(state) {
    this.#s = state;
  }
  get size() {
    return this.#s.m._wtw_state_param_count(this.#s.h);
  }
  has(name) {
    return this.#index(name) >= 0;
  }
  /** { name, dims, requiresGrad, data, grad }; a Promise of it while a module trains the state on the GPU (read back first). */
  get(name) {
    const gpu = this.#s._gpu;
    if (gpu) return gpu.sync().then(() => this.#get(name));
    return this.#get(name);
  }
  #get(name) {
    const i = this.#index(name);
    return i < 0 ? undefined : this.#param(i);
  }
  set(name, values) {
    const i = this.#index(name);
    if (i < 0) throw new WebtrainError(`no parameter named '${name}'`);
    const core = this.#s.core;
    const data = values instanceof Float32Array ? values : Float32Array.from(values);
    core.check(core.withBytes(data, (p) => core.m._wtw_state_param_update(this.#s.h, i, p, data.length)));
    this.#s._gpu?.markDirty();
  }
  *keys() {
    for (let i = 0; i < this.size; i++) yield this.#name(i);
  }
  *values() {
    for (let i = 0; i < this.size; i++) yield this.#param(i);
  }
  *entries() {
    for (let i = 0; i < this.size; i++) yield [this.#name(i), this.#param(i)];
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  #name(i) {
    return this.#s.core.string(this.#s.m._wtw_state_param_name(this.#s.h, i));
  }
  #index(name) {
    const core = this.#s.core;
    return core.withStrings([name], (p) => core.m._wtw_state_param_index(this.#s.h, p));
  }
  #param(i) {
    const { m, h, core } = this.#s;
    const rank = m._wtw_state_param_rank(h, i);
    const dims = Array.from({ length: rank }, (_, a) => m._wtw_state_param_dim(h, i, a));
    const size = dims.reduce((a, b) => a * b, 1);
    const copy = (ptr) => (ptr ? new Float32Array(core.copyOut(ptr, size * 4).buffer) : null);
    return {
      name: this.#name(i),
      dims,
      requiresGrad: m._wtw_state_param_requires_grad(h, i) === 1,
      data: copy(m._wtw_state_param_data(h, i)),
      grad: m._wtw_state_param_requires_grad(h, i) ? copy(m._wtw_state_param_grad(h, i)) : null,
    };
  }
}

class Properties {
  #s;
  constructor(state) {
    this.#s = state;
  }
  get size() {
    return this.#s.m._wtw_state_property_count(this.#s.h);
  }
  get(name) {
    for (const [k, v] of this.entries()) if (k === name) return v;
    return undefined;
  }
  has(name) {
    return this.get(name) !== undefined;
  }
  /** Integers (Number.isInteger or BigInt) are stored as int64, other numbers as float, strings as strings. */
  set(name, value, type) {
    const { core, m, h } = this.#s;
    core.withStrings([name], (n) => {
      if (typeof value === 'string') {
        core.check(core.withStrings([value], (v) => m._wtw_state_set_string_property(h, n, v)), `property '${name}'`);
      } else if (typeof value === 'bigint' || (type !== 'float' && Number.isInteger(value))) {
        core.check(m._wtw_state_set_int_property(h, n, Number(value)), `property '${name}'`);
      } else if (typeof value === 'number') {
        core.check(m._wtw_state_set_float_property(h, n, value), `property '${name}'`);
      } else {
        throw new WebtrainError(`property '${name}': expected a number or a string`);
      }
    });
  }
  *entries() {
    const { core, m, h } = this.#s;
    for (let i = 0; i < this.size; i++) {
      const t = m._wtw_state_property_type(h, i);
      const v = t === PropertyType.INT ? m._wtw_state_property_int(h, i) : t === PropertyType.FLOAT ? m._wtw_state_property_float(h, i) : core.string(m._wtw_state_property_string(h, i));
      yield [core.string(m._wtw_state_property_name(h, i)), v];
    }
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

export class CheckpointState extends Handle {
  // The C state, freed after the Modules and Optimizers built on it (js/lifetime.js).
  #life;

  /** @internal The GPU trainer of the module training this state on the webgpu backend, or null. */
  _gpu = null;

  constructor(core, h) {
    super(core, h, 'checkpoint state');
    this.#life = new StateLife(h, (raw) => core.m._wtw_state_free(raw)).watch(this);
    this.parameters = new Parameters(this);
    this.properties = new Properties(this);
  }

  /** @internal the C handle for a Module/Optimizer built on this state (valid until they are released). */
  get _raw() {
    if (!this.#life.raw) throw new WebtrainError('the checkpoint state was released');
    return this.#life.raw;
  }

  /** @internal A Module or Optimizer is built on the state: -> the record whose unref() it calls once freed. */
  _retain() {
    this._raw; // throws once freed
    this.#life.retain();
    return this.#life;
  }

  /**
   * From a path, URL, Uint8Array, Blob (or, in browsers, an idb:// name once web/ is loaded). A
   * checkpoint with external data (over 2 GB) reads its side file from `externalData`, by default
   * the path or URL + '.data' (js/checkpoint-data.js).
   */
  static async loadCheckpoint(source, options = {}) {
    checkOptions(options, LOAD_OPTIONS, 'loadCheckpoint');
    const { externalData, onProgress: progress, ...initOptions } = options ?? {};
    const onProgress = progressOption(progress, 'loadCheckpoint');
    const side = externalData === undefined || externalData === null ? defaultSide(source) : checkpointSide(externalData);
    const core = await coreFor(initOptions);
    // A file or Blob streams into the heap (onProgress counts its bytes, then the side file's).
    // The core frees that copy as soon as it is parsed, so that the gradient buffers it
    // allocates next reuse the memory (the wasm heap never shrinks).
    const { p, n } = await intoHeap(core, source, onProgress);
    if (core.m._wtw_checkpoint_has_external(p, n)) return new CheckpointState(core, await loadExternal(core, { p, n }, side, source, onProgress));
    return new CheckpointState(core, core.handle(core.m._wtw_state_load_owned(p, n), 'cannot load checkpoint'));
  }

  /**
   * Serializes the state; writes it to `destination` (a path) when given, and returns the bytes.
   * externalData: true writes the tensors to a side file (destination + '.data'; ONNX Runtime's
   * layout for checkpoints over 2 GB) and returns the checkpoint file's bytes; 'auto' (the
   * default) does so from 1.5 GiB of tensors on; false never.
   */
  static async saveCheckpoint(state, destination, options = {}) {
    const { includeOptimizerState = false, externalData = 'auto', trainableOnly = false } = checkOptions(options, SAVE_OPTIONS, 'saveCheckpoint') ?? {};
    if (state._gpu) await state._gpu.sync();
    if (trainableOnly) return saveTrainable(state, state.h, destination, includeOptimizerState);
    if (externalData !== true && externalData !== false && externalData !== 'auto') {
      throw new TypeError(`saveCheckpoint: externalData must be true, false or 'auto'; got ${describe(externalData)}`);
    }
    const big = state.m._wtw_state_tensor_bytes(state.h, includeOptimizerState ? 1 : 0) >= AUTO_EXTERNAL_BYTES;
    if (externalData === true || (externalData === 'auto' && big)) {
      return saveExternal(state.core, state.h, destination, includeOptimizerState);
    }
    const bytes = await state.toBytes({ includeOptimizerState }); // (a Promise while the GPU trains it)
    if (destination !== undefined && destination !== null) await writeBytes(destination, bytes);
    return bytes;
  }

  /**
   * Copies the parameters of a checkpoint (e.g. one saved with trainableOnly: LoRA adapters) or of
   * an .onnx_adapter file into this state, after checking each name and shape and (checkpoint)
   * that it was trained on the same frozen base.
   */
  async loadParameters(source) {
    if (this._gpu) await this._gpu.sync();
    const r = await loadParameters(this, this.h, source);
    this._gpu?.markDirty();
    return r;
  }

  /** The checkpoint's bytes; a Promise of them while a module trains the state on the GPU. */
  toBytes(options = {}) {
    const { includeOptimizerState = false } = checkOptions(options, ['includeOptimizerState'], 'toBytes') ?? {};
    const bytes = () => this.core.takeBuf(this.m._wtw_state_save(this.h, includeOptimizerState ? 1 : 0), 'cannot save checkpoint');
    return this._gpu ? this._gpu.sync().then(bytes) : bytes();
  }

  /**
   * Releases the state. It can no longer be used; its memory is freed once the Modules and
   * Optimizers created on it are released too.
   */
  release() {
    this.drop();
    this.#life.release();
  }
}

export class Module extends Handle {
  #state;
  #mode = Mode.TRAIN;
  #staging;
  // The input names per mode, read from the core once (a step reads them to match its inputs).
  #inputNames = new Map();

  #hasEval;
  #source = null; // where the training model's side files are (an export by reference refers to them)
  #life;
  #predictKey = null; // the outputs the core's predict graph computes, '\0'-joined
  #gpu = null; // js/gpu/trainer.js on the webgpu backend
  #auto = false; // backend 'auto': a model the GPU cannot run goes back to wasm

  constructor(core, h, state, hasEval, stateLife) {
    super(core, h, 'module');
    this.#state = state;
    this.#hasEval = hasEval;
    // Inputs go through one staging buffer per module, grown when needed: no allocation per step.
    const staging = (this.#staging = new Staging(core, true));
    this.#life = new Life(h, (x) => core.m._wtw_module_free(x), () => {
      staging.release();
      stateLife.unref();
    }).watch(this);
  }

  #checkMode(mode) {
    if (mode === Mode.EVAL && !this.#hasEval) throw new WebtrainError('the module has no eval model (give one to Module.create to use eval())');
    return mode;
  }

  /**
   * options: externalData ([{ path, data }], the models' side files), onProgress({ loaded,
   * total }) as the side files' bytes land in the heap, and init's options.
   */
  static async create(trainingModel, state, evalModel, options = {}) {
    checkOptions(options, MODULE_OPTIONS, 'Module.create');
    options ??= {};
    const core = await coreFor(options);
    if (!(state instanceof CheckpointState)) throw new WebtrainError('Module.create: the second argument must be a CheckpointState');
    const onProgress = progressOption(options.onProgress, 'Module.create');
    const entries = externalDataOption(options.externalData, 'Module.create');
    const train = await readBytes(trainingModel);
    const ev = evalModel ? await readBytes(evalModel) : null;
    const models = [{ model: trainingModel, bytes: train }, ...(ev ? [{ model: evalModel, bytes: ev }] : [])];
    // Side files are read after each parse (deferred), straight into the tensors' buffers; the
    // eval model's frozen weights are the training model's (the core shares a file range's bytes).
    const [extTrain, extEval] = await externalReaders(core, models, entries, 'Module.create', { deferred: true });
    // The core takes each copy and frees it once parsed; the eval model is copied in only after
    // the training model is loaded, so that each graph can take the room the loading before left.
    const h = core.handle(extTrain.run(() => core.m._wtw_module_create_owned(state.h, core.copyIn(train), train.byteLength, 0, 0)), 'cannot create module');
    try {
      if (ev) core.check(extEval.run(() => core.m._wtw_module_add_eval_owned(h, core.copyIn(ev), ev.byteLength)), 'cannot load the eval model');
      const first = extTrain.pendingBytes;
      const total = first + (ev ? extEval.pendingBytes : 0);
      await extTrain.fill(onProgress, 0, total);
      if (ev) await extEval.fill(onProgress, first, total);
    } catch (e) {
      extTrain.close();
      extEval?.close();
      core.m._wtw_module_free(h);
      throw e;
    }
    const module = new Module(core, h, state, !!ev, state._retain());
    module.#source = sourceOf(trainingModel, entries, train);
    const gpu = await gpuFor(options, 'Module.create');
    if (gpu) {
      if (state._gpu) throw new WebtrainError('Module.create: another module trains this state on the GPU; release it first');
      const { GpuTrainer } = await import('./gpu/trainer.js');
      module.#gpu = await GpuTrainer.create(gpu, core, h, state._raw);
      module.#auto = chosenBackend(options) === 'auto';
      state._gpu = module.#gpu;
    }
    return module;
  }

  /** 'webgpu' or 'wasm': where the steps run (on 'webgpu' run, step and what reads the state back return Promises). */
  get backend() {
    return this.#gpu ? 'webgpu' : 'wasm';
  }

  /** @internal the GPU trainer (Optimizer.create's), or null. */
  get _gpu() {
    return this.#gpu;
  }

  /**
   * A step of `mode` on the GPU: the inputs set as for the CPU, then the trainer's program. A
   * GpuStepResult (read back when awaited), or with 'auto' and a model the GPU cannot run, a
   * Promise of the step on wasm.
   */
  #gpuStep(mode, args, context, count) {
    const { m, h } = this;
    const wrap = (e) => new WebtrainError(`${context}: ${e.message.replace(/^(train|eval) step: /, '')}`);
    this.#feed(mode, args);
    try {
      return this.#gpu.run(mode, count ?? m._wtw_module_output_count(h, mode)).wrap(wrap);
    } catch (e) {
      if (!this.#auto || !/the webgpu backend has no kernel/.test(e.message)) return Promise.reject(e instanceof WebtrainError && e.message.startsWith(`${context}:`) ? e : wrap(e));
      return (async () => {
        // 'auto': this model trains on wasm from now on
        warnOnce(`webtrain: backend 'auto' trains this model on wasm: ${e.message}`);
        await this.#gpu.sync();
        this.#gpu.release();
        this.#gpu = null;
        this.#state._gpu = null;
        return this.#step(mode, args, context, count);
      })();
    }
  }

  /**
   * @internal Takes back a train step submitted on the GPU and not yet followed by an optimizer
   * step (fit's pipelined loop, stopping before it): as if it never ran. Nothing on wasm.
   */
  async _takeBack() {
    await this.#gpu?.takeBack();
  }

  get state() {
    return this.#state;
  }

  train() {
    this.#mode = Mode.TRAIN;
    return this;
  }

  eval() {
    this.#mode = Mode.EVAL;
    return this;
  }

  get isTraining() {
    return this.#mode === Mode.TRAIN;
  }

  inputNames(mode = this.#mode) {
    const { m, h, core } = this;
    this.#checkMode(mode);
    return Array.from({ length: m._wtw_module_input_count(h, mode) }, (_, i) => core.string(m._wtw_module_input_name(h, mode, i)));
  }

  outputNames(mode = this.#mode) {
    const { m, h, core } = this;
    this.#checkMode(mode);
    return Array.from({ length: this.#outputCount(mode) }, (_, i) => core.string(m._wtw_module_output_name(h, mode, i)));
  }

  /**
   * The outputs a step returns: the training model's (the loss, the additional outputs), in
   * eval mode too. The eval model webtrain generates outputs the model's own outputs after
   * them, which fit's metrics and predict read (#forwardOutputs).
   */
  #outputCount(mode) {
    const { m, h } = this;
    const n = m._wtw_module_output_count(h, mode);
    return mode === Mode.EVAL ? Math.min(n, m._wtw_module_output_count(h, Mode.TRAIN)) : n;
  }

  /** The eval model's outputs after those of the training model: the model's own outputs (webtrain's artifacts), or none. */
  #forwardOutputs() {
    const { m, h, core } = this;
    const n = m._wtw_module_output_count(h, Mode.EVAL);
    const from = n > this.#outputCount(Mode.EVAL) ? this.#outputCount(Mode.EVAL) : 1;
    return Array.from({ length: n - from }, (_, i) => core.string(m._wtw_module_output_name(h, Mode.EVAL, from + i)));
  }

  /**
   * Runs the model forward on the current parameters: no labels, no loss, no gradients, in
   * inference mode (the eval model's Dropout and BatchNormalization). `inputs` by name (or the
   * one input's tensor); `outputNames` default: the model's outputs. -> { name: Tensor }.
   */
  predict(inputs, outputNames) {
    if (this.#gpu) return this.#gpu.sync().then(() => this.#predict(inputs, outputNames));
    return this.#predict(inputs, outputNames);
  }

  #predict(inputs, outputNames) {
    const { m, h, core } = this;
    if (!this.#hasEval) throw new WebtrainError('predict needs the eval model: give one to Module.create');
    const names = outputNames ?? this.#forwardOutputs();
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) throw new TypeError(`predict: outputNames must be an array of output names, e.g. ['logits']; got ${describe(outputNames)}`);
    if (!names.length) {
      throw new WebtrainError(`predict: name the outputs to compute, e.g. module.predict(inputs, ['logits']): this eval model outputs the loss only (artifacts from elsewhere; webtrain's also output the model's outputs)`);
    }
    const key = names.join('\0');
    if (key !== this.#predictKey) {
      core.check(core.withStrings([key], (p) => m._wtw_module_predict_outputs(h, p, names.length)), 'predict');
      this.#predictKey = key;
      this.#inputNames.delete(Mode.PREDICT);
    }
    const outs = this.#step(Mode.PREDICT, [inputs], 'predict');
    return Object.fromEntries(names.map((n, i) => [n, outs[i]]));
  }

  /**
   * Runs a train step (train mode: forward, backward, gradient accumulation) or an eval step.
   * Inputs positionally (`run(x, labels)`) or by name (`run({ input: x, labels })`). Returns the
   * loss Tensor alone, or [loss, ...the additionalOutputNames given at generation] when there were
   * some (outputNames() in that order). BatchNorm running statistics are written back into the
   * state inside the step, not returned.
   */
  run(...args) {
    const pick = (outs) => (outs.length === 1 ? outs[0] : outs);
    return then(this.runAll(...args), pick);
  }

  /** Like run, always returning every output as { name: Tensor }. */
  runNamed(...args) {
    const names = this.outputNames();
    const named = (outs) => Object.fromEntries(names.map((n, i) => [n, outs[i]]));
    return then(this.runAll(...args), named);
  }

  runAll(...args) {
    const mode = this.#mode;
    const context = `${mode === Mode.EVAL ? 'eval' : 'train'} step`;
    if (this.#gpu) return this.#gpuStep(this.#checkMode(mode), args, context, this.#outputCount(mode));
    return this.#step(mode, args, context, this.#outputCount(mode));
  }

  /** @internal An eval step's outputs, all of them: [loss, additional outputs, the model's outputs] (fit's metrics). */
  _evalOutputs(...args) {
    this.#checkMode(Mode.EVAL);
    if (this.#gpu) return this.#gpuStep(Mode.EVAL, args, 'eval step');
    return this.#step(Mode.EVAL, args, 'eval step');
  }

  /**
   * One step of `mode` on args (run's or predict's) -> the first `count` outputs of the core's
   * graph (default: all). Only those are copied out of the heap: an eval step of run() leaves the
   * model's outputs (a language model's logits) where they are.
   */
  #step(mode, args, context, count) {
    const { m, h, core } = this;
    this.#feed(mode, args);
    const status = mode === Mode.TRAIN ? m._wtw_module_train_step(h) : mode === Mode.EVAL ? m._wtw_module_eval_step(h) : m._wtw_module_predict_step(h);
    if (status) throw new WebtrainError(`${context}: ${withLossHint(core.lastError())}`);
    return readOutputs(core, count ?? m._wtw_module_output_count(h, mode), {
      rank: (i) => m._wtw_module_output_rank(h, mode, i),
      dim: (i, a) => m._wtw_module_output_dim(h, mode, i, a),
      dtype: (i) => m._wtw_module_output_dtype(h, mode, i),
      data: (i) => m._wtw_module_output_data(h, mode, i),
    });
  }

  /** The step's inputs from run's or predict's args, set on the mode's model. */
  #feed(mode, args) {
    const { m, h, core } = this;
    this.#checkMode(mode);
    let names = this.#inputNames.get(mode);
    if (!names) {
      names = Array.from({ length: m._wtw_module_input_count(h, mode) }, (_, i) => core.string(m._wtw_module_input_name(h, mode, i)));
      this.#inputNames.set(mode, names);
    }
    const model = mode === Mode.TRAIN ? 'training' : 'eval';
    // The core borrows the staged inputs only until the step returns.
    feedInputs(core, this.#staging, {
      names,
      args,
      positional: true,
      model: `the ${model} model`,
      dtype: (i) => m._wtw_module_input_dtype(h, mode, i),
      set: (i, dtype, rank, dims, data) => m._wtw_module_set_input(h, mode, i, dtype, rank, dims, data),
      inputContext: (name) => `${model} model input '${name}'`,
    });
  }

  lazyResetGrad() {
    this.core.check(this.m._wtw_module_lazy_reset_grad(this.h));
  }

  /**
   * Memory held for this module (bytes): arena = the activation arena its training and eval
   * models share; livePeakTrain / livePeakEval = activations + scratch live at the busiest step
   * of the plans built so far; saved = the forward activations the backward pass reads (alive
   * when it starts, after a train step) and the batch inputs it reads; params / grads / moments = its state's parameters,
   * gradient buffers and optimizer moments; packed = the copies of frozen weights packed once for
   * the GEMM after the first train step (all of them or none: at most 64 MiB per module).
   */
  memoryStats() {
    const stats = this.core.record(ModuleMem, (p) => this.m._wtw_module_memory(this.h, p));
    return this.#gpu ? { ...stats, gpu: this.#gpu.memory() } : stats;
  }

  getParametersSize(trainableOnly = true) {
    this.h; // throws once released
    return this.m._wtw_state_params_size(this.#state._raw, trainableOnly ? 1 : 0);
  }

  getContiguousParameters(trainableOnly = true) {
    if (this.#gpu) return this.#gpu.sync().then(() => this.#contiguous(trainableOnly));
    return this.#contiguous(trainableOnly);
  }

  #contiguous(trainableOnly) {
    const n = this.getParametersSize(trainableOnly);
    const core = this.core;
    const p = core.malloc(n * 4);
    try {
      core.check(this.m._wtw_state_params_copy_to(this.#state._raw, trainableOnly ? 1 : 0, p, n));
      return new Tensor('float32', new Float32Array(core.copyOut(p, n * 4).buffer), [n]);
    } finally {
      core.free(p);
    }
  }

  copyBufferToParameters(buffer, trainableOnly = true) {
    const data = buffer instanceof Tensor ? buffer.data : buffer;
    if (!(data instanceof Float32Array)) throw new WebtrainError('copyBufferToParameters: expected a Float32Array or a float32 Tensor');
    const core = this.core;
    core.check(core.withBytes(data, (p) => this.m._wtw_state_params_copy_from(this.#state._raw, trainableOnly ? 1 : 0, p, data.length)));
    this.#gpu?.markDirty();
  }

  /**
   * Exports a plain ONNX inference model; writes it to `destination` (a path) when given.
   * keepExternalData: true writes the weights the models read from external data (a frozen
   * base's) as references to the same side files instead of their bytes: the returned bytes
   * find them as the artifacts do, and beside a Node `destination` they are placed (linked).
   */
  async exportModelForInferencing(destination, outputNames, options = {}) {
    if (Array.isArray(destination) && (outputNames === undefined || (typeof outputNames === 'object' && !Array.isArray(outputNames)))) {
      options = outputNames ?? {};
      outputNames = destination;
      destination = null;
    }
    if (!Array.isArray(outputNames) || !outputNames.length) throw new WebtrainError('exportModelForInferencing: give the output names to keep, e.g. ["output"]');
    const { keepExternalData = false } = checkOptions(options, ['keepExternalData'], 'exportModelForInferencing') ?? {};
    if (this.#gpu) await this.#gpu.sync();
    if (typeof keepExternalData !== 'boolean') throw new TypeError(`exportModelForInferencing: keepExternalData must be true or false; got ${describe(keepExternalData)}`);
    const core = this.core;
    const bytes = core.takeBuf(core.withStrings([outputNames.join('\0')], (p) => this.m._wtw_module_export(this.h, p, outputNames.length, keepExternalData ? 1 : 0)), 'cannot export the model');
    if (keepExternalData && this.#source) {
      rememberSource(bytes, this.#source.model, this.#source.entries);
      if (destination && isNode && !/^[a-z][a-z0-9+.-]+:\/\//i.test(String(destination))) {
        const path = await importNode('path');
        await placeSideFiles(core, path.dirname(String(destination instanceof URL ? destination.pathname : destination)), [bytes]);
      }
    }
    if (destination) await writeBytes(destination, bytes);
    return bytes;
  }

  /** LoRA: the inference model with the adapters merged into the base weights (js/lora.js). */
  async exportMergedModel(destination, outputNames) {
    if (this.#gpu) await this.#gpu.sync();
    return exportMergedModel(this, destination, outputNames);
  }

  /** LoRA: { model, adapter }: the base model taking the adapters as inputs, and the .onnx_adapter file. */
  async exportLoraAdapter(destination, outputNames, options) {
    if (this.#gpu) await this.#gpu.sync();
    return exportLoraAdapter(this, this.#state._raw, destination, outputNames, options);
  }

  /** Frees the module (its C object, plans and staging memory, its GPU buffers); idempotent. */
  release() {
    if (this.#gpu) {
      this.#gpu.release();
      if (this.#state._gpu === this.#gpu) this.#state._gpu = null;
      this.#gpu = null;
    }
    this.drop();
    this.#life.release();
  }
}

export class Optimizer extends Handle {
  #life;
  constructor(core, h, module, stateLife) {
    super(core, h, 'optimizer');
    this.module = module;
    this.#life = new Life(h, (x) => core.m._wtw_optimizer_free(x), () => stateLife.unref()).watch(this);
  }

  static async create(optimizerModel, module, options = {}) {
    checkOptions(options, MODEL_OPTIONS, 'Optimizer.create');
    options ??= {};
    const core = await coreFor(options);
    if (!(module instanceof Module)) throw new WebtrainError('Optimizer.create: the second argument must be a Module');
    const entries = externalDataOption(options.externalData, 'Optimizer.create');
    const bytes = await readBytes(optimizerModel);
    const [ext] = await externalReaders(core, [{ model: optimizerModel, bytes }], entries, 'Optimizer.create');
    module.h; // throws if the module was released
    const h = core.handle(ext.run(() => core.withBytes(bytes, (p, n) => core.m._wtw_optimizer_create(module.state._raw, p, n))), 'cannot create optimizer');
    return new Optimizer(core, h, module, module.state._retain());
  }

  /** The update; on the webgpu backend a Promise (the update runs on the GPU). */
  step() {
    const h = this.h;
    // The core would update the state's parameters still (it lives on), for a module no one can run.
    if (!this.module.isLive) throw new WebtrainError('optimizer step: its module was released; step before releasing the module (or release the optimizer too)');
    const gpu = this.module._gpu;
    if (gpu) return gpu.step(h);
    this.core.check(this.m._wtw_optimizer_step(h), 'optimizer step');
  }

  setLearningRate(lr) {
    const h = this.h;
    if (typeof lr !== 'number' || !Number.isFinite(lr) || lr < 0) throw new WebtrainError(`learning rate ${lr}: expected a finite number >= 0`);
    this.core.check(this.m._wtw_optimizer_set_lr(h, lr));
  }

  getLearningRate() {
    return this.m._wtw_optimizer_get_lr(this.h);
  }

  release() {
    this.drop();
    this.#life.release();
  }
}

/**
 * The learning rate follows the optimizer's step count, as in ONNX Runtime: lr = initialLr *
 * factor(step), set at creation and by each step() (called after optimizer.step()). A scheduler
 * made on an optimizer whose state was reloaded from a checkpoint saved with its optimizer state
 * continues the schedule from the step stored there.
 */
export class LinearLRScheduler {
  #o;
  constructor(optimizer, warmupStepCount, totalStepCount, initialLr) {
    if (!(optimizer instanceof Optimizer)) throw new WebtrainError('LinearLRScheduler: the first argument must be an Optimizer');
    optimizer.h; // throws once released
    if (!Number.isInteger(warmupStepCount) || warmupStepCount < 0) throw new WebtrainError(`LinearLRScheduler: warmupStepCount must be an integer >= 0; got ${warmupStepCount}`);
    if (!Number.isInteger(totalStepCount) || totalStepCount <= 0) throw new WebtrainError(`LinearLRScheduler: totalStepCount must be an integer > 0; got ${totalStepCount}`);
    if (initialLr !== undefined && !(Number.isFinite(initialLr) && initialLr >= 0)) throw new WebtrainError(`LinearLRScheduler: initialLr must be a number >= 0; got ${initialLr}`);
    this.#o = optimizer;
    const lr = initialLr ?? optimizer.getLearningRate();
    optimizer.core.check(optimizer.m._wtw_optimizer_set_linear_scheduler(optimizer.h, warmupStepCount, totalStepCount, lr), 'LinearLRScheduler');
  }

  step() {
    this.#o.core.check(this.#o.m._wtw_optimizer_scheduler_step(this.#o.h), 'scheduler step');
  }
}
