// Runs a session's graph on the GPU: a GpuProgram per set of input shapes (built at the first
// run with those shapes, kept for later ones), fed from the inputs the core was given.
import { WebtrainError, warnOnce } from '../core.js';
import { DType } from '../abi.js';
import { GpuProgram, sessionDraws } from './program.js';

const SIZE = { [DType.FLOAT]: 4, [DType.INT32]: 4, [DType.INT64]: 8, [DType.BOOL]: 1, [DType.FLOAT16]: 2 };
const KEEP = 4; // programs kept per session, most recently used first

export class GpuRunner {
  #programs = []; // [{ key, program }]

  /** auto: the session was asked for backend 'auto' (a model the GPU cannot run falls back). */
  constructor(gpu, core, handle, nInputs, nOutputs, auto) {
    Object.assign(this, { gpu, core, handle, nInputs, nOutputs, auto });
  }

  /**
   * After the core was given the inputs (feedInputs): `fed[k]` = { code, dims, data } of input k
   * (data: its heap address). Returns the outputs as Tensors, or null when this model falls
   * back to wasm ('auto' only; the caller then runs it there).
   */
  async run(fed) {
    const m = this.core.m;
    // the bytes leave the heap now: nothing below may read it after an await
    const bytes = fed.map(({ code, dims, data }) => {
      const n = dims.reduce((a, b) => a * b, 1) * (SIZE[code] ?? 0);
      return m.HEAPU8.slice(data, data + n);
    });
    const key = fed.map(({ code, dims }, k) => `${code}:${dims.join('x')}${code === DType.FLOAT ? '' : `=${bytes[k].byteLength <= 512 ? bytes[k].join(',') : ''}`}`).join(';');
    let hit = this.#programs.findIndex((e) => e.key === key);
    let entry;
    if (hit >= 0) {
      [entry] = this.#programs.splice(hit, 1);
    } else {
      const L = this.gpu.device.limits;
      const p = m._wtw_gpu_program_build(this.handle, L.maxStorageBufferBindingSize, L.maxBufferSize);
      if (!p) {
        const why = this.core.lastError();
        if (this.auto && /webgpu backend/.test(why)) {
          warnOnce(`webtrain: backend 'auto' runs this model on wasm: ${why}`);
          return null;
        }
        throw new WebtrainError(why);
      }
      try {
        entry = { key, program: await GpuProgram.build(this.gpu, this.core, p, this.nInputs, this.nOutputs) };
      } finally {
        m._wtw_gpu_program_free(p);
      }
    }
    this.#programs.unshift(entry);
    while (this.#programs.length > KEEP) this.#programs.pop().program.release();
    return entry.program.run(bytes, sessionDraws(this.core, this.handle));
  }

  release() {
    for (const e of this.#programs) e.program.release();
    this.#programs = [];
  }
}
