// Type declarations of webtrain's browser entry (web/index.js): the whole package API plus
// IndexedDB (`idb`), Web Worker training (`worker`) and the SIMD-checking `init`.
import type { InitOptions, Core, RuntimeInfo } from '../js/core.js';
import type { Tensor, TensorLike } from '../js/tensor.js';
import type { BytesSource, ExternalDataFile } from '../js/session.js';
import type { BytesDestination, SaveCheckpointOptions, PropertyValue, ModuleMode, Module, RunResult, AllOutputs } from '../js/training.js';
import type { GenerateArtifactsOptions, Artifacts, TrainingModelBytes } from '../js/artifacts.js';

export * from '../js/index.js';
export type { WorkerFitOptions, WorkerFitProgress } from './worker-fit.js';

/** Loads the core (implicit in every API call), checking WebAssembly SIMD first. */
export declare function init(options?: InitOptions): Promise<Core>;
/** Whether this engine supports WebAssembly SIMD (128-bit), which the core needs. */
export declare function simdSupported(): boolean;
/**
 * Whether this engine runs WebAssembly Relaxed SIMD, which the fused-multiply-add builds
 * (`webtrain-core-fma.wasm`) need: what `init({ simd: 'auto' })` checks.
 */
export declare function relaxedSimdSupported(): boolean;
/** Throws a WebtrainError explaining what this browser lacks, if anything. */
export declare function checkSupport(): void;

import type { IdbEntry } from './idb.js';
import type { InspectedModel, InspectedCheckpoint } from '../js/inspect.js';
export type { IdbEntry } from './idb.js';
/** IndexedDB storage behind idb:// locations. */
export * as idb from './idb.js';

/** Marks a typed array or Tensor to be transferred (moved) to the worker instead of copied. */
export declare function transfer<T extends object>(x: T): T;

export interface WorkerOptions {
  /** Where the .wasm is served, if not next to dist/webtrain-core.mjs (see InitOptions.wasmUrl: esbuild needs it). */
  wasmUrl?: string | URL;
  /**
   * Where `web/worker.js`, bundled as an entry point of its own, is served. Vite and webpack 5
   * bundle the worker by themselves; esbuild does not: add `node_modules/webtrain/web/worker.js`
   * to its `entryPoints` as `worker` (found next to your bundle without this option) or pass
   * that bundle's URL here. Relative URLs are resolved against the page. Where the worker
   * does not start, worker() rejects with a WebtrainError naming this option.
   */
  workerUrl?: string | URL;
  /** Threads in the worker (InitOptions.threads): the threaded build where the page is crossOriginIsolated. */
  threads?: 'auto' | number;
  /** Where the threaded build's webtrain-core-mt.mjs is served (InitOptions.threadedUrl). */
  threadedUrl?: string | URL;
  /** Which vector build the worker loads (InitOptions.simd): 'auto', 'relaxed' or 'simd128'. */
  simd?: 'auto' | 'relaxed' | 'simd128';
}

import type { TrainProgress, TrainEpochsResult, TrainLoopOptions } from '../js/loop.js';

type WorkerInput = Tensor | TensorLike | ArrayBufferView;

/** A model or checkpoint for the worker: any BytesSource but a Response (it cannot be sent to a worker). */
export type WorkerBytesSource = Exclude<BytesSource, Response>;

/** trainEpochs in the worker: the same loop (js/loop.js) on the worker's objects, batches as an array (the package entry's TrainEpochsOptions, for Node and pages, is js/loop.d.ts's). */
export interface TrainEpochsOptions extends TrainLoopOptions<WorkerInput> {
  module: RemoteModule;
  optimizer: RemoteOptimizer;
  scheduler?: RemoteScheduler;
}

interface RemoteParameter {
  name: string;
  dims: number[];
  requiresGrad: boolean;
  data: Float32Array;
  grad: Float32Array | null;
}

/**
 * An object in the worker. Its calls fail as the object's do on the main thread (a released
 * module: "the module was released"; a second release() does nothing); errors keep their class
 * (WebtrainError, TypeError, RangeError), `code` and `status`. A proxy dropped without
 * release() lets the worker free the object once the proxy is garbage-collected.
 */
declare class RemoteObject {
  release(): Promise<void>;
}

export declare class RemoteCheckpointState extends RemoteObject {
  readonly parameters: {
    get(name: string): Promise<RemoteParameter | undefined>;
    set(name: string, values: Float32Array | number[]): Promise<void>;
    has(name: string): Promise<boolean>;
    keys(): Promise<string[]>;
    values(): Promise<RemoteParameter[]>;
    entries(): Promise<[string, RemoteParameter][]>;
    size(): Promise<number>;
  };
  readonly properties: {
    get(name: string): Promise<PropertyValue | undefined>;
    set(name: string, value: number | bigint | string, type?: 'float'): Promise<void>;
    has(name: string): Promise<boolean>;
    entries(): Promise<[string, PropertyValue][]>;
    size(): Promise<number>;
  };
  toBytes(options?: Pick<SaveCheckpointOptions, 'includeOptimizerState'>): Promise<Uint8Array<ArrayBuffer>>;
  /** LoRA: a (trainable-only) checkpoint's parameters into this state (CheckpointState.loadParameters). */
  loadParameters(source: Uint8Array | string): Promise<void>;
  isLive(): Promise<boolean>;
}

/** A Module in the worker; `R` and `A` as for `Module` (what `run` and `runAll` resolve to). */
export declare class RemoteModule<R extends Tensor | Tensor[] = RunResult, A extends Tensor[] = AllOutputs> extends RemoteObject {
  train(): Promise<void>;
  eval(): Promise<void>;
  isTraining(): Promise<boolean>;
  /** Where the module's steps run in the worker: 'webgpu' or 'wasm'. */
  backend(): Promise<'wasm' | 'webgpu'>;
  run(...inputs: unknown[]): Promise<R>;
  runNamed(...inputs: unknown[]): Promise<Record<string, Tensor>>;
  runAll(...inputs: unknown[]): Promise<A>;
  /** A forward-only run on the current parameters (Module.predict). */
  predict(inputs: unknown, outputNames?: readonly string[]): Promise<Record<string, Tensor>>;
  lazyResetGrad(): Promise<void>;
  isLive(): Promise<boolean>;
  memoryStats(): Promise<ReturnType<Module['memoryStats']>>;
  getParametersSize(trainableOnly?: boolean): Promise<number>;
  getContiguousParameters(trainableOnly?: boolean): Promise<Tensor>;
  copyBufferToParameters(buffer: Float32Array | Tensor, trainableOnly?: boolean): Promise<void>;
  /** Destination: an idb:// location, or omit it (outputs first) to get the bytes. */
  exportModelForInferencing(destination: string | URL | null, outputNames: string[]): Promise<Uint8Array<ArrayBuffer>>;
  exportModelForInferencing(outputNames: string[]): Promise<Uint8Array<ArrayBuffer>>;
  /** LoRA: the merged inference model (Module.exportMergedModel). */
  exportMergedModel(destination: string | URL | null, outputNames: string[]): Promise<Uint8Array<ArrayBuffer>>;
  exportMergedModel(outputNames: string[]): Promise<Uint8Array<ArrayBuffer>>;
  /** LoRA: { model, adapter } (Module.exportLoraAdapter). */
  exportLoraAdapter(outputNames: string[], options?: { adapterVersion?: number; modelVersion?: number }): Promise<{ model: Uint8Array<ArrayBuffer>; adapter: Uint8Array<ArrayBuffer> }>;
  inputNames(mode?: ModuleMode): Promise<string[]>;
  outputNames(mode?: ModuleMode): Promise<string[]>;
}

export declare class RemoteOptimizer extends RemoteObject {
  step(): Promise<void>;
  setLearningRate(lr: number): Promise<void>;
  getLearningRate(): Promise<number>;
  isLive(): Promise<boolean>;
}

export declare class RemoteScheduler extends RemoteObject {
  step(): Promise<void>;
}

export declare class RemoteInferenceSession extends RemoteObject {
  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>>;
  /** Bytes of activation memory the session's cached plans hold. */
  arenaBytes(): Promise<number>;
  /** Where run() computes in the worker: 'webgpu' or 'wasm'. */
  backend(): Promise<'wasm' | 'webgpu'>;
}

/** The training API running in a Web Worker: every call returns a Promise. */
export declare class WebtrainWorker extends EventTarget {
  readonly CheckpointState: {
    loadCheckpoint(source: WorkerBytesSource): Promise<RemoteCheckpointState>;
    /** Destination: an idb:// location, or null to get the bytes. */
    saveCheckpoint(state: RemoteCheckpointState, destination?: string | URL | null, options?: SaveCheckpointOptions): Promise<Uint8Array<ArrayBuffer>>;
  };
  readonly Module: {
    create<const E extends readonly string[] = []>(
      trainingModel: TrainingModelBytes<E> | WorkerBytesSource,
      state: RemoteCheckpointState,
      evalModel?: TrainingModelBytes<E> | WorkerBytesSource,
      options?: { externalData?: readonly ExternalDataFile[] | undefined },
    ): Promise<RemoteModule<RunResult<E>, AllOutputs<E>>>;
  };
  readonly Optimizer: { create(optimizerModel: WorkerBytesSource, module: RemoteModule, options?: { externalData?: readonly ExternalDataFile[] | undefined }): Promise<RemoteOptimizer> };
  readonly LinearLRScheduler: { create(optimizer: RemoteOptimizer, warmupStepCount: number, totalStepCount: number, initialLr?: number): Promise<RemoteScheduler> };
  readonly InferenceSession: { create(model: WorkerBytesSource, options?: { externalData?: readonly ExternalDataFile[] | undefined }): Promise<RemoteInferenceSession> };
  readonly artifacts: {
    readonly LossType: typeof import('../js/abi.js').LossType;
    readonly OptimType: typeof import('../js/abi.js').OptimType;
    /** Built-in losses only (an onnxblock.Block cannot be sent to a worker). */
    generateArtifacts<const O extends GenerateArtifactsOptions = {}>(model: WorkerBytesSource, options?: O): Promise<Artifacts<O>>;
  };
  readonly idb: {
    list(prefix?: string): Promise<IdbEntry[]>;
    load(location: string): Promise<Uint8Array<ArrayBuffer>>;
    save(location: string, bytes: ArrayBuffer | ArrayBufferView): Promise<{ name: string; size: number; modified: number }>;
    has(location: string): Promise<boolean>;
    delete(location: string): Promise<boolean>;
    clear(prefix?: string): Promise<number>;
  };
  /** What a model or checkpoint declares, read in the worker: see inspect(). */
  inspect(source: WorkerBytesSource, options?: { externalData?: readonly ExternalDataFile[] | undefined }): Promise<InspectedModel | InspectedCheckpoint>;
  simdName(): Promise<string>;
  /** What the worker's core runs with (threads, build, ...): see runtimeInfo(). */
  runtimeInfo(): Promise<RuntimeInfo>;
  trainEpochs(options: TrainEpochsOptions): Promise<TrainEpochsResult>;
  terminate(): void;
  addEventListener(type: 'progress', listener: (ev: CustomEvent<TrainProgress>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
}

/** Starts a Web Worker running webtrain, with the core loaded. */
export declare function worker(options?: WorkerOptions): Promise<WebtrainWorker>;

export type { BytesDestination };
