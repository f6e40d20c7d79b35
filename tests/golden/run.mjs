#!/usr/bin/env node
// Golden runner: trains each case directory (format: tests/golden/FORMAT.md) with webtrain's
// WebAssembly build through the public JS API, and compares with the PyTorch vectors:
// loss, every gradient, parameters after every optimizer step, BatchNorm buffers, gradient
// accumulation, eval loss and inference outputs (through the exported inference model), at the
// case's tolerances (the runner itself is tests/golden/golden.mjs).
//   node tests/golden/run.mjs [--backend wasm|webgpu|auto] DIR...
// --backend webgpu trains on the GPU (in Node, the `webgpu` package's; SwiftShader where there is
// no GPU); a case whose ops the backend lacks fails naming them ('auto': runs on wasm).
// Prints one line per case (first mismatch: tensor, index, expected, actual) and
// "N passed, M failed (the build's SIMD)"; exits 1 on any failure.
import { resolve } from 'node:path';
import { runCase, Mismatch } from './golden.mjs';
import { runtimeInfo } from '../../js/index.js';

const args = process.argv.slice(2);
const at = args.indexOf('--backend');
const backendName = at >= 0 ? args[at + 1] : 'wasm';
const dirs = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
if (!dirs.length || !['wasm', 'webgpu', 'auto'].includes(backendName)) {
  console.error('usage: node tests/golden/run.mjs [--backend wasm|webgpu|auto] CASE_DIR...');
  process.exit(2);
}
const backend = backendName === 'wasm' ? {} : { backend: backendName, gpu: (await import('../js/webgpu-env.mjs')).gpu };
let passed = 0;
let failed = 0;
for (const d of dirs) {
  const label = resolve(d).split('/').pop();
  try {
    await runCase(d, backend);
    passed++;
    console.log(`ok   ${label}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${label}: ${err instanceof Mismatch ? '' : 'error: '}${err.message}`);
  }
}
console.log(`${passed} passed, ${failed} failed (${backendName === 'wasm' ? runtimeInfo()?.simd ?? 'core not loaded' : `${backendName}: ${runtimeInfo()?.adapter?.description || 'no adapter'}`})`);
process.exit(failed ? 1 : 0);
