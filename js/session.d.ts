// Type declarations for js/session.js.
import type { InitOptions } from './core.js';
import type { Tensor, TensorData, TensorLike } from './tensor.js';

/** A model input: a Tensor, an onnxruntime-web-like `{ type, data, dims }`, or a 1-D typed array. */
export type SessionFeed = Tensor | TensorLike | TensorData;

/**
 * A model or checkpoint to read: bytes (Uint8Array, ArrayBuffer or any ArrayBuffer view), a
 * Blob or File (e.g. from `<input type="file">`), a fetch Response, a file path (Node), a URL
 * (`http(s):`, `blob:`, `data:`, `file:`) as a string or a URL object, or in browsers an
 * `idb://NAME` (IndexedDB). Anything else is rejected with a TypeError.
 */
export type BytesSource = string | URL | ArrayBufferLike | ArrayBufferView | Blob | Response;

/**
 * One side file of a model saved with external data (`model.onnx` + `model.onnx.data`): `path`
 * is the location its tensors name (e.g. 'model.onnx.data'); `data` its bytes, a Blob or File,
 * a URL, or a path (Node) / URL string.
 */
export interface ExternalDataFile {
  path: string;
  data: ArrayBufferLike | ArrayBufferView | Blob | URL | string;
}

/**
 * Options of the calls that read a model. `externalData`: side files given explicitly (they
 * win over the files beside a model path or URL); an entry no tensor references is an error.
 */
export interface ModelOptions extends InitOptions {
  externalData?: readonly ExternalDataFile[] | undefined;
}

/** Runs the forward pass of an ONNX model. */
export declare class InferenceSession {
  private constructor();
  /** Loads a model; rejects with a WebtrainError naming what is wrong with it. */
  static create(model: BytesSource, options?: ModelOptions): Promise<InferenceSession>;
  /** The model's graph input names, in order. */
  readonly inputNames: string[];
  /** The model's graph output names, in order. */
  readonly outputNames: string[];
  /** Runs the model: every input by name, as a Tensor; resolves to every output by name. */
  run(feeds: Record<string, SessionFeed> | Map<string, SessionFeed>): Promise<Record<string, Tensor>>;
  /** Like `run`, synchronously. */
  runSync(feeds: Record<string, SessionFeed> | Map<string, SessionFeed>): Record<string, Tensor>;
  /** Bytes of activation memory the cached execution plans hold. */
  readonly arenaBytes: number;
  /** Where run() computes: `'webgpu'` (run() only; runSync() throws) or `'wasm'`. */
  readonly backend: 'wasm' | 'webgpu';
  /**
   * Frees the session; using it afterwards throws. Idempotent. A session dropped without it is
   * freed once garbage-collected.
   */
  release(): void;
}
