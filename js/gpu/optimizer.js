// The optimizer's update on the GPU (optim.wgsl): AdamW or SGD over parameters, gradients and
// moments held in GPU buffers, with the constants the core computes for the next step
// (wtw_optimizer_update_consts: the same the CPU kernels use). Its pipeline and placeholders are
// made once; a bind group and a uniform slot per set of buffers, once.
import { Usage } from './device.js';
import programs from '../../dist/webtrain-wgsl.js';

const UNIFORM_BYTES = 256;

/** The 10 floats `fill(address)` writes in the heap (wtw_optimizer_update_consts' layout). */
function readConsts(core, fill) {
  const m = core.m;
  const at = m._wtw_malloc(40);
  try {
    fill(at);
    return new Float32Array(m.HEAPU8.buffer, at, 10).slice();
  } finally {
    m._wtw_free(at);
  }
}

export class GpuOptimizerUpdate {
  #groups = new WeakMap(); // p buffer -> { key, group }

  static async create(gpu) {
    const u = new GpuOptimizerUpdate();
    await gpu.scoped('building the webgpu optimizer update', async () => {
      const d = gpu.device;
      u.gpu = gpu;
      u.pipeline = await gpu.pipeline('optim', programs.optim);
      u.placeholder = d.createBuffer({ size: 512, usage: Usage.STORAGE, label: 'webtrain optimizer placeholders' });
      // the status of a module with no step checks: its steps' losses are all taken as finite
      u.go = d.createBuffer({ size: 256, usage: Usage.STORAGE | Usage.COPY_DST, label: 'webtrain optimizer status' });
      d.queue.writeBuffer(u.go, 0, new Uint32Array([1]));
    });
    return u;
  }

  /** Bytes of the GPU buffers it holds (the placeholders, and the constants of a module's one parameter buffer). */
  get bytes() {
    return this.placeholder.size + this.go.size + UNIFORM_BYTES;
  }

  /** The constants of the core's optimizer `h` for its next step (Float32Array(10)); changes nothing. */
  static consts(core, h) {
    return readConsts(core, (at) => core.m._wtw_optimizer_update_consts(h, at));
  }

  /** The core's optimizer `h` takes a step whose update runs here: its checks and count, then its constants. */
  static step(core, h) {
    return readConsts(core, (at) => core.check(core.m._wtw_optimizer_step_external(h, at), 'optimizer step'));
  }

  /**
   * Encodes into the command encoder `enc` the update of n floats of buffers { p, g, m, v } (m
   * and v null for SGD) with the constants `consts`; the constants are written to the queue now.
   * status: the buffer whose first word is 0 when the step's loss was not finite
   * (js/gpu/step-checks.js), or null.
   */
  encode(enc, { p, g, m, v, status }, n, consts) {
    const d = this.gpu.device;
    const gx = Math.min(65535, Math.max(1, Math.ceil(n / 256)));
    let entry = this.#groups.get(p);
    const key = [g, m, v, status];
    if (!entry || entry.key.some((b, i) => b !== key[i])) {
      const bind = (b, slot) => (b ? { buffer: b } : { buffer: this.placeholder, offset: 256 * slot, size: 256 });
      const uniform = d.createBuffer({ size: UNIFORM_BYTES, usage: Usage.UNIFORM | Usage.COPY_DST, label: 'webtrain optimizer constants' });
      const words = new Uint32Array(UNIFORM_BYTES / 4); // written to `uniform` each step
      entry = {
        key,
        uniform,
        words,
        floats: new Float32Array(words.buffer, 16, 8), // the constants after n, gx, kind, decay
        group: d.createBindGroup({
          layout: this.pipeline.getBindGroupLayout(0),
          entries: [{ binding: 0, resource: { buffer: uniform } }, { binding: 1, resource: { buffer: p } }, { binding: 2, resource: { buffer: g } },
            { binding: 3, resource: bind(m, 0) }, { binding: 4, resource: bind(v, 1) }, { binding: 5, resource: { buffer: status ?? this.go } }],
        }),
      };
      this.#groups.set(p, entry);
    }
    const { words } = entry;
    words.set([n, gx, consts[0], consts[1]]);
    entry.floats.set(consts.subarray(2));
    d.queue.writeBuffer(entry.uniform, 0, words);
    const pass = enc.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, entry.group);
    pass.dispatchWorkgroups(gx, Math.ceil(Math.ceil(n / 256) / gx));
    pass.end();
  }
}
