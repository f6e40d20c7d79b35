#!/usr/bin/env node
// One model's training step on a backend (wasm at a given thread count, or webgpu), for machines
// where the full benchmark (run.mjs) is not wanted: the wasm figure a GPU backend's speed-up is
// quoted against, on all of the machine's cores, and the webgpu one beside it. Not part of the
// test suite.
//
//   node [--experimental-wasm-relaxed-simd] tests/bench/wasm-step.mjs MODEL.onnx [--threads N] [--steps K]
//                                [--optimizer SGD|AdamW] [--classes C] [--dims '[32,3,224,224]']
//                                [--backend wasm|webgpu]
//
// MODEL.onnx: an image classifier with one float input [batch, 3, H, W] (fixed dims) and logits
// [batch, C]; every float initializer is trained, cross-entropy on random labels. Prints the
// median and minimum ms per step (run, optimizer step, lazyResetGrad; the loss read back) over
// K steps after two warm-up steps, the wasm Memory's size (its peak: it only grows) and the
// module's memoryStats().
import { readFileSync } from 'node:fs';
import { artifacts, CheckpointState, init, Module, Optimizer, runtimeInfo, Tensor } from '../../js/index.js';

const argv = process.argv.slice(2);
const opt = (f, d) => {
  const i = argv.indexOf(f);
  return i >= 0 ? argv[i + 1] : d;
};
const path = argv[0];
if (!path || path.startsWith('--')) throw new Error('wasm-step: expected MODEL.onnx as the first argument');
const threads = opt('--threads', 'auto');
const steps = Number(opt('--steps', 5));
const optimizer = opt('--optimizer', 'SGD');
const classes = Number(opt('--classes', 1000));
const backend = opt('--backend', 'wasm');

const core = await init({ threads: threads === 'auto' ? 'auto' : Number(threads) });
const info = runtimeInfo();
const t0 = performance.now();
const art = await artifacts.generateArtifacts(readFileSync(path), {
  loss: artifacts.LossType.CrossEntropyLoss,
  optimizer: artifacts.OptimType[optimizer],
});
const state = await CheckpointState.loadCheckpoint(art.checkpoint);
const module = await Module.create(art.trainingModel, state, art.evalModel, { backend });
const opti = await Optimizer.create(art.optimizerModel, module);
const setupMs = performance.now() - t0;

const [name] = module.inputNames();
const dims = JSON.parse(opt('--dims', '[32,3,224,224]'));
const n = dims.reduce((a, b) => a * b, 1);
const x = new Float32Array(n).map((_, i) => Math.sin(i * 0.37));
const y = new BigInt64Array(dims[0]).map((_, i) => BigInt((i * 7919) % classes));
module.train();
const ms = [];
let loss = NaN;
for (let s = 0; s < steps + 2; s++) {
  const t = performance.now();
  const out = await module.run(new Tensor('float32', x, dims), new Tensor('int64', y, [dims[0]]));
  await opti.step();
  module.lazyResetGrad();
  loss = Number(out.data[0]);
  if (s >= 2) ms.push(performance.now() - t);
}
ms.sort((a, b) => a - b);
console.log(`RESULT ${JSON.stringify({
  model: path, input: name, dims, backend: module.backend, adapter: runtimeInfo().adapter, threads: info.threads, simd: info.simd, setupMs,
  median: ms[ms.length >> 1], min: ms[0], n: ms.length, loss, wasmMemoryMB: Math.round(core.heapStats().memory / 2 ** 20), module: module.memoryStats(),
})}`);
