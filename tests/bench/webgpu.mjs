#!/usr/bin/env node
// The webgpu backend's benchmark, not part of the test suite (node tests/bench/run.mjs --backend
// webgpu runs it):
//   node tests/bench/webgpu.mjs [--sizes 256,512,1024] [--chain 8] [--runs 10] [--json FILE]
// On whatever adapter Dawn finds (the `webgpu` package; SwiftShader where there is no GPU, which
// proves the path, not the speed: keep --sizes at 256 or below there), it prints the adapter,
// then for the backend's own GEMM program (an InferenceSession over a chain of --chain n x n
// MatMuls, so that compute outweighs the one upload and readback) GFLOP/s at each size, and for
// the golden MLP's forward pass (an InferenceSession) and its training step (Module.run, then
// Optimizer.step: AdamW) in ms next to the wasm backend's, with the dispatches, submits and
// bytes read back per step and the first step's time (with the program's build); then the same
// for a training step of golden cases of each kind (--cases: a CNN with BatchNorm, a wider
// ResNet, a LoRA decoder, a BERT-style encoder; their own small batches).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor } from '../../js/index.js';
import { gpuFor } from '../../js/core.js';
import { onnxModel } from '../js/onnx-writer.mjs';
import { gpu, countCalls } from '../js/webgpu-env.mjs';
import { readCase, artifactOptions, setup, inputsOf } from '../golden/golden.mjs';

const argv = process.argv.slice(2);
const opt = (f, d) => {
  const i = argv.indexOf(f);
  return i >= 0 ? argv[i + 1] : d;
};
const SIZES = opt('--sizes', '256,512,1024').split(',').map(Number);
const CHAIN = Number(opt('--chain', '8'));
const RUNS = Number(opt('--runs', '10'));
const CASES = opt('--cases', 'cases/cnn_bn_ce_sgd,cases-models/resnet_wide,cases/lora_tiny_llama_adamw,cases-models/bert_style_encoder').split(',').filter(Boolean);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || !(CHAIN >= 1) || !(RUNS >= 1)) throw new Error('webgpu bench: --sizes, --chain and --runs take whole numbers >= 1');

const device = (await gpuFor({ backend: 'webgpu', gpu }, 'bench')).device;
const info = (await gpuFor({ backend: 'webgpu', gpu }, 'bench')).info();
const fill = (n, s) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 0.5);

/** Counts device calls while f runs: { dispatches, submits, readBytes }. */
async function counted(f) {
  const { counts, restore } = countCalls(device);
  try {
    await f();
  } finally {
    restore();
  }
  return { dispatches: counts.dispatchWorkgroups, submits: counts.submit, readBytes: counts.readBytes };
}

/**
 * A training step of `module` on inputs (run, optimizer step, lazyResetGrad) timed into
 * row[backend]; on webgpu also its first step's time and the device calls it makes.
 */
async function timeStep(row, backend, module, optimizer, inputs) {
  const step = async () => {
    await module.run(...inputs);
    await optimizer.step();
    module.lazyResetGrad();
  };
  const u = await time(step);
  row[backend] = u.ms;
  if (backend === 'webgpu') Object.assign(row, { firstMs: u.first }, await counted(step));
}

/** A row's line of the report. */
const line = (row) =>
  `${row.model} b${row.batch}: wasm ${row.wasm.toFixed(2)} ms, webgpu ${row.webgpu.toFixed(2)} ms (${row.dispatches} dispatches, ${row.submits} submit${row.submits > 1 ? 's' : ''}, ${row.readBytes} bytes read back; the first, with the build: ${row.firstMs.toFixed(0)} ms)`;

/** ms of f (median of RUNS after a first, timed apart: the build). */
async function time(f) {
  let t = performance.now();
  await f();
  const first = performance.now() - t;
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { first, ms: ms[ms.length >> 1] };
}

const out = { adapter: info, gemm: [], models: [] };
console.log(`adapter: ${info.vendor} ${info.architecture} ${info.description} (maxStorageBufferBindingSize ${info.limits.maxStorageBufferBindingSize})`);

for (const n of SIZES) {
  const names = Array.from({ length: CHAIN + 1 }, (_, i) => `y${i}`);
  const model = onnxModel({
    nodes: names.slice(1).map((y, i) => ({ op: 'MatMul', inputs: [names[i], 'w'], outputs: [y] })),
    inputs: [{ name: 'y0', dims: [n, n] }],
    initializers: [{ name: 'w', dims: [n, n], data: fill(n * n, 2).map((v) => v / Math.sqrt(n)) }],
    outputs: [{ name: names[CHAIN] }],
  });
  const s = await InferenceSession.create(model, { backend: 'webgpu', gpu });
  const y0 = new Tensor('float32', fill(n * n, 1), [n, n]);
  const { first, ms } = await time(() => s.run({ y0 }));
  s.release();
  const gflops = (2 * n * n * n * CHAIN) / (ms * 1e6);
  out.gemm.push({ n, chain: CHAIN, ms, gflops, firstMs: first });
  console.log(`gemm n=${n} x${CHAIN}: ${ms.toFixed(2)} ms/run, ${gflops.toFixed(1)} GFLOP/s (first run, with the build: ${first.toFixed(0)} ms)`);
}

const dir = fileURLToPath(new URL('../golden/cases/mlp_ce_adamw/', import.meta.url));
const art = await artifacts.generateArtifacts(`${dir}model.onnx`, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
for (const batch of [32, 256]) {
  const x = new Tensor('float32', fill(batch * 784, 3).map(Math.abs), [batch, 784]);
  const labels = new Tensor('int32', Int32Array.from({ length: batch }, (_, i) => i % 10), [batch]);
  const forward = { model: 'mlp_784_128_10 forward', batch };
  const training = { model: 'mlp_784_128_10 training step', batch };
  for (const backend of ['wasm', 'webgpu']) {
    const s = await InferenceSession.create(`${dir}model.onnx`, { backend, gpu });
    const run = () => s.run({ input: x });
    const t = await time(run);
    forward[backend] = t.ms;
    if (backend === 'webgpu') Object.assign(forward, { firstMs: t.first }, await counted(run));
    s.release();
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    await timeStep(training, backend, module, optimizer, [x, labels]);
    optimizer.release();
    module.release();
    state.release();
  }
  for (const row of [forward, training]) {
    out.models.push(row);
    console.log(line(row));
  }
}
// a training step of each golden case (its first step's batch), on both backends
for (const name of CASES) {
  const dir = fileURLToPath(new URL(`../golden/${name}/`, import.meta.url));
  const c = await readCase(dir);
  const caseArt = await artifacts.generateArtifacts(`${dir}${c.model}`, artifactOptions(c));
  const row = { model: `${c.name ?? name} training step`, batch: null };
  for (const backend of ['wasm', 'webgpu']) {
    const { state, module, optimizer } = await setup(c, caseArt, dir, { backend, gpu });
    const inputs = await inputsOf(dir, c.steps[0].inputs, module.inputNames());
    row.batch ??= inputs[0].dims[0];
    await timeStep(row, backend, module, optimizer, inputs);
    optimizer.release();
    module.release();
    state.release();
  }
  out.models.push(row);
  console.log(line(row));
}
if (opt('--json')) writeFileSync(opt('--json'), JSON.stringify(out, null, 1));
process.exit(0); // Dawn's instance would keep the process alive
