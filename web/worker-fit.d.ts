// Type declarations of fit in webtrain.worker() (w.fit, web/worker-host.js): the options of
// js/loop.d.ts's fit with the worker's objects, callbacks run on the page, built-in metrics
// only. They add fit to web/index.d.ts's WebtrainWorker (an interface merged with that class).
import type { Tensor, TensorLike } from '../js/tensor.js';
import type { FitOptions, FitResult, FitBatch, FitEpoch } from '../js/loop.js';
import type { RemoteModule, RemoteOptimizer, RemoteScheduler } from './index.js';

type WorkerInput = Tensor | TensorLike | ArrayBufferView;

/** fit's options in a worker: its objects, the data as tensors, 'accuracy' as the metric, an idb:// checkpoint. */
export interface WorkerFitOptions extends Omit<FitOptions<WorkerInput>, 'scheduler' | 'metrics' | 'batches' | 'callbacks' | 'checkpoint'> {
  scheduler?: RemoteScheduler;
  metrics?: 'accuracy'[] | Record<string, 'accuracy'>;
  /** Each batch's inputs (those of one module.run). */
  batches?: WorkerInput[][];
  /**
   * Run on the page, from the worker's progress messages. A false (or a Promise of false) from
   * onEpochEnd stops before the next epoch (the worker waits for it); from onBatchEnd, a few
   * batches later (when the message reaches the worker).
   */
  callbacks?: {
    onBatchEnd?: (batch: FitBatch) => unknown;
    onEpochEnd?: (epoch: FitEpoch) => unknown;
  };
  /** An idb:// location ('{epoch}' in it becomes the epoch). */
  checkpoint?: `idb://${string}` | { path: `idb://${string}`; every?: 'epoch'; includeOptimizerState?: boolean };
}

/** A 'progress' event's detail during w.fit: a batch's progress or an epoch's history entry. */
export type WorkerFitProgress = (FitBatch & { type: 'batch' }) | (FitEpoch & { type: 'epoch' });

declare module './index.js' {
  interface WebtrainWorker {
    /** js/loop.js's fit, run in the worker on its objects; see WorkerFitOptions. */
    fit(module: RemoteModule, optimizer: RemoteOptimizer, options?: WorkerFitOptions): Promise<FitResult>;
  }
}
