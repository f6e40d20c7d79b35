#!/usr/bin/env node
// The main job. Today: load the bundled model in the WebAssembly core, run its forward pass on
// a batch, check the outputs against PyTorch's, and time it. Training (generate artifacts,
// train, evaluate, save, export) joins this script as the training core lands.
import { readFile } from 'node:fs/promises';
import { InferenceSession, Tensor, init } from '../js/index.js';
import { decodeTensorProto } from '../js/testing.js';

const step = (msg) => console.log(`[webtrain] ${msg}`);
const root = new URL('../', import.meta.url);

step('loading the WebAssembly core');
const core = await init();
step(`core ready (kernels: ${core.simdName()})`);

const modelUrl = new URL('demo/models/mnist-mlp.onnx', root);
step(`loading model ${modelUrl.pathname.replace(root.pathname, '')}`);
const session = await InferenceSession.create(modelUrl);
step(`inputs: ${session.inputNames.join(', ')}; outputs: ${session.outputNames.join(', ')}`);

const caseDir = new URL('tests/golden/cases/mlp_ce_adamw/forward/test_data_set_0/', root);
const load = async (name) => (await decodeTensorProto(new Uint8Array(await readFile(new URL(name, caseDir))))).tensor;
const x = await load('input_0.pb');
const expected = await load('output_0.pb');
step(`forward pass on a batch of ${x.dims[0]} (${x.dims.join('x')})`);
const { output } = await session.run({ input: x });
let worst = 0;
for (let i = 0; i < expected.size; i++) worst = Math.max(worst, Math.abs(output.data[i] - expected.data[i]));
step(`outputs ${output.dims.join('x')}, max |webtrain - PyTorch| = ${worst.toExponential(2)}`);

const batch = 64;
const big = new Tensor('float32', new Float32Array(batch * 784).map((_, i) => Math.sin(i)), [batch, 784]);
await session.run({ input: big });
const reps = 200;
const t0 = performance.now();
for (let i = 0; i < reps; i++) await session.run({ input: big });
const ms = (performance.now() - t0) / reps;
step(`forward at batch ${batch}: ${ms.toFixed(3)} ms per batch (${reps} runs), activations ${(session.arenaBytes / 1024).toFixed(0)} KiB`);
session.release();
const ok = worst <= 1e-4;
step(ok ? 'done: forward pass matches PyTorch. (Training arrives with the training core.)' : 'MISMATCH against PyTorch');
process.exit(ok ? 0 : 1);
