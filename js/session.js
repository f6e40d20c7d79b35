// InferenceSession: runs any ONNX model webtrain supports (the forward pass) from Node or a
// browser. Inputs are copied into the wasm heap, outputs copied out at once, temporaries
// freed in `finally`: no heap view escapes (memory growth would invalidate it).
import { init, WebtrainError } from './core.js';
import { Tensor } from './tensor.js';
import { readBytes } from './bytes.js';
import { toTensor, coerce } from './feeds.js';

export class InferenceSession {
  #core;
  #handle;

  constructor(core, handle) {
    this.#core = core;
    this.#handle = handle;
    const m = core.m;
    this.inputNames = Array.from({ length: m._wtw_session_input_count(handle) }, (_, i) => core.string(m._wtw_session_input_name(handle, i)));
    this.outputNames = Array.from({ length: m._wtw_session_output_count(handle) }, (_, i) => core.string(m._wtw_session_output_name(handle, i)));
  }

  /** model: Uint8Array | ArrayBuffer | file path (Node) | URL. */
  static async create(model, options = {}) {
    const core = await init(options);
    const bytes = await readBytes(model);
    const p = core.copyIn(bytes);
    try {
      const h = core.handle(core.m._wtw_session_create(p, bytes.byteLength), 'cannot load model');
      return new InferenceSession(core, h);
    } finally {
      core.free(p);
    }
  }

  /**
   * feeds: { inputName: Tensor | { type, data, dims } | typed array } (every input) ->
   * { outputName: Tensor }. Integer inputs accept int32 and int64 data alike.
   */
  async run(feeds) {
    return this.runSync(feeds);
  }

  runSync(feeds) {
    if (feeds instanceof Map) feeds = Object.fromEntries(feeds);
    const core = this.#core;
    const m = core.m;
    const h = this.#live();
    const allocs = [];
    try {
      if (!feeds || typeof feeds !== 'object') throw new WebtrainError(`run: expected { inputName: Tensor } (inputs: ${this.inputNames.join(', ')})`);
      for (const name of Object.keys(feeds)) {
        if (!this.inputNames.includes(name)) throw new WebtrainError(`'${name}' is not an input of the model (inputs: ${this.inputNames.join(', ')})`);
      }
      this.inputNames.forEach((name, i) => {
        if (feeds[name] === undefined) throw new WebtrainError(`input '${name}' is missing (expected a Tensor)`);
        let t = toTensor(feeds[name], name);
        try {
          t = coerce(t, m._wtw_session_input_dtype(h, i));
        } catch (err) {
          throw new WebtrainError(`input '${name}': ${err.message}`);
        }
        const dims = core.copyInF64(t.dims);
        allocs.push(dims);
        const data = core.copyIn(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        allocs.push(data);
        core.check(m._wtw_session_set_input(h, i, Tensor.typeCode(t.type), t.dims.length, dims, data));
      });
      core.check(m._wtw_session_run(h));
      const out = {};
      this.outputNames.forEach((name, i) => {
        const rank = m._wtw_session_output_rank(h, i);
        const dims = Array.from({ length: rank }, (_, a) => m._wtw_session_output_dim(h, i, a));
        out[name] = Tensor.fromHeap(core.heap, m._wtw_session_output_dtype(h, i), m._wtw_session_output_data(h, i), dims);
      });
      return out;
    } finally {
      for (const p of allocs) core.free(p);
    }
  }

  /** Bytes of activation memory the cached plans hold. */
  get arenaBytes() {
    return this.#core.m._wtw_session_arena_bytes(this.#live());
  }

  release() {
    if (this.#handle) this.#core.m._wtw_session_free(this.#handle);
    this.#handle = 0;
  }

  #live() {
    if (!this.#handle) throw new WebtrainError('the session was released');
    return this.#handle;
  }
}
