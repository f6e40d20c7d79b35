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
// A step never waits for its loss: a train step's submit ends with the checks of
// js/gpu/step-checks.js (the GPU skips what a loss that is not finite must not reach), its
// outputs are read back only when awaited, and the core hears of a bad loss when it is read.
import { WebtrainError } from '../core.js';
import { GpuProgram, sessionDraws } from './program.js';
import { GpuOptimizerUpdate } from './optimizer.js';
import { GpuStepChecks } from './step-checks.js';
import { GpuStepResult } from './step-result.js';
import { Usage, MapMode } from './device.js';
import { DType, Mode } from '../abi.js';

const PARAMS = 2, GRADS = 3; // the program's external buffer ids (gpu_program.h)
const KIND = { USER: 0, PARAM: 1, GRAD: 2, RESET: 3 }; // WT_MODULE_INPUT_*
const KEEP = 4; // programs kept per mode
const STORAGE = Usage.STORAGE | Usage.COPY_DST | Usage.COPY_SRC;
const align = (n) => Math.ceil(n / 256) * 256;
const release = (entry) => {
  entry.program.release();
  entry.post?.release();
};

export class GpuTrainer {
  #programs = new Map(); // mode -> [{ key, program, post (a train program's GpuStepChecks dispatches) }]
  #dirty = false; // the state's parameters changed on the CPU side: upload before the next run
  #update = null;
  #arena = null; // the programs' shared arena buffer
  #checks = null; // GpuStepChecks, made with the first train program
  #pending = null; // a run whose program is being built: what comes after waits for its submit
  #failure = null; // { error, reported }: a submit's error
  #runs = 0; // train steps submitted
  #last = null; // the last train step: { id, draws (its session's before it), session }
  #stepped = null; // the last optimizer step: { run (the train step whose gradients it applied), optimizer }

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
   * One step of `mode` (the module's inputs already set on its session by the caller): a
   * GpuStepResult of the graph outputs the module returns, the first `count` (graph indices
   * from the core). Reads what it needs of the heap now; submits now when a program for these
   * shapes exists, else once it is built. A train step's bookkeeping in the core is done at
   * submit, as if its loss were finite: the GPU checks the loss itself before anything uses the
   * gradients, and reading the outputs reports a loss that is not finite.
   */
  run(mode, count) {
    this.#throwFailure();
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
    const picked = Array.from({ length: count }, (_, i) => m._wtw_module_output_graph_index(this.module, mode, i));
    const hit = list.findIndex((e) => e.key === key);
    let entry = hit >= 0 ? list.splice(hit, 1)[0] : null;
    if (entry) list.unshift(entry);
    if (entry?.program) return this.#submit(mode, entry, bytes, picked);
    if (!entry) {
      const handle = this.#build(session, mode, nIn); // now: the core reads the inputs the module set
      entry = { key, program: null, post: null };
      entry.ready = this.#make(mode, entry, handle, nIn, nOut, picked);
      list.unshift(entry);
      this.#evict(list);
    }
    // (the result in an object: a GpuStepResult handed to a Promise would be read at once)
    const step = entry.ready.then(() => ({ result: this.#submit(mode, entry, bytes, picked) }));
    const pending = step.then(() => {}, () => {});
    this.#pending = pending;
    pending.then(() => this.#pending === pending && (this.#pending = null));
    return new GpuStepResult(step.then(({ result }) => result.submitted), () => step.then(({ result }) => result.then((outs) => outs)));
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
    if (!h) throw new WebtrainError(`${mode === Mode.TRAIN ? 'train' : 'eval'} step: ${this.core.lastError()}`);
    return h;
  }

  /**
   * The core's program `handle` (freed here) made on the device, into `entry` (its list's, which
   * runs of the same shapes wait on meanwhile); a failed one leaves its list.
   */
  async #make(mode, entry, handle, nIn, nOut, picked) {
    try {
      const arena = { fit: (bytes) => this.#fitArena(bytes) };
      // a train step's outputs can wait to be read while the next one runs: two staging buffers
      entry.program = await GpuProgram.build(this.gpu, this.core, handle, nIn, nOut, [this.paramsBuf, this.gradsBuf], arena, { read: picked, slots: mode === Mode.TRAIN ? 2 : 1 });
      if (mode === Mode.TRAIN) {
        this.#checks ??= await GpuStepChecks.create(this.gpu, { params: this.paramsBuf, grads: this.gradsBuf, gradFloats: this.trainableBytes / 4, bn: this.#bnWriteBacks() });
        entry.post = this.#checks.forProgram(entry.program, picked[0] ?? this.core.m._wtw_module_output_graph_index(this.module, Mode.TRAIN, 0));
      }
    } catch (e) {
      for (const list of this.#programs.values()) if (list.includes(entry)) list.splice(list.indexOf(entry), 1);
      if (entry.program) release(entry);
      throw e;
    } finally {
      this.core.m._wtw_gpu_program_free(handle);
    }
  }

  /** Keeps a mode's KEEP most recent programs (one being built stays). */
  #evict(list) {
    for (let i = list.length - 1; i >= 0 && list.length > KEEP; i--) if (list[i].program) release(list.splice(i, 1)[0]);
  }

  /** The BatchNorm write-backs of a train step, for GpuStepChecks. */
  #bnWriteBacks() {
    const m = this.core.m, h = this.module;
    return Array.from({ length: m._wtw_module_bn_count(h) }, (_, b) => {
      const [mean, vr] = [3, 4].map((k) => this.params[m._wtw_module_bn(h, b, k)]);
      return { mean: mean.offset, var: vr.offset, channels: mean.bytes / 4, momentum: m._wtw_module_bn_momentum(h, b), outputs: [0, 1, 2].map((k) => m._wtw_module_bn(h, b, k)) };
    });
  }

  /** Submits a run of `entry`'s program: a GpuStepResult-like { submitted, then }. */
  #submit(mode, entry, bytes, picked) {
    const m = this.core.m;
    if (this.#dirty) this.upload();
    const session = m._wtw_module_session(this.module, mode);
    const train = mode === Mode.TRAIN;
    const draws = m._wtw_session_draws(session);
    const run = entry.program.submit(bytes, sessionDraws(this.core, session), { read: picked, after: train ? (pass) => entry.post.encode(pass) : null });
    const outcome = { error: null, reported: false }; // a failed submit: reported by a read, else by the next call
    run.done.catch((e) => {
      outcome.error = e;
      this.#failure ??= outcome;
    });
    let id = 0;
    if (train) {
      this.core.check(m._wtw_module_external_train_step(this.module, 1), 'train step');
      id = ++this.#runs;
      this.#last = { id, draws, session };
    }
    const read = () => {
      outcome.reported = true;
      return run.read().then((outs) => (train ? this.#lossRead(id, outs) : outs));
    };
    return new GpuStepResult(run.done, read);
  }

  /**
   * A train step's outputs, read: when its loss is not finite the GPU skipped its update and
   * discarded its gradients; the core learns it here, as the CPU backend's step would have
   * said at once: an optimizer step already counted on them is uncounted, and when no step ran
   * since, the next optimizer step is refused. Then the error the CPU backend gives.
   */
  #lossRead(id, outs) {
    const loss = outs[0]?.data;
    if (!(loss instanceof Float32Array) || loss.every((v) => Number.isFinite(v))) return outs;
    const m = this.core.m;
    if (this.#stepped?.run === id) m._wtw_optimizer_external_skipped(this.#stepped.optimizer);
    else if (this.#last?.id === id) m._wtw_module_external_train_step(this.module, 0);
    throw new WebtrainError(`the loss is ${loss.some((v) => Number.isNaN(v)) ? 'NaN' : 'infinite'} at this train step (a bad batch, or a learning rate too high); its gradients are discarded and the optimizer will not apply them`);
  }

  /**
   * Takes back the last train step when no optimizer step followed it: the BatchNorm statistics
   * and random draws it changed are restored and its gradients reset, as if it never ran (a
   * pipelined loop that stops after the step before it).
   */
  async takeBack() {
    await this.#pending;
    const last = this.#last;
    if (!last || this.#stepped?.run === last.id) return;
    this.#last = null;
    this.core.m._wtw_session_set_draws(last.session, last.draws);
    await this.gpu.scoped('taking back a train step', async () => this.#checks?.restore());
    this.core.check(this.core.m._wtw_module_lazy_reset_grad(this.module), 'taking back a train step');
  }

  /** An error of a submit nobody read (a run whose outputs were never awaited) fails the next call. */
  #throwFailure() {
    const f = this.#failure;
    if (!f) return;
    this.#failure = null;
    if (!f.reported) throw f.error;
  }

  /**
   * The shared arena, at least `bytes` long. Growing it drops the programs bound to the old one
   * (each is built again when next run): a program sized first for a small batch or for eval.
   */
  #fitArena(bytes) {
    const size = Math.max(256, Math.ceil(bytes / 256) * 256);
    if (this.#arena && this.#arena.size >= size) return this.#arena;
    // (a program being built stays: it is bound to the new arena)
    for (const list of this.#programs.values()) for (const e of list.filter((x) => x.program)) release(list.splice(list.indexOf(e), 1)[0]);
    this.#arena?.destroy();
    this.#arena = this.gpu.device.createBuffer({ size, usage: STORAGE, label: 'webtrain module arena' });
    return this.#arena;
  }

  /** Bytes of GPU memory the module holds, by what they hold. */
  memory() {
    const entries = [...this.#programs.values()].flat().filter((e) => e.program);
    const programs = entries.map((e) => e.program.bytes);
    const sum = (f) => programs.reduce((a, b) => a + f(b), 0);
    const r = {
      params: this.paramsBuf.size,
      grads: this.gradsBuf.size,
      moments: (this.mBuf?.size ?? 0) + (this.vBuf?.size ?? 0),
      arena: this.#arena?.size ?? 0,
      constants: sum((b) => b.constants),
      other: sum((b) => b.other + b.arena) + (this.#update?.bytes ?? 0) + (this.#checks?.bytes ?? 0) + entries.reduce((a, e) => a + (e.post?.bytes ?? 0), 0),
    };
    return { ...r, total: Object.values(r).reduce((a, b) => a + b, 0) };
  }

  /** The optimizer `o`'s step (a core handle): the core's checks and count, then the update. */
  async step(o) {
    this.#throwFailure();
    await this.#pending;
    const consts = GpuOptimizerUpdate.step(this.core, o);
    this.#stepped = { run: this.#last?.id, optimizer: o };
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
      this.#update.encode(enc, { p: this.paramsBuf, g: this.gradsBuf, m: adamw ? this.mBuf : null, v: adamw ? this.vBuf : null, status: this.#checks?.status ?? null }, this.trainableBytes / 4, consts);
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
    this.#throwFailure();
    await this.#pending;
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
    for (const list of this.#programs.values()) list.filter((e) => e.program).forEach(release);
    this.#programs.clear();
    this.#checks?.release();
    for (const b of [this.paramsBuf, this.gradsBuf, this.mBuf, this.vBuf, this.#arena]) b?.destroy();
  }
}
