#!/usr/bin/env node
// Golden runner: trains each case directory (format: tests/golden/FORMAT.md) with webtrain's
// WebAssembly build through the public JS API, and compares with the PyTorch vectors:
// loss, every gradient, parameters after every optimizer step, BatchNorm buffers, gradient
// accumulation, eval loss and inference outputs (through the exported inference model), at the
// case's tolerances (the runner itself is tests/golden/golden.mjs).
//   node tests/golden/run.mjs DIR...
// Prints one line per case (first mismatch: tensor, index, expected, actual) and
// "N passed, M failed (the build's SIMD)"; exits 1 on any failure.
import { resolve } from 'node:path';
import { runCase, Mismatch } from './golden.mjs';
import { runtimeInfo } from '../../js/index.js';

const dirs = process.argv.slice(2);
if (!dirs.length) {
  console.error('usage: node tests/golden/run.mjs CASE_DIR...');
  process.exit(2);
}
let passed = 0;
let failed = 0;
for (const d of dirs) {
  const label = resolve(d).split('/').pop();
  try {
    await runCase(d);
    passed++;
    console.log(`ok   ${label}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${label}: ${err instanceof Mismatch ? '' : 'error: '}${err.message}`);
  }
}
console.log(`${passed} passed, ${failed} failed (${runtimeInfo()?.simd ?? 'core not loaded'})`);
process.exit(failed ? 1 : 0);
