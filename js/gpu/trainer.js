// A module's training on the GPU: its parameters, gradient buffers and optimizer moments live in
// GPU buffers for as long as the module does (uploaded from the checkpoint state once, read back
// into it when something on the CPU side reads the state: a checkpoint, an export, parameters.get).
// Each mode's graph runs as a GPU program per set of input shapes, its parameter and gradient
// inputs placed in those buffers (the core says which input is which: wtw_module_input_binding),
// the other inputs (the batch, the lazy-reset flag) written from where the module set them. The
// optimizer's update runs over all trainable parameters in one dispatch (js/gpu/optimizer.js):
// trainable parameters, their gradients and moments share one layout, one after the other.
// The module's programs (each mode's, for each set of shapes) run one at a time on one queue, so
// they share one arena buffer, as the CPU backend's training and eval plans share one arena.
import { WebtrainError } from '../core.js';
import { GpuProgram, sessionDraws } from './program.js';
import { GpuOptimizerUpdate } from './optimizer.js';
import { Usage, MapMode } from './device.js';
import { DType } from '../abi.js';

const PARAMS = 2, GRADS = 3; // the program's external buffer ids (gpu_program.h)
const KIND = { USER: 0, PARAM: 1, GRAD: 2, RESET: 3 }; // WT_MODULE_INPUT_*
const KEEP = 4; // programs kept per mode
const STORAGE = Usage.STORAGE | Usage.COPY_DST | Usage.COPY_SRC;
const align = (n) => Math.ceil(n / 256) * 256;

export class GpuTrainer {
  #programs = new Map(); // mode -> [{ key, program, session }]
  #dirty = false; // the state's parameters changed on the CPU side: upload before the next run
  #update = null;
  #arena = null; // the programs' shared arena buffer

  static async create(gpu, core, module, state) {
    const t = new GpuTrainer();
    const m = core.m;
    Object.assign(t, { gpu, core, module, state });
    const n = m._wtw_state_param_count(state);
    t.params = Array.from({ length: n }, (_, i) => {
      const dims = Array.from({ length: m._wtw_state_param_rank(state, i) }, (_, a) => m._wtw_state_param_dim(state, i, a));
      // float32, or a float16 frozen weight (it stays float16 on the GPU: the kernels widen it)
      const size = m._wtw_state_param_dtype(state, i) === DType.FLOAT16 ? 2 : 4;
      return { i, bytes: dims.reduce((a, b) => a * b, 1) * size, trainable: m._wtw_state_param_requires_grad(state, i) === 1 };
    });
    // trainable first: the optimizer's one dispatch covers [0, trainableBytes)
    let at = 0;
    for (const p of [...t.params.filter((p) => p.trainable), ...t.params.filter((p) => !p.trainable)]) {
      p.offset = at;
      at = align(at + p.bytes);
      if (p.trainable) t.trainableBytes = at;
    }
    t.trainableBytes ??= 0;
    await gpu.scoped('placing the module on the GPU', async () => {
      const d = gpu.device;
      t.paramsBuf = d.createBuffer({ size: Math.max(256, at), usage: STORAGE, label: 'webtrain parameters' });
      t.gradsBuf = d.createBuffer({ size: Math.max(256, t.trainableBytes), usage: STORAGE, label: 'webtrain gradients' });
      t.upload();
    });
    return t;
  }

  /** Parameters from the checkpoint state (heap) to the GPU. */
  upload() {
    const m = this.core.m;
    for (const p of this.params) {
      const at = m._wtw_state_param_raw(this.state, p.i);
      // a copy: the heap may be a SharedArrayBuffer (the threaded build), which WebGPU does not take
      // whole words: a float16 weight of an odd length brings the next two bytes along
      if (at && p.bytes) this.gpu.device.queue.writeBuffer(this.paramsBuf, p.offset, m.HEAPU8.slice(at, at + Math.ceil(p.bytes / 4) * 4));
    }
    this.#dirty = false;
  }

  /** The state's parameters were written on the CPU side (set, loadParameters, copyBufferToParameters). */
  markDirty() {
    this.#dirty = true;
  }

  /**
   * One step of `mode` (the module's inputs already set on its session by the caller): the
   * graph outputs the module returns, the first `count` (graph indices from the core). Reads
   * what it needs of the heap before its first await.
   */
  run(mode, count) {
    const m = this.core.m;
    const session = m._wtw_module_session(this.module, mode);
    const nIn = m._wtw_session_input_count(session);
    const nOut = m._wtw_session_output_count(session);
    const bytes = [];
    const keys = [];
    for (let k = 0; k < nIn; k++) {
      const at = m._wtw_session_input_data(session, k);
      const n = m._wtw_session_input_bytes(session, k);
      const kind = m._wtw_module_input_binding(this.module, mode, k) >> 16;
      if (kind === KIND.PARAM || kind === KIND.GRAD) {
        bytes.push(null);
        continue;
      }
      bytes.push(m.HEAPU8.slice(at, at + n));
      const rank = m._wtw_session_input_set(session, k, -1);
      const dtype = m._wtw_session_input_set(session, k, -2);
      // integer inputs may fix shapes (their values are planned): small ones key the program
      const values = dtype !== 1 && n <= 512 ? `=${bytes[k].join(',')}` : '';
      keys.push(`${dtype}:${Array.from({ length: rank }, (_, a) => m._wtw_session_input_set(session, k, a)).join('x')}${values}`);
    }
    const key = keys.join(';');
    const list = this.#programs.get(mode) ?? [];
    this.#programs.set(mode, list);
    let hit = list.findIndex((e) => e.key === key);
    let handle = 0;
    if (hit < 0) {
      handle = this.#build(session, mode, nIn); // now: the core reads the inputs the module set
    }
    return this.#finish(mode, list, hit, key, handle, nIn, nOut, bytes, count);
  }

  #build(session, mode, nIn) {
    const m = this.core.m;
    const placed = new Float64Array(3 * nIn);
    for (let k = 0; k < nIn; k++) {
      const b = m._wtw_module_input_binding(this.module, mode, k);
      const kind = b >> 16, p = this.params[(b & 0xffff) - 1];
      placed.set(kind === KIND.PARAM ? [PARAMS, p.offset, p.bytes] : kind === KIND.GRAD ? [GRADS, p.offset, p.bytes] : [-1, 0, 0], 3 * k);
    }
    const L = this.gpu.device.limits;
    const h = this.core.withBytes(new Uint8Array(placed.buffer), (at) => m._wtw_gpu_program_build(session, L.maxStorageBufferBindingSize, L.maxBufferSize, at));
    if (!h) throw new WebtrainError(`${mode === 0 ? 'train' : 'eval'} step: ${this.core.lastError()}`);
    return h;
  }

  async #finish(mode, list, hit, key, handle, nIn, nOut, bytes, count) {
    const m = this.core.m;
    let entry;
    if (hit >= 0) {
      [entry] = list.splice(hit, 1);
    } else {
      try {
        const arena = { fit: (bytes) => this.#fitArena(bytes) };
        entry = { key, program: await GpuProgram.build(this.gpu, this.core, handle, nIn, nOut, [this.paramsBuf, this.gradsBuf], arena) };
      } finally {
        m._wtw_gpu_program_free(handle);
      }
    }
    list.unshift(entry);
    while (list.length > KEEP) list.pop().program.release();
    if (this.#dirty) this.upload();
    const outs = await entry.program.run(bytes, sessionDraws(this.core, m._wtw_module_session(this.module, mode)));
    const picked = Array.from({ length: count }, (_, i) => outs[m._wtw_module_output_graph_index(this.module, mode, i)]);
    if (mode === 0) {
      const loss = picked[0]?.data ?? [];
      const finite = Array.prototype.every.call(loss, (v) => Number.isFinite(v));
      this.core.check(m._wtw_module_external_train_step(this.module, finite ? 1 : 0), 'train step');
      this.#writeBackBn(outs);
    }
    return picked;
  }

  /**
   * The BatchNorm running statistics the train step updated (graph outputs the module added):
   * into the state, as a train step on the CPU writes them, and from there into their place in
   * the parameter buffer. Only this changes them on the GPU (the optimizer updates the trainable
   * parameters), so the state's copy is the current one.
   */
  #writeBackBn(outs) {
    const { core, module: h } = this;
    const m = core.m;
    for (let b = 0; b < m._wtw_module_bn_count(h); b++) {
      const [mean, vr, size] = [0, 1, 2].map((k) => outs[m._wtw_module_bn(h, b, k)]);
      const rc = core.withBytes(mean.data, (pm) => core.withBytes(vr.data, (pv) => m._wtw_module_bn_write_back(h, b, pm, pv, Number(size.data[0]))));
      core.check(rc, 'train step');
      for (const k of [3, 4]) {
        const p = this.params[m._wtw_module_bn(h, b, k)];
        const at = m._wtw_state_param_data(this.state, p.i);
        this.gpu.device.queue.writeBuffer(this.paramsBuf, p.offset, m.HEAPU8.slice(at, at + p.bytes));
      }
    }
  }

  /**
   * The shared arena, at least `bytes` long. Growing it drops the programs bound to the old one
   * (each is built again when next run): a program sized first for a small batch or for eval.
   */
  #fitArena(bytes) {
    const size = Math.max(256, Math.ceil(bytes / 256) * 256);
    if (this.#arena && this.#arena.size >= size) return this.#arena;
    for (const list of this.#programs.values()) for (const e of list.splice(0)) e.program.release();
    this.#arena?.destroy();
    this.#arena = this.gpu.device.createBuffer({ size, usage: STORAGE, label: 'webtrain module arena' });
    return this.#arena;
  }

  /** Bytes of GPU memory the module holds, by what they hold. */
  memory() {
    const programs = [...this.#programs.values()].flat().map((e) => e.program.bytes);
    const sum = (f) => programs.reduce((a, b) => a + f(b), 0);
    const r = {
      params: this.paramsBuf.size,
      grads: this.gradsBuf.size,
      moments: (this.mBuf?.size ?? 0) + (this.vBuf?.size ?? 0),
      arena: this.#arena?.size ?? 0,
      constants: sum((b) => b.constants),
      other: sum((b) => b.other + b.arena) + (this.#update?.bytes ?? 0),
    };
    return { ...r, total: Object.values(r).reduce((a, b) => a + b, 0) };
  }

  /** The optimizer `o`'s step (a core handle): the core's checks and count, then the update. */
  async step(o) {
    const consts = GpuOptimizerUpdate.step(this.core, o);
    const d = this.gpu.device;
    const adamw = consts[0] !== 2;
    await this.gpu.scoped('optimizer step', async () => {
      if (!this.#update) this.#update = await GpuOptimizerUpdate.create(this.gpu);
      if (adamw && !this.mBuf) {
        const size = Math.max(256, this.trainableBytes);
        this.mBuf = d.createBuffer({ size, usage: STORAGE, label: 'webtrain moments m' });
        this.vBuf = d.createBuffer({ size, usage: STORAGE, label: 'webtrain moments v' });
        this.#uploadMoments();
      }
      const enc = d.createCommandEncoder();
      this.#update.encode(enc, { p: this.paramsBuf, g: this.gradsBuf, m: adamw ? this.mBuf : null, v: adamw ? this.vBuf : null }, this.trainableBytes / 4, consts);
      d.queue.submit([enc.finish()]);
    });
  }

  /** Moments the state holds (a checkpoint loaded with its optimizer state) to the GPU. */
  #uploadMoments() {
    const m = this.core.m;
    for (const p of this.params.filter((x) => x.trainable))
      for (const [k, buf] of [[0, this.mBuf], [1, this.vBuf]]) {
        const at = m._wtw_state_param_moment(this.state, p.i, k);
        if (at) this.gpu.device.queue.writeBuffer(buf, p.offset, m.HEAPU8.slice(at, at + p.bytes));
      }
  }

  /** Parameters, gradients and moments from the GPU into the checkpoint state. */
  async sync() {
    const d = this.gpu.device;
    const parts = [[this.paramsBuf, (p) => this.core.m._wtw_state_param_data(this.state, p.i), this.params],
      [this.gradsBuf, (p) => this.core.m._wtw_state_param_grad(this.state, p.i), this.params.filter((p) => p.trainable)]];
    if (this.mBuf) {
      for (const [k, buf] of [[0, this.mBuf], [1, this.vBuf]]) parts.push([buf, (p) => this.core.m._wtw_state_param_moment(this.state, p.i, k), this.params.filter((p) => p.trainable)]);
    }
    await this.gpu.scoped('reading the module back from the GPU', async () => {
      const enc = d.createCommandEncoder();
      const staged = parts.map(([buf]) => {
        const s = d.createBuffer({ size: buf.size, usage: Usage.MAP_READ | Usage.COPY_DST });
        enc.copyBufferToBuffer(buf, 0, s, 0, buf.size);
        return s;
      });
      d.queue.submit([enc.finish()]);
      await Promise.all(staged.map((s) => s.mapAsync(MapMode.READ)));
      const heap = this.core.m.HEAPU8;
      staged.forEach((s, j) => {
        const bytes = new Uint8Array(s.getMappedRange());
        const [, ptr, params] = parts[j];
        for (const p of params) {
          const at = ptr(p);
          if (at && p.bytes) heap.set(bytes.subarray(p.offset, p.offset + p.bytes), at);
        }
        s.unmap();
        s.destroy();
      });
    });
  }

  release() {
    for (const list of this.#programs.values()) for (const e of list) e.program.release();
    this.#programs.clear();
    for (const b of [this.paramsBuf, this.gradsBuf, this.mBuf, this.vBuf, this.#arena]) b?.destroy();
  }
}
