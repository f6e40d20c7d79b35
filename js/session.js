// InferenceSession: runs any ONNX model webtrain supports (the forward pass) from Node or a
// browser, on the wasm backend or the webgpu one (js/gpu/). Inputs are copied into the wasm
// heap, outputs copied out at once, temporaries freed in `finally`: no heap view escapes
// (memory growth would invalidate it).
import { coreFor, gpuFor, chosenBackend, WebtrainError } from './core.js';
import { checkOptions, MODEL_OPTIONS } from './options.js';
import { readBytes } from './bytes.js';
import { Staging, feedInputs, readOutputs } from './feeds.js';
import { externalDataOption, externalReaders } from './external.js';
import { Life } from './lifetime.js';

export class InferenceSession {
  #core;
  #handle;
  #life; // frees the C session on release(), or once the session is garbage-collected
  #gpu; // a GpuRunner on the webgpu backend, else null

  constructor(core, handle, gpu = null) {
    this.#core = core;
    this.#handle = handle;
    this.#gpu = gpu;
    this.#life = new Life(handle, (h) => core.m._wtw_session_free(h)).watch(this);
    const m = core.m;
    this.inputNames = Array.from({ length: m._wtw_session_input_count(handle) }, (_, i) => core.string(m._wtw_session_input_name(handle, i)));
    this.outputNames = Array.from({ length: m._wtw_session_output_count(handle) }, (_, i) => core.string(m._wtw_session_output_name(handle, i)));
  }

  /**
   * model: Uint8Array | ArrayBuffer | file path (Node) | URL; options.externalData: side files
   * of a model saved with external data (js/external.js).
   */
  static async create(model, options = {}) {
    checkOptions(options, MODEL_OPTIONS, 'InferenceSession.create');
    options ??= {};
    const core = await coreFor(options);
    const entries = externalDataOption(options.externalData, 'InferenceSession.create');
    const bytes = await readBytes(model);
    const [ext] = await externalReaders(core, [{ model, bytes }], entries, 'InferenceSession.create');
    const gpu = await gpuFor(options, 'InferenceSession.create');
    const h = core.handle(ext.run(() => core.withBytes(bytes, (p, n) => core.m._wtw_session_create(p, n))), 'cannot load model');
    if (!gpu) return new InferenceSession(core, h);
    const { GpuRunner } = await import('./gpu/runner.js');
    const m = core.m;
    const auto = chosenBackend(options) === 'auto';
    return new InferenceSession(core, h, new GpuRunner(gpu, core, h, m._wtw_session_input_count(h), m._wtw_session_output_count(h), auto));
  }

  /** 'webgpu' or 'wasm': where run() computes. */
  get backend() {
    return this.#gpu ? 'webgpu' : 'wasm';
  }

  /**
   * feeds: { inputName: Tensor | { type, data, dims } | typed array } (every input) ->
   * { outputName: Tensor }. Integer inputs accept int32 and int64 data alike.
   */
  async run(feeds) {
    if (!this.#gpu) return this.runSync(feeds);
    const fed = [];
    const outs = await this.#feed(feeds, (code, rank, dims, data, i) => {
      fed[i] = { code, dims: Array.from(new Float64Array(this.#core.heap.buffer, dims, rank)), data };
    }, () => this.#gpu.run(fed)); // takes what it needs of the heap before its first await
    if (!outs) {
      this.#gpu.release();
      this.#gpu = null; // 'auto' on a model the GPU cannot run: wasm from now on
      return this.runSync(feeds);
    }
    return Object.fromEntries(this.outputNames.map((name, i) => [name, outs[i]]));
  }

  runSync(feeds) {
    if (this.#gpu) throw new WebtrainError("runSync() is not available on the webgpu backend: use await session.run(feeds)");
    const core = this.#core;
    const m = core.m;
    const h = this.#live();
    this.#feed(feeds, null, () => core.check(m._wtw_session_run(h)));
    const outs = readOutputs(core, this.outputNames.length, {
      rank: (i) => m._wtw_session_output_rank(h, i),
      dim: (i, a) => m._wtw_session_output_dim(h, i, a),
      dtype: (i) => m._wtw_session_output_dtype(h, i),
      data: (i) => m._wtw_session_output_data(h, i),
    });
    return Object.fromEntries(this.outputNames.map((name, i) => [name, outs[i]]));
  }

  /**
   * Stages feeds in the heap and sets them as the session's inputs (onSet(code, rank, dims,
   * data, i) sees each, with heap addresses), then returns then() while they are still there.
   */
  #feed(feeds, onSet, then) {
    const core = this.#core;
    const m = core.m;
    const h = this.#live();
    const staging = new Staging(core, false);
    try {
      feedInputs(core, staging, {
        names: this.inputNames,
        args: [feeds],
        positional: false,
        model: 'the model',
        dtype: (i) => m._wtw_session_input_dtype(h, i),
        set: (i, code, rank, dims, data) => {
          onSet?.(code, rank, dims, data, i);
          return m._wtw_session_set_input(h, i, code, rank, dims, data);
        },
      });
      return then();
    } finally {
      staging.done();
    }
  }

  /** Bytes of activation memory the cached plans hold. */
  get arenaBytes() {
    return this.#core.m._wtw_session_arena_bytes(this.#live());
  }

  release() {
    this.#gpu?.release();
    this.#gpu = null;
    this.#handle = 0;
    this.#life.release();
  }

  #live() {
    if (!this.#handle) throw new WebtrainError('the session was released');
    return this.#handle;
  }
}
