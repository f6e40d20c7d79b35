// LoRA on a base whose weights are float16 initializers read through Casts (a half-precision
// export, as the float16 rows of docs/performance.md): the adapters (float32) train exactly as on the float32 twin
// holding the same values, and the merged export (the adapters added to the float16 weights,
// rounded once) runs in onnxruntime-node close to webtrain's eval outputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

// tests/data/README.md: x[batch,8] -> MatMul(Cast(W1)) + b1 -> Relu -> Gemm(Cast(W2), transB) + b2
// (+ Gather(Cast(E), ids)); half-mlp-f32.onnx holds the same values as float32
const half = new URL('../data/half-mlp.onnx', import.meta.url);
const twin = new URL('../data/half-mlp-f32.onnx', import.meta.url);
const B = 5;
const x = new Tensor('float32', Float32Array.from({ length: B * 8 }, (_, i) => Math.cos(i * 0.7)), [B, 8]);
const ids = new Tensor('int64', BigInt64Array.from({ length: B }, (_, i) => BigInt(i % 10)), [B]);
const y = new Tensor('int64', BigInt64Array.from({ length: B }, (_, i) => BigInt((i * 3) % 4)), [B]);

async function train(model) {
  const art = await artifacts.generateArtifacts(model, {
    lora: { rank: 2, alpha: 4, targets: ['W1', 'W2'], seed: 3 }, loss: 'CrossEntropyLoss', optimizer: 'AdamW',
    additionalOutputNames: ['out'],
  });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(5e-2);
  const losses = [];
  for (let k = 0; k < 4; k++) {
    losses.push(module.train().runAll(x, ids, y)[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  optimizer.release();
  return { state, module, losses, trainable: [...state.parameters].filter(([, p]) => p.requiresGrad).map(([n]) => n).sort() };
}

test('LoRA on a float16 base trains as on its float32 twin; the merged model runs in onnxruntime-node', async () => {
  const h = await train(half);
  const f = await train(twin);
  try {
    assert.deepEqual(h.trainable, ['W1.lora_A', 'W1.lora_B', 'W2.lora_A', 'W2.lora_B']);
    assert.deepEqual(h.losses, f.losses, 'the same losses to the bit');
    assert.ok(h.losses[3] < h.losses[0], `${h.losses}`);
    const out = h.module.eval().runAll(x, ids, y)[1].data;
    const merged = await h.module.exportMergedModel(['out']);
    const s = await ort.InferenceSession.create(merged, { logSeverityLevel: 3 });
    const r = await s.run({ x: new ort.Tensor('float32', x.data, x.dims), ids: new ort.Tensor('int64', ids.data, ids.dims) });
    // the merged float16 weights are rounded once: float16 precision, not float32's
    for (let i = 0; i < out.length; i++) assert.ok(Math.abs(r.out.data[i] - out[i]) <= 5e-3 * (1 + Math.abs(out[i])), `out[${i}]: ${r.out.data[i]} vs ${out[i]}`);
  } finally {
    for (const t of [h, f]) {
      t.module.release();
      t.state.release();
    }
  }
});
