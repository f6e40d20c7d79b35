// What a train step on the GPU does after its graph, in the same submit, so that nothing waits
// for its loss to be read: the loss checked (loss_check.wgsl, into a status word), the
// gradients discarded when it is not finite (discard_grads.wgsl), and the BatchNorm running
// statistics written into the parameters they update (bn_write_back.wgsl), their old values
// kept so that a step taken back can restore them. The optimizer's update reads the same status
// word: a step whose loss was not finite changes no parameter, as on the CPU backend.
import { Usage } from './device.js';
import { DType } from '../abi.js';
import programs from '../../dist/webtrain-wgsl.js';

const UNIFORM_BYTES = 256;
const STORAGE = Usage.STORAGE | Usage.COPY_DST | Usage.COPY_SRC;
const align = (n) => Math.ceil(n / 256) * 256;
const groups = (n, size) => {
  const total = Math.max(1, Math.ceil(n / size));
  const gx = Math.min(65535, total);
  return [gx, Math.ceil(total / gx)];
};

export class GpuStepChecks {
  /**
   * For a trainer's buffers: params and grads (GPUBuffers, `gradFloats` floats of gradients),
   * and bn: the BatchNorm write-backs, [{ mean, var (offsets in params), channels, momentum,
   * outputs: [mean, var, count] (graph output indices) }].
   */
  static async create(gpu, { params, grads, gradFloats, bn }) {
    const c = new GpuStepChecks();
    const d = gpu.device;
    Object.assign(c, { gpu, params, grads, gradFloats, bn });
    const names = ['loss_check', 'discard_grads', 'bn_write_back'];
    c.pipelines = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await gpu.pipeline(n, programs[n])])));
    c.status = d.createBuffer({ size: 256, usage: STORAGE, label: 'webtrain step status' });
    d.queue.writeBuffer(c.status, 0, new Uint32Array([1])); // no step yet: nothing to skip
    let at = 0;
    for (const b of bn) {
      b.backup = at;
      at = align(at + 8 * b.channels);
    }
    c.backup = bn.length ? d.createBuffer({ size: at, usage: STORAGE, label: 'webtrain BatchNorm backup' }) : null;
    return c;
  }

  /** Bytes of the GPU buffers it holds (a program's bind groups' uniforms are the program's). */
  get bytes() {
    return this.status.size + (this.backup?.size ?? 0);
  }

  /**
   * The dispatches after a train program's (a GpuProgram; loss: its graph output index), bound
   * once: { encode(pass), bytes }.
   */
  forProgram(program, loss) {
    const d = this.gpu.device;
    const n = 2 + this.bn.length;
    const uniform = d.createBuffer({ size: n * UNIFORM_BYTES, usage: Usage.UNIFORM | Usage.COPY_DST, label: 'webtrain step checks' });
    const words = new Uint32Array((n * UNIFORM_BYTES) / 4);
    const slot = (i) => ({ buffer: uniform, offset: i * UNIFORM_BYTES, size: UNIFORM_BYTES });
    const out = (k) => program.outputBinding(k);
    const group = (name, entries) => d.createBindGroup({
      layout: this.pipelines[name].getBindGroupLayout(0),
      entries: entries.map((resource, binding) => ({ binding, resource })),
    });
    const lossOut = program.outputs[loss];
    const lossCount = lossOut.dims.reduce((a, b) => a * b, 1);
    words.set([lossCount, lossOut.dtype === DType.FLOAT ? 1 : 0], 0);
    const dispatches = [[this.pipelines.loss_check, group('loss_check', [slot(0), out(loss), { buffer: this.status }]), [1, 1]]];
    const [gx, gy] = groups(this.gradFloats, 256);
    words.set([this.gradFloats, gx], UNIFORM_BYTES / 4);
    if (this.gradFloats) dispatches.push([this.pipelines.discard_grads, group('discard_grads', [slot(1), { buffer: this.status }, { buffer: this.grads, offset: 0, size: this.gradFloats * 4 }]), [gx, gy]]);
    this.bn.forEach((b, i) => {
      const [bx, by] = groups(b.channels, 64);
      const at = (UNIFORM_BYTES / 4) * (2 + i);
      words.set([b.channels, bx], at);
      new Float32Array(words.buffer, (at + 2) * 4, 1)[0] = b.momentum;
      const param = (offset) => ({ buffer: this.params, offset, size: 4 * b.channels });
      dispatches.push([this.pipelines.bn_write_back, group('bn_write_back', [slot(2 + i), { buffer: this.status }, out(b.outputs[0]), out(b.outputs[1]), out(b.outputs[2]),
        param(b.mean), param(b.var), { buffer: this.backup, offset: b.backup, size: 8 * b.channels }]), [bx, by]]);
    });
    d.queue.writeBuffer(uniform, 0, words);
    return {
      bytes: uniform.size,
      release: () => uniform.destroy(),
      encode(pass) {
        for (const [pipeline, bindGroup, [x, y]] of dispatches) {
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, bindGroup);
          pass.dispatchWorkgroups(x, y);
        }
      },
    };
  }

  /** Submits the restore of the BatchNorm statistics the last train step's write-back replaced. */
  restore() {
    if (!this.bn.length) return;
    const d = this.gpu.device;
    const enc = d.createCommandEncoder();
    for (const b of this.bn) {
      enc.copyBufferToBuffer(this.backup, b.backup, this.params, b.mean, 4 * b.channels);
      enc.copyBufferToBuffer(this.backup, b.backup + 4 * b.channels, this.params, b.var, 4 * b.channels);
    }
    d.queue.submit([enc.finish()]);
  }

  release() {
    this.status.destroy();
    this.backup?.destroy();
  }
}
