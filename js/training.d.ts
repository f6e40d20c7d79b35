// Type declarations for js/training.js: ONNX Runtime's on-device training API.
//
// Options objects: a key that is not documented here (a typo: `requiresgrad`) throws a
// TypeError naming it and the nearest documented key, instead of being ignored.
//
// Lifetimes: CheckpointState, Module, Optimizer and InferenceSession hold memory in the
// WebAssembly heap. `release()` frees it at once (the way to bound memory in a loop); an object
// dropped without `release()` is freed after the garbage collector collects it
// (FinalizationRegistry), at a time the engine chooses: the collector does not see the
// WebAssembly heap, so objects dropped in a loop may pile up there until it runs. A state lives
// on while the Modules and Optimizers built on it do (they hold it), a module while its
// Optimizer does.
//
// Buffers returned as bytes are `Uint8Array<ArrayBuffer>`: fresh copies, never views of the
// heap, which a Blob or a transfer takes as they are.
import type { InitOptions } from './core.js';
import type { Tensor, TensorData, TensorLike } from './tensor.js';
import type { BytesSource, ExternalDataFile, ModelOptions } from './session.js';
import type { TrainingModelBytes } from './artifacts.js';

/**
 * Where bytes are written: a file path or `file:` URL in Node (written atomically: temporary
 * file, fsync, rename), a destination a storage layer registered (e.g. an `idb://` name in
 * browsers), or a function that receives the bytes (and may return a promise).
 */
export type BytesDestination = string | URL | ((bytes: Uint8Array) => unknown);

/** A model parameter, copied out of the checkpoint state when read. */
export interface Parameter {
  readonly name: string;
  readonly dims: number[];
  /** Whether the parameter is trainable (has a gradient). */
  readonly requiresGrad: boolean;
  /** A copy of the values. */
  readonly data: Float32Array;
  /** A copy of the gradient; null for frozen parameters. */
  readonly grad: Float32Array | null;
}

/** The parameters of a checkpoint state, by name (Map-like; values are copies). */
export interface Parameters extends Iterable<[string, Parameter]> {
  /** The number of parameters. */
  readonly size: number;
  has(name: string): boolean;
  /** The parameter, or undefined when there is none of that name. */
  get(name: string): Parameter | undefined;
  /** Overwrites a parameter's values (same number of elements); throws for an unknown name. */
  set(name: string, values: Float32Array | ArrayLike<number> | Iterable<number>): void;
  keys(): IterableIterator<string>;
  values(): IterableIterator<Parameter>;
  entries(): IterableIterator<[string, Parameter]>;
  [Symbol.iterator](): IterableIterator<[string, Parameter]>;
}

/** A checkpoint property value: integers and floats read back as numbers. */
export type PropertyValue = number | string;

/** User properties of a checkpoint state (int, float or string), saved with it. */
export interface Properties extends Iterable<[string, PropertyValue]> {
  readonly size: number;
  has(name: string): boolean;
  get(name: string): PropertyValue | undefined;
  /**
   * Adds or replaces a property. Strings are stored as strings, integers (`Number.isInteger`, or
   * a bigint) as int64, other numbers as float; pass `'float'` to store an integral number as a
   * float.
   */
  set(name: string, value: number | bigint | string, type?: 'float'): void;
  entries(): IterableIterator<[string, PropertyValue]>;
  [Symbol.iterator](): IterableIterator<[string, PropertyValue]>;
}

export interface SaveCheckpointOptions {
  /** Also save the optimizer's state (e.g. AdamW moments and step), to resume training exactly. */
  includeOptimizerState?: boolean | undefined;
  /**
   * Keep the tensors in a side file, `destination + '.data'` (ONNX Runtime's layout for
   * checkpoints over 2 GB; a file path in Node): true, false, or 'auto' (the default: from
   * 1.5 GiB of tensors on). The resolved bytes are then the checkpoint file's.
   */
  externalData?: boolean | 'auto' | undefined;
  /**
   * Save the trainable parameters alone (LoRA adapters, a new head: small), with a fingerprint of
   * the frozen ones; load them back with `state.loadParameters`.
   */
  trainableOnly?: boolean | undefined;
}

/** Bytes read into the wasm heap so far, out of `total`. */
export interface LoadProgress {
  loaded: number;
  total: number;
}

/** exportModelForInferencing's options. */
export interface ExportOptions {
  /**
   * Write the weights read from external data (a frozen base's) as references to the same side
   * files, not their bytes (default false: the model holds every weight).
   */
  keepExternalData?: boolean | undefined;
}

/** Module.create's options: the models' side files, and progress as their bytes land. */
export interface ModuleOptions extends ModelOptions {
  /** Called as the models' external data (a base's frozen weights) streams into the heap. */
  onProgress?: ((progress: LoadProgress) => void) | undefined;
}

export interface LoadCheckpointOptions extends InitOptions {
  /** Called as a file or Blob checkpoint (then its side file) streams into the heap. */
  onProgress?: ((progress: LoadProgress) => void) | undefined;
  /**
   * The side file of a checkpoint saved with external data: a path, URL, bytes or Blob. By
   * default the checkpoint's path or URL + '.data'; needed when the checkpoint is given as bytes.
   */
  externalData?: string | URL | ArrayBufferLike | ArrayBufferView | Blob | readonly ExternalDataFile[] | undefined;
}

/** Parameters, gradients, optimizer state and properties of a training session. */
export declare class CheckpointState {
  private constructor();
  /** Loads a checkpoint (a path, URL, bytes or Blob; its '.data' side file with it if it has one). */
  static loadCheckpoint(source: BytesSource, options?: LoadCheckpointOptions): Promise<CheckpointState>;
  /**
   * Serializes `state`, writes it to `destination` when one is given, and resolves to the bytes.
   */
  static saveCheckpoint(state: CheckpointState, destination?: BytesDestination | null, options?: SaveCheckpointOptions): Promise<Uint8Array<ArrayBuffer>>;
  /** False once the state was released. */
  readonly isLive: boolean;
  readonly parameters: Parameters;
  readonly properties: Properties;
  /**
   * Copies the parameters of a checkpoint (e.g. saved with `trainableOnly`), or of an
   * `.onnx_adapter` file (`Module.exportLoraAdapter`), into this state. Each
   * must be a parameter of the same type and shape here, and the frozen base must be the one it
   * was trained with (its fingerprint); otherwise an error naming what differs, the state unchanged.
   */
  loadParameters(source: BytesSource): Promise<void>;
  /** The serialized checkpoint. */
  toBytes(options?: Pick<SaveCheckpointOptions, 'includeOptimizerState'>): Uint8Array<ArrayBuffer>;
  /**
   * Releases the state: using it afterwards throws. Its memory is freed once the Modules and
   * Optimizers created on it are released too. Idempotent.
   */
  release(): void;
}

/** A model input: a Tensor, an onnxruntime-web-like `{ type, data, dims }`, or a typed array (1-D). */
export type ModuleInput = Tensor | TensorLike | TensorData;

/** Model inputs by name. */
export type NamedModuleInputs = { [name: string]: ModuleInput } | Map<string, ModuleInput>;

/** enum wt_module_mode (include/webtrain.h): 0 train, 1 eval. */
export type ModuleMode = (typeof import('./abi.js').Mode)['TRAIN' | 'EVAL'];

/**
 * What `Module.run` returns for a training model generated with `additionalOutputNames: E`: the
 * loss alone (a float32 Tensor) when E is empty, else an array: the loss, then one Tensor per
 * additional output, in that order. For a model whose additional outputs are not known to the
 * type (E is `string[]`), either.
 */
export type RunResult<E extends readonly string[] = readonly string[]> = E extends readonly [] ? Tensor<'float32'> : number extends E['length'] ? Tensor<'float32'> | AllOutputs<E> : AllOutputs<E>;

/** Every output of a training/eval step: the loss, then the additional outputs (`Module.runAll`). */
export type AllOutputs<E extends readonly string[] = readonly string[]> = [loss: Tensor<'float32'>, ...additional: { -readonly [K in keyof E]: Tensor }];

/** Where a module's steps run, as `Module.create` was asked (`'auto'` decides at the first step). */
export type ModuleBackend = 'wasm' | 'webgpu' | 'auto';

/**
 * What a step method returns on a module created for backend `B`: the value itself on
 * `'wasm'`, a Promise of it on `'webgpu'`, either with `'auto'`. Code that awaits it runs on
 * every backend. On `'webgpu'`, a step's outputs are read back from the GPU only when awaited.
 */
export type OnBackend<T, B extends ModuleBackend> = B extends 'wasm' ? T : B extends 'webgpu' ? Promise<T> : T | Promise<T>;

/**
 * Runs training steps (forward, backward, gradient accumulation) and eval steps. `R` is what
 * `run` returns and `A` what `runAll` returns: `RunResult<E>` and `AllOutputs<E>` for a
 * training model with the additional output names E. `Module.create` infers E from generated
 * artifacts and takes it as a type argument for models from elsewhere
 * (`Module.create<['output']>('training_model.onnx', state)`; without one: no additional
 * outputs). `B` is the backend `Module.create` was given (its `backend` option; `'wasm'` when
 * none, whatever `init` chose: pass `backend` for the types to follow it), which decides whether
 * the step methods return Promises (`OnBackend`). A plain `Module` is a wasm module.
 */
export declare class Module<R extends Tensor | Tensor[] = RunResult, A extends Tensor[] = AllOutputs, B extends ModuleBackend = 'wasm'> {
  private constructor();
  /**
   * Creates a module on `state` from the training model and, optionally, the eval model (paths,
   * URLs, bytes, Blobs, Files or Responses).
   */
  static create<const E extends readonly string[] = [], const B extends ModuleBackend = 'wasm'>(
    trainingModel: TrainingModelBytes<E> | BytesSource,
    state: CheckpointState,
    evalModel?: TrainingModelBytes<E> | BytesSource | null,
    options?: ModuleOptions & { backend?: B | undefined },
  ): Promise<Module<RunResult<E>, AllOutputs<E>, B>>;
  /** The checkpoint state the module trains. */
  readonly state: CheckpointState;
  /**
   * Where the steps run: `'webgpu'` (Module.create's or init's `backend`) or `'wasm'`. On
   * `'webgpu'`, run/runNamed/runAll/predict, `optimizer.step()`, `state.parameters.get()`,
   * `state.toBytes()`, `getContiguousParameters()` and the exports return Promises (they read the
   * parameters back from the GPU): write `await` and the same code runs on both backends.
   */
  readonly backend: 'wasm' | 'webgpu';
  /** True in training mode (the default), false in eval mode. */
  readonly isTraining: boolean;
  /** Switches to training mode; returns the module. */
  train(): this;
  /** Switches to eval mode; returns the module. */
  eval(): this;
  /** Input names of the model of the current mode (or of `mode`). */
  inputNames(mode?: ModuleMode): string[];
  /** Output names of the model of the current mode (or of `mode`). */
  outputNames(mode?: ModuleMode): string[];
  /**
   * A training step (training mode: forward, backward, gradients accumulated) or an eval step.
   * Inputs positionally (`run(x, labels)`) or by name (`run({ input: x, labels })`). Returns
   * the loss Tensor when the model has no additional outputs, else an array: the loss, then the
   * additional outputs.
   */
  run(inputs: NamedModuleInputs): OnBackend<R, B>;
  run(...inputs: ModuleInput[]): OnBackend<R, B>;
  /** Like `run`, always returning every output as an array: the loss first. */
  runAll(inputs: NamedModuleInputs): OnBackend<A, B>;
  runAll(...inputs: ModuleInput[]): OnBackend<A, B>;
  /** Like `run`, returning every output by name. */
  runNamed(inputs: NamedModuleInputs): OnBackend<Record<string, Tensor>, B>;
  runNamed(...inputs: ModuleInput[]): OnBackend<Record<string, Tensor>, B>;
  /**
   * Runs the model forward on the current parameters: no labels, no loss, no gradients; in
   * inference mode (the eval model: Dropout off, BatchNormalization on its running statistics),
   * so between training steps it gives what the exported model would. `inputs` by name, or the
   * model's one input as a tensor. `outputNames` default to the model's outputs (which the eval
   * model of artifacts webtrain generates lists after the loss); artifacts generated elsewhere
   * need them named. The first call for a set of outputs builds its plan (in the module's
   * activation memory); calls after it allocate nothing but the returned tensors. Needs the eval
   * model; leaves train/eval mode and the gradients as they are.
   */
  predict(inputs: NamedModuleInputs | ModuleInput, outputNames?: readonly string[]): OnBackend<Record<string, Tensor>, B>;
  /**
   * Schedules the gradients to be reset before the next training step accumulates into them.
   * The optimizer has no gradients to apply until a training step ran after it.
   */
  lazyResetGrad(): void;
  /**
   * Memory held for this module, in bytes: the activation arena its training and eval models
   * share, the activations live at the busiest step of each (plans built so far), the forward
   * activations (and batch inputs) the backward pass reads, and its state's parameters,
   * gradients and moments. On the webgpu backend, `gpu`: the bytes of the GPU buffers it holds
   * (parameters, gradients, moments, the arena its programs share, their constants, and the rest:
   * uniforms, placeholders, readback), with their `total`.
   */
  memoryStats(): {
    arena: number; livePeakTrain: number; livePeakEval: number; saved: number; params: number; grads: number; moments: number; packed: number;
    gpu?: { params: number; grads: number; moments: number; arena: number; constants: number; other: number; total: number };
  };
  /** The number of parameter elements (trainable ones only by default). */
  getParametersSize(trainableOnly?: boolean): number;
  /** Every parameter (trainable ones only by default), flattened into one float32 tensor. */
  getContiguousParameters(trainableOnly?: boolean): OnBackend<Tensor<'float32'>, B>;
  /** Overwrites the parameters from one flat buffer, as `getContiguousParameters` lays them out. */
  copyBufferToParameters(buffer: Float32Array | Tensor<'float32'>, trainableOnly?: boolean): void;
  /**
   * Exports a plain ONNX inference model computing `outputNames` with the current parameters;
   * writes it to `destination` when given and resolves to its bytes.
   */
  exportModelForInferencing(outputNames: string[], options?: ExportOptions): Promise<Uint8Array<ArrayBuffer>>;
  exportModelForInferencing(destination: BytesDestination | null | undefined, outputNames: string[], options?: ExportOptions): Promise<Uint8Array<ArrayBuffer>>;
  /** LoRA (artifacts generated with `lora`): the inference model with W + (alpha/rank)·B·A folded into each adapted weight; plain ONNX. */
  exportMergedModel(outputNames: string[]): Promise<Uint8Array<ArrayBuffer>>;
  exportMergedModel(destination: BytesDestination | null | undefined, outputNames: string[]): Promise<Uint8Array<ArrayBuffer>>;
  /**
   * LoRA: the base inference model taking every `<W>.lora_A` / `<W>.lora_B` as an input (defaults:
   * lora_B zero, i.e. the base model) and the trained adapters in ONNX Runtime's adapter format
   * (.onnx_adapter); with a destination path `p`, written to `p.onnx` and `p.onnx_adapter`.
   */
  exportLoraAdapter(outputNames: string[], options?: { adapterVersion?: number; modelVersion?: number }): Promise<{ model: Uint8Array<ArrayBuffer>; adapter: Uint8Array<ArrayBuffer> }>;
  exportLoraAdapter(destination: string | URL | null | undefined, outputNames: string[], options?: { adapterVersion?: number; modelVersion?: number }): Promise<{ model: Uint8Array<ArrayBuffer>; adapter: Uint8Array<ArrayBuffer> }>;
  /** False once released. */
  readonly isLive: boolean;
  /**
   * Frees the module (its plans and activation memory); using it afterwards throws. Idempotent.
   * Without it, the module is freed once garbage-collected.
   */
  release(): void;
}

/** Updates a Module's parameters from their gradients with the optimizer model's algorithm. */
export declare class Optimizer<B extends ModuleBackend = 'wasm'> {
  private constructor();
  /** Creates the optimizer for `module` from the optimizer model (a path, URL or bytes). */
  static create<B extends ModuleBackend = 'wasm'>(optimizerModel: BytesSource, module: Module<any, any, B>, options?: ModelOptions): Promise<Optimizer<B>>;
  /** The module it updates. */
  readonly module: Module<any, any, B>;
  /**
   * One optimizer step over every trainable parameter, from the gradients the training steps
   * (`module.run` in training mode) accumulated since the last step or `lazyResetGrad()`: several
   * runs then one step is gradient accumulation. Throws a WebtrainError when there are none
   * (before any training step, after `lazyResetGrad()`, after eval-mode runs only: a step would
   * apply weight decay alone and count a step), when the last training step's loss was not
   * finite, and when the module was released. On webgpu the update is submitted to the GPU
   * (the Promise settles then, without waiting for it to run).
   */
  step(): OnBackend<void, B>;
  /** False once released. */
  readonly isLive: boolean;
  setLearningRate(learningRate: number): void;
  getLearningRate(): number;
  /** Frees the optimizer (and its state); using it afterwards throws. Idempotent. */
  release(): void;
}

/**
 * Drives the optimizer's learning rate: linear warm-up from 0 to `initialLr` over
 * `warmupStepCount` steps, then linear decay to 0 at `totalStepCount`. Throws a WebtrainError for
 * a released optimizer, a negative or non-integer step count, or a negative `initialLr`.
 */
export declare class LinearLRScheduler {
  /** `initialLr` defaults to the optimizer's current learning rate. */
  constructor(optimizer: Optimizer<ModuleBackend>, warmupStepCount: number, totalStepCount: number, initialLr?: number);
  /** Advances one step and updates the optimizer's learning rate. */
  step(): void;
}
