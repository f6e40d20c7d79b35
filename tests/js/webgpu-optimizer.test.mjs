// The optimizer's update on the GPU (js/gpu/optimizer.js, optim.wgsl) against the wasm backend's:
// after a train step on wasm, each parameter and its gradient go to GPU buffers and take the
// update with the constants the core gives for that step; the CPU optimizer then takes its own.
// Two steps, so that AdamW's moments carry over. AdamW in both modes and SGD, within 4 ulp of
// the parameter (the GPU may fuse a multiply and an add the CPU rounds apart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gpuFor } from '../../js/core.js';
import { GpuOptimizerUpdate } from '../../js/gpu/optimizer.js';
import { mlpObjects, mlpInputs, mlpLabels } from './mlp.mjs';
import { gpu } from './webgpu-env.mjs';

const EPS = 2 ** -24;
const STORAGE = 0x80 | 0x8 | 0x4; // STORAGE | COPY_DST | COPY_SRC

for (const [what, optimizer] of [['AdamW, adam_mode 1', { type: 'AdamW', adamMode: 1, weightDecay: 0.1 }], ['AdamW, adam_mode 0', { type: 'AdamW', adamMode: 0, weightDecay: 0.1 }], ['SGD', 'SGD']]) {
  test(`${what}: the GPU's update gives the CPU optimizer's parameters, two steps`, async () => {
    const dev = await gpuFor({ backend: 'webgpu', gpu }, 'test');
    const d = dev.device;
    const update = await GpuOptimizerUpdate.create(dev);
    const o = await mlpObjects({ loss: 'CrossEntropyLoss', optimizer });
    const adamw = optimizer !== 'SGD';
    o.optimizer.setLearningRate(0.05);
    const names = [...o.state.parameters.keys()].filter((n) => o.state.parameters.get(n).requiresGrad);
    const buf = (data) => {
      const b = d.createBuffer({ size: Math.max(16, data.byteLength), usage: STORAGE });
      d.queue.writeBuffer(b, 0, data);
      return b;
    };
    const read = async (b, n) => {
      const s = d.createBuffer({ size: n * 4, usage: 0x1 | 0x8 });
      const enc = d.createCommandEncoder();
      enc.copyBufferToBuffer(b, 0, s, 0, n * 4);
      d.queue.submit([enc.finish()]);
      await s.mapAsync(1);
      const out = new Float32Array(s.getMappedRange().slice(0));
      s.destroy();
      return out;
    };
    const onGpu = new Map();
    try {
      for (let step = 0; step < 2; step++) {
        o.module.run(mlpInputs(8, step), mlpLabels(8));
        const consts = GpuOptimizerUpdate.consts(o.optimizer.core, o.optimizer.h);
        assert.equal(consts[0], adamw ? optimizer.adamMode : 2);
        await dev.scoped('test update', async () => {
          const enc = d.createCommandEncoder();
          for (const n of names) {
            const p = o.state.parameters.get(n);
            let b = onGpu.get(n);
            if (!b) {
              const zeros = new Float32Array(p.data.length);
              b = { p: buf(p.data), g: buf(p.grad), m: adamw ? buf(zeros) : null, v: adamw ? buf(zeros) : null, n: p.data.length };
              onGpu.set(n, b);
            } else {
              d.queue.writeBuffer(b.g, 0, p.grad);
            }
            update.encode(enc, b, b.n, consts);
          }
          d.queue.submit([enc.finish()]);
        });
        o.optimizer.step();
        o.module.lazyResetGrad();
        for (const n of names) {
          const cpu = o.state.parameters.get(n).data;
          const got = await read(onGpu.get(n).p, cpu.length);
          got.forEach((v, i) => assert.ok(Math.abs(v - cpu[i]) <= 4 * EPS * Math.abs(cpu[i]) + 1e-12, `step ${step} ${n}[${i}]: ${v} vs ${cpu[i]}`));
        }
      }
    } finally {
      for (const b of onGpu.values()) for (const x of [b.p, b.g, b.m, b.v]) x?.destroy();
      o.release();
    }
  });
}
