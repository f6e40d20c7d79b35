// Type declarations for js/loop.js: trainEpochs, the training loop shared by Node, pages and
// webtrain.worker().
import type { Tensor, TensorLike } from './tensor.js';
import type { Module, Optimizer, LinearLRScheduler, ModuleInput } from './training.js';

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
  module: Module;
  optimizer: Optimizer;
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
