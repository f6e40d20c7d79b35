// Type declarations for js/loop.js: fit and trainEpochs, the training loop shared by Node, pages
// and webtrain.worker().
//
// Epochs are numbered from 0 everywhere: `initialEpoch`, the history's and the callbacks'
// `epoch`, the checkpoint path's `{epoch}` and the progress line ("epoch 2 (3/5)": epoch 2, the
// third of epochs 0..4). `epochs` is the number to stop before: resuming after epoch k is
// `initialEpoch: k + 1` with the same `epochs`.
//
// An option key not documented here (in an options object, its callbacks, earlyStopping,
// checkpoint or validation) throws a TypeError naming it and the nearest documented key.
import type { Tensor, TensorLike } from './tensor.js';
import type { Module, Optimizer, LinearLRScheduler, ModuleInput, ModuleBackend } from './training.js';

/** What onProgress receives. */
export interface TrainProgress {
  step: number;
  /** Undefined when the batches come from an iterable (their count unknown). */
  totalSteps: number;
  epoch: number;
  epochs: number;
  batch: number;
  batches: number;
  loss: number;
  /** Mean loss of the epoch so far. */
  epochLoss: number;
  epochDone: boolean;
  elapsedMs: number;
}

export interface TrainEpochsResult {
  steps: number;
  epochs: number;
  /** The loss of every step. */
  losses: Float32Array;
  lastLoss: number;
  elapsedMs: number;
}

/** The data and the knobs of a training loop, whatever runs it (`I`: one input of a batch). */
export interface TrainLoopOptions<I> {
  /** Whole data sets, samples along axis 0, in the training model's input order; with batchSize. */
  inputs?: I[];
  batchSize?: number;
  /** Or explicit batches: [[input, labels], ...]. */
  batches?: I[][];
  epochs?: number;
  shuffle?: boolean;
  seed?: number;
  dropLast?: boolean;
  /** Progress every this many steps (default 1), and at the end of each epoch. */
  progressEvery?: number;
  onProgress?: (p: TrainProgress) => void;
  /** Stops between steps: the promise rejects with a WebtrainError whose code is 'AbortError'. */
  signal?: AbortSignal;
}

type Batch = ModuleInput | ModuleInput[];

export interface TrainEpochsOptions extends Omit<TrainLoopOptions<Tensor | TensorLike | ArrayBufferView>, 'batches'> {
  module: Module<any, any, ModuleBackend>;
  optimizer: Optimizer<ModuleBackend>;
  /** Stepped after every optimizer step. */
  scheduler?: LinearLRScheduler;
  /**
   * Explicit batches (each the inputs of one module.run): an array, a function of the epoch
   * returning the epoch's batches, or (epochs: 1) any iterable or async iterable.
   */
  batches?: Batch[] | ((epoch: number) => Iterable<Batch> | AsyncIterable<Batch>) | Iterable<Batch> | AsyncIterable<Batch>;
  /** Lets the event loop run every this many milliseconds (default 30; Infinity: never). */
  yieldMs?: number;
}

/** Trains for `epochs` epochs: module.run, optimizer.step, scheduler?.step, lazyResetGrad per batch. */
export declare function trainEpochs(options: TrainEpochsOptions): Promise<TrainEpochsResult>;

/** A metric: a built-in name, or a function of a batch's outputs (those after the loss) and labels. */
export type Metric = 'accuracy' | ((outputs: Tensor[], labels: Tensor) => number);

/** One epoch of fit's history: the loss (mean over the epoch's batches), val* from the validation set, each metric by its name. */
export interface FitEpoch {
  /** From 0, as initialEpoch and the checkpoint's {epoch} count. */
  epoch: number;
  loss: number;
  valLoss?: number;
  accuracy?: number;
  valAccuracy?: number;
  /** The learning rate at the end of the epoch. */
  lr: number;
  /** Batches skipped for a non-finite loss (onNonFinite: 'skip'), when any. */
  skipped?: number;
  seconds: number;
  [metric: string]: number | undefined;
}

/** What onBatchEnd receives: trainEpochs' progress plus the epoch's training metrics so far. */
export interface FitBatch extends TrainProgress {
  /** The batch's loss was not finite: its update was not applied. */
  skipped?: true;
  [metric: string]: number | boolean | undefined;
}

export interface EarlyStoppingOptions {
  /** A key of the history's entries; default 'valLoss' with validation data, else 'loss'. */
  monitor?: string;
  /** Epochs without improvement before stopping (default 0). */
  patience?: number;
  minDelta?: number;
  /** Default 'max' for a name with 'acc' in it, else 'min'. */
  mode?: 'min' | 'max';
  /** At the end, put back the parameters of the best epoch. */
  restoreBest?: boolean;
}

/** The options of fit (`I`: one input of a batch). */
export interface FitOptions<I = Tensor | TensorLike | ArrayBufferView> {
  /** The inputs, samples along axis 0: one tensor, or one per model input (in order). */
  x?: I | I[];
  /** The labels (the training model's last input), samples along axis 0. */
  y?: I;
  /** Default 32. */
  batchSize?: number;
  /** Or explicit batches (each the inputs of one module.run), as trainEpochs takes them. */
  batches?: TrainEpochsOptions['batches'];
  /** The last epoch (exclusive): epochs - initialEpoch epochs run. Default 1. */
  epochs?: number;
  /** The first epoch's number (resuming: shuffles and history go on from there). Default 0. */
  initialEpoch?: number;
  /** Default false. The order of an epoch depends on seed and the epoch's number only. */
  shuffle?: boolean;
  seed?: number;
  dropLast?: boolean;
  /** Run through the eval model after each epoch. */
  validation?: { x: I | I[]; y: I };
  /** Or this fraction of the samples (the last ones, before shuffling) as the validation set. */
  validationSplit?: number;
  /** Default: batchSize. */
  validationBatchSize?: number;
  /**
   * Computed on the validation set (the eval model of artifacts webtrain generates outputs the
   * model's outputs after the loss) and on the training batches when the training model outputs
   * them too (additionalOutputNames). Without validation data, or with ONNX Runtime's artifacts,
   * they need the artifacts generated with additionalOutputNames: ['<the model output>'].
   */
  metrics?: Metric[] | Record<string, Metric>;
  /** Stepped after every optimizer step. */
  scheduler?: LinearLRScheduler;
  /** Either may return false (or a Promise of false) to stop training (result.stopped: 'callback'). */
  callbacks?: {
    onBatchEnd?: (batch: FitBatch) => unknown;
    onEpochEnd?: (epoch: FitEpoch) => unknown;
  };
  /** onBatchEnd every this many steps (default 1), and at the end of each epoch. */
  progressEvery?: number;
  earlyStopping?: EarlyStoppingOptions;
  /**
   * Saves module.state (with the optimizer state unless includeOptimizerState: false) after
   * every epoch: a path in Node, idb://NAME in browsers; '{epoch}' in it becomes the epoch.
   */
  checkpoint?: string | { path: string; every?: 'epoch'; includeOptimizerState?: boolean };
  /** Stops between steps: the promise rejects with a WebtrainError whose code is 'AbortError' (and whose history is the history so far). */
  signal?: AbortSignal;
  /** A batch whose loss is NaN or infinite: 'throw' (default: fit rejects), 'skip' (no update; counted), 'stop'. */
  onNonFinite?: 'throw' | 'skip' | 'stop';
  /**
   * A progress line: on stderr (updating in place on a terminal, a line per epoch otherwise),
   * "epoch 2 (3/5) [...]": the epoch's number, then which of the epochs up to `epochs` it is.
   */
  progress?: boolean | { stream?: { write(s: string): unknown; isTTY?: boolean; columns?: number }; width?: number };
  /** Lets the event loop run every this many milliseconds (default 30; Infinity: never). */
  yieldMs?: number;
}

export interface FitResult {
  history: FitEpoch[];
  /** Optimizer steps taken. */
  steps: number;
  /** Epochs run (the length of history). */
  epochs: number;
  /** The loss of every step taken. */
  losses: Float32Array;
  lastLoss: number;
  /** Batches skipped for a non-finite loss. */
  skipped: number;
  /** Why it ended before its last epoch, or null. */
  stopped: null | 'earlyStopping' | 'callback' | 'nonFinite';
  /** With earlyStopping: the epoch of the best monitored value. */
  bestEpoch?: number;
  /** Whether the best epoch's parameters were put back (earlyStopping.restoreBest). */
  restored: boolean;
  elapsedMs: number;
}

/**
 * Trains `module` with `optimizer`: per batch module.run, then (a finite loss) optimizer.step
 * and scheduler?.step, and lazyResetGrad; per epoch validation (module.eval(), run, back to
 * train()), metrics, early stopping and a checkpoint.
 */
export declare function fit(module: Module<any, any, ModuleBackend>, optimizer: Optimizer<ModuleBackend>, options?: FitOptions): Promise<FitResult>;
