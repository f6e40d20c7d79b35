#!/usr/bin/env node
// The bits of a golden training run at a given thread count (they must be the same at any
// thread count):
//   node tests/golden/bits.mjs THREADS CASE_DIR...
// Loads the core with init({ threads: THREADS }) (1: the single-threaded build; more: the
// threaded one), trains each case's steps (tests/golden/FORMAT.md) and prints one JSON object:
// { runtime: runtimeInfo(), cases: { name: { steps, digest } } }, digest = SHA-256 over the
// float32 bits of every step's loss, every gradient, every parameter after every step, and
// the eval loss. tests/js/threads-golden.test.mjs compares the digests across thread counts.
import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';
import { init, runtimeInfo, artifacts } from '../../js/index.js';
import { readCase, artifactOptions, setup, inputsOf } from './golden.mjs';

const [threadsArg, ...dirs] = process.argv.slice(2);
if (!threadsArg || !dirs.length) {
  console.error('usage: node tests/golden/bits.mjs THREADS CASE_DIR...');
  process.exit(2);
}
await init({ threads: threadsArg === 'auto' ? 'auto' : Number(threadsArg) });

const bytesOf = (f) => new Uint8Array(f.buffer, f.byteOffset, f.byteLength);

async function bits(dir) {
  const c = await readCase(dir);
  const art = await artifacts.generateArtifacts(resolve(dir, c.model), artifactOptions(c));
  const { state, module, optimizer, scheduler } = await setup(c, art, dir);
  const h = createHash('sha256');
  try {
    const names = [...state.parameters.keys()].sort();
    for (const step of c.steps) {
      module.train();
      const out = module.runAll(...(await inputsOf(dir, step.inputs, module.inputNames())));
      h.update(bytesOf(out[0].data));
      for (const n of names) {
        const g = state.parameters.get(n).grad;
        if (g) h.update(bytesOf(g));
      }
      optimizer.step();
      module.lazyResetGrad();
      if (scheduler) scheduler.step();
      for (const n of names) h.update(bytesOf(state.parameters.get(n).data));
    }
    module.eval();
    h.update(bytesOf(module.runAll(...(await inputsOf(dir, c.eval.inputs, module.inputNames())))[0].data));
    return { steps: c.steps.length, digest: h.digest('hex') };
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
}

const cases = {};
for (const d of dirs) cases[basename(resolve(d))] = await bits(d);
console.log(JSON.stringify({ runtime: runtimeInfo(), cases }));
