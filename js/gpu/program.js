// A GPU program (src/runtime/gpu_program.h) made real on a device: its buffers, pipelines and
// bind groups are created once, when it is built; a run writes the inputs, encodes every
// dispatch into one compute pass, copies the outputs to a staging buffer in the same submit,
// and reads them back when asked: a run's outputs can be read while the next run computes.
import { WebtrainError } from '../core.js';
import { Tensor } from '../tensor.js';
import { DType } from '../abi.js';
import programs from '../../dist/webtrain-wgsl.js';
import { Usage, MapMode } from './device.js';

const CONST = 0, ARENA = 1; // the program's buffers; ids from 2 on are the caller's
const UNIFORM_BYTES = 256;
const KEY_WORD = 4; // WT_GPU_KEY_WORD: where a drawing dispatch's per-run Dropout key goes
const MAX_BINDS = 8; // WT_GPU_MAX_BINDS
const TYPED = { [DType.FLOAT]: ['float32', Float32Array], [DType.INT32]: ['int32', Int32Array], [DType.INT64]: ['int64', BigInt64Array], [DType.BOOL]: ['bool', Uint8Array] };

/** The program handle's description, read out of the core (the handle can be freed after). */
function describe(core, p) {
  const m = core.m;
  const region = (what, i, b) => ({ buffer: m._wtw_gpu_region(p, what, i, b, 0), offset: m._wtw_gpu_region(p, what, i, b, 1), bytes: m._wtw_gpu_region(p, what, i, b, 2) });
  const heap = () => new Uint8Array(m.HEAPU8.buffer);
  const uploads = Array.from({ length: m._wtw_gpu_upload_count(p) }, (_, i) => {
    const bytes = m._wtw_gpu_upload(p, i, 1);
    const at = m._wtw_gpu_upload_data(p, i);
    return { offset: m._wtw_gpu_upload(p, i, 0), data: heap().slice(at, at + bytes) };
  });
  const steps = Array.from({ length: m._wtw_gpu_step_count(p) }, (_, i) => {
    const u = m._wtw_gpu_step_uniform(p, i);
    return {
      program: core.string(m._wtw_gpu_step_program(p, i)),
      draws: m._wtw_gpu_step_draws(p, i) === 1,
      groups: [0, 1, 2].map((a) => m._wtw_gpu_step_groups(p, i, a)),
      uniform: heap().slice(u, u + UNIFORM_BYTES),
      binds: Array.from({ length: m._wtw_gpu_step_bind_count(p, i) }, (_, b) => region(0, i, b)),
    };
  });
  return { bytes: [m._wtw_gpu_buffer_bytes(p, CONST), m._wtw_gpu_buffer_bytes(p, ARENA)], uploads, steps, region };
}

/** GpuProgram.run's `draw` for runs of the core's session `session`: its draws, counted there. */
export function sessionDraws(core, session) {
  return (seedLow, seedHigh) => {
    const at = core.malloc(8);
    try {
      core.m._wtw_session_dropout_key(session, seedLow, seedHigh, at);
      return new Uint32Array(core.m.HEAPU8.slice(at, at + 8).buffer);
    } finally {
      core.free(at);
    }
  };
}

export class GpuProgram {
  #gpu;
  #buffers;
  #slots = []; // staging buffers: { buffer, generation, used, held (the output indices copied), mapping }
  #uses = 0;
  #groups;
  #pipelines;
  #steps;
  #owned; // the buffers the program created (the rest of #buffers are the caller's)
  #uniforms; // the dispatches' uniform slots (a drawing one's key is written per run)

  /**
   * Builds the program `p` (a wtw_gpu_program handle) on gpu (a GpuDevice): inputs[k] is graph
   * input k's region, outputs[k] graph output k's region and type. external: the caller's
   * buffers, by id from 2 on (the placed inputs': a module's parameters and gradients). arena:
   * the caller's arena, shared by programs that never run at once (a module's), as
   * { fit(bytes) -> a GPUBuffer of at least that many bytes }; by default the program makes one.
   * read: the outputs its runs read (graph output indices; default all), and slots: how many
   * runs' copies of them can wait to be read at once, for the staging buffers made now.
   */
  static async build(gpu, core, p, nInputs, nOutputs, external = [], arena = null, { read = null, slots = 1 } = {}) {
    const m = core.m;
    const desc = describe(core, p);
    const inputs = Array.from({ length: nInputs }, (_, k) => desc.region(1, k, 0));
    const outputs = Array.from({ length: nOutputs }, (_, k) => {
      const dtype = m._wtw_gpu_output_type(p, k, -1);
      const dims = Array.from({ length: m._wtw_gpu_output_type(p, k, -2) }, (_, a) => m._wtw_gpu_output_type(p, k, a));
      if (!TYPED[dtype]) throw new WebtrainError(`output ${k}: dtype ${dtype} is not read back from the webtrain webgpu backend yet`);
      return { ...desc.region(2, k, 0), dtype, dims };
    });
    const prog = new GpuProgram();
    await gpu.scoped('building the webgpu program', async () => prog.#create(gpu, desc, inputs, outputs, external, arena, read, slots));
    return prog;
  }

  async #create(gpu, desc, inputs, outputs, external, arena, read, slots) {
    const d = gpu.device;
    this.#gpu = gpu;
    this.inputs = inputs;
    this.outputs = outputs;
    const storage = Usage.STORAGE | Usage.COPY_DST | Usage.COPY_SRC;
    const buffer = (size, usage, label) => d.createBuffer({ size: Math.max(256, Math.ceil(size / 256) * 256), usage, label });
    const constants = buffer(desc.bytes[CONST], storage, 'webtrain constants');
    const own = arena ? null : buffer(desc.bytes[ARENA], storage, 'webtrain arena');
    const bufs = [constants, own ?? arena.fit(desc.bytes[ARENA]), ...external];
    // one 256-byte placeholder per binding slot: two in one dispatch must not overlap
    const placeholder = buffer(256 * MAX_BINDS, storage, 'webtrain placeholders');
    const uniforms = buffer(desc.steps.length * UNIFORM_BYTES, Usage.UNIFORM | Usage.COPY_DST, 'webtrain uniforms');
    this.#buffers = bufs;
    this.#owned = [constants, ...(own ? [own] : []), placeholder, uniforms];
    this.#uniforms = uniforms;
    // writes are whole words: a float16 or bool constant of an odd length is padded
    const words = (a) => (a.byteLength % 4 ? Uint8Array.from({ length: a.byteLength + 4 - (a.byteLength % 4) }, (_, i) => a[i] ?? 0) : a);
    for (const u of desc.uploads) if (u.data.byteLength) d.queue.writeBuffer(bufs[CONST], u.offset, words(u.data));
    const all = new Uint8Array(Math.max(1, desc.steps.length) * UNIFORM_BYTES);
    desc.steps.forEach((s, i) => all.set(s.uniform, i * UNIFORM_BYTES));
    d.queue.writeBuffer(uniforms, 0, all);
    // staging buffers for what a run reads: with two, a run's copies wait in one while the next
    // run copies into the other
    const readBytes = (read ?? outputs.map((_, k) => k)).reduce((a, k) => a + Math.ceil(outputs[k].bytes / 4) * 4, 0);
    for (let i = 0; i < slots; i++) this.#newSlot(readBytes);
    const names = [...new Set(desc.steps.map((s) => s.program))];
    for (const n of names) if (!programs[n]) throw new WebtrainError(`the webgpu backend has no WGSL program '${n}'`);
    this.#pipelines = new Map(await Promise.all(names.map(async (n) => [n, await gpu.pipeline(n, programs[n])])));
    this.#steps = desc.steps;
    this.#groups = desc.steps.map((s, i) =>
      d.createBindGroup({
        layout: this.#pipelines.get(s.program).getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: uniforms, offset: i * UNIFORM_BYTES, size: UNIFORM_BYTES } },
          ...s.binds.map((r, b) => ({ binding: b + 1, resource: r.buffer < 0 ? { buffer: placeholder, offset: 256 * b, size: 256 } : { buffer: bufs[r.buffer], offset: r.offset, size: r.bytes } })),
        ],
      }),
    );
  }

  /**
   * Encodes and submits a run. feeds[k]: graph input k's bytes (a typed array). draw(seedLow,
   * seedHigh): the run's Dropout key for a dispatch that draws (a Uint32Array(2) from the core,
   * which counts the draw), asked in step order. read: the outputs copied out for reading (graph
   * output indices; default all). after(pass): encodes more dispatches into the run's compute
   * pass, after the program's. Returns { done, read }: done settles when the device has
   * validated the submit (its error, if any); read() maps the copied outputs and gives them as
   * Tensors, once; nothing is read back unless it is called. The copy waits in one of the
   * program's staging buffers, which a later run may take back (one read, or one never asked
   * for, is reused first): read() then fails saying so.
   */
  submit(feeds, draw = null, { read = null, after = null } = {}) {
    this.#gpu.check();
    const d = this.#gpu.device;
    d.pushErrorScope('out-of-memory');
    d.pushErrorScope('validation');
    let slot;
    try {
      slot = this.#encode(feeds, draw, read ?? this.outputs.map((_, k) => k), after);
    } catch (e) {
      d.popErrorScope().catch(() => {});
      d.popErrorScope().catch(() => {});
      throw e;
    }
    const done = Promise.all([d.popErrorScope(), d.popErrorScope()]).then(([validation, oom]) => {
      const e = validation ?? oom;
      if (e) throw new WebtrainError(`a webgpu run: WebGPU ${validation ? 'validation' : 'out-of-memory'} error: ${e.message}`);
    });
    const generation = slot.generation;
    return { done, read: () => done.then(() => this.#read(slot, generation)) };
  }

  /** submit's commands, submitted: the staging slot that holds the `picked` outputs' copies. */
  #encode(feeds, draw, picked, after) {
    const d = this.#gpu.device;
    this.#steps.forEach((s, i) => {
      if (!s.draws) return;
      if (!draw) throw new WebtrainError(`a ${s.program} dispatch draws, and this run has no draws to give`);
      const seed = new Uint32Array(s.uniform.buffer, s.uniform.byteOffset + (KEY_WORD + 2) * 4, 2);
      d.queue.writeBuffer(this.#uniforms, i * UNIFORM_BYTES + KEY_WORD * 4, draw(seed[0], seed[1]));
    });
    this.#write(feeds);
    const enc = d.createCommandEncoder();
    const pass = enc.beginComputePass();
    this.#steps.forEach((s, i) => {
      pass.setPipeline(this.#pipelines.get(s.program));
      pass.setBindGroup(0, this.#groups[i]);
      pass.dispatchWorkgroups(...s.groups);
    });
    after?.(pass);
    pass.end();
    const slot = this.#slot(picked);
    let at = 0;
    for (const k of picked) {
      const o = this.outputs[k];
      const n = Math.ceil(o.bytes / 4) * 4;
      enc.copyBufferToBuffer(this.#buffers[o.buffer], o.offset, slot.buffer, at, n);
      at += n;
    }
    d.queue.submit([enc.finish()]);
    slot.held = picked;
    return slot;
  }

  /** Runs and reads every output (submit, then read): Tensors. */
  async run(feeds, draw = null) {
    return this.submit(feeds, draw).read();
  }

  /** The feeds into the program's input regions (the placed ones are the caller's to fill). */
  #write(feeds) {
    const d = this.#gpu.device;
    this.inputs.forEach((r, k) => {
      if (r.buffer < 0 || r.buffer > ARENA) return; // not read, or the caller's (placed)
      const f = feeds[k];
      d.queue.writeBuffer(this.#buffers[r.buffer], r.offset, f.buffer, f.byteOffset, f.byteLength - (f.byteLength % 4));
      const tail = f.byteLength % 4;
      if (tail) {
        const pad = new Uint8Array(4);
        pad.set(new Uint8Array(f.buffer, f.byteOffset + f.byteLength - tail, tail));
        d.queue.writeBuffer(this.#buffers[r.buffer], r.offset + f.byteLength - tail, pad);
      }
    });
  }

  /**
   * A staging buffer for a run's copies: a free one (read, or never used), else the one whose
   * copy has waited longest unasked (it is taken back), else a new one (only while every other
   * is being read: two runs' reads in flight at once).
   */
  #slot(picked) {
    const bytes = Math.max(4, picked.reduce((a, k) => a + Math.ceil(this.outputs[k].bytes / 4) * 4, 0));
    const fits = (s) => !s.mapping && s.buffer.size >= bytes;
    let slot = this.#slots.find((s) => fits(s) && !s.held) ?? this.#slots.filter((s) => fits(s) && s.held).sort((a, b) => a.used - b.used)[0];
    slot ??= this.#newSlot(bytes);
    slot.generation++;
    slot.used = ++this.#uses;
    return slot;
  }

  #newSlot(bytes) {
    const buffer = this.#gpu.device.createBuffer({ size: Math.max(4, bytes), usage: Usage.MAP_READ | Usage.COPY_DST, label: 'webtrain readback' });
    const slot = { buffer, generation: 0, used: 0, held: null, mapping: false };
    this.#slots.push(slot);
    this.#owned.push(buffer);
    return slot;
  }

  async #read(slot, generation) {
    if (slot.generation !== generation || !slot.held) {
      throw new WebtrainError('these outputs were not read before later runs of the same program took back their staging buffer; read (await) a run\'s outputs before running it twice more');
    }
    const picked = slot.held;
    slot.held = null;
    slot.mapping = true;
    try {
      await this.#gpu.scoped('reading a webgpu run\'s outputs', () => slot.buffer.mapAsync(MapMode.READ));
      const bytes = new Uint8Array(slot.buffer.getMappedRange());
      let off = 0;
      const outs = picked.map((k) => {
        const o = this.outputs[k];
        const [type, Typed] = TYPED[o.dtype];
        const count = o.dims.reduce((a, b) => a * b, 1);
        const data = new Typed(count);
        new Uint8Array(data.buffer).set(bytes.subarray(off, off + count * Typed.BYTES_PER_ELEMENT));
        off += Math.ceil(o.bytes / 4) * 4;
        return new Tensor(type, data, o.dims);
      });
      slot.buffer.unmap();
      return outs;
    } finally {
      slot.mapping = false;
    }
  }

  /** Graph output k's place: { buffer (a GPUBuffer), offset, size } for a binding. */
  outputBinding(k) {
    const o = this.outputs[k];
    return { buffer: this.#buffers[o.buffer], offset: o.offset, size: Math.ceil(o.bytes / 4) * 4 };
  }

  /** Bytes of the GPU buffers the program made: { constants, arena (0 when the caller's), other }. */
  get bytes() {
    const [constants, arena] = this.#buffers;
    const all = this.#owned.reduce((a, b) => a + b.size, 0);
    const own = this.#owned.includes(arena) ? arena.size : 0;
    return { constants: constants.size, arena: own, other: all - constants.size - own };
  }

  release() {
    for (const b of this.#owned ?? []) b.destroy();
    this.#owned = null;
    this.#buffers = null;
  }
}
