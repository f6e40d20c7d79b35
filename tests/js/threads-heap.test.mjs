// No step allocates, at any thread count: on the threaded build at 2 and 4 threads,
// once a module has run its first steps, further training steps, an eval step and training
// again leave malloc's peak, its bytes in use and the wasm Memory exactly where they were: the
// pool's workers use the scratch given to them when they started, and the kernels split work
// without allocating. Also checked: what the threads themselves add to the heap (each worker's
// scratch, taken once at init) is bounded and does not grow with the model.
// Each run is a worker thread: a fresh wasm instance, whose heap holds nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { artifacts, init, runtimeInfo } from '../../js/index.js';
import { readCase, artifactOptions, setup, inputsOf } from '../golden/golden.mjs';

const cases = ['mlp_ce_adamw', 'cnn_bn_ce_sgd', 'tiny_transformer_frozen_adamw'].map((n) =>
  fileURLToPath(new URL(`../golden/cases/${n}/`, import.meta.url)));

/** In the worker: per case, warm up, then train, eval and train again; heap figures around it. */
async function measure({ threads }) {
  const core = await init({ threads });
  const info = runtimeInfo();
  const atStart = core.heapStats();
  const out = {};
  for (const dir of cases) {
    const c = await readCase(dir);
    const art = await artifacts.generateArtifacts(`${dir}/${c.model}`, artifactOptions(c));
    const { state, module, optimizer } = await setup(c, art, dir);
    const trainIn = await inputsOf(dir, c.steps[0].inputs, module.inputNames());
    const evalIn = await inputsOf(dir, c.eval.inputs, module.inputNames());
    const step = () => {
      module.train();
      const loss = module.runAll(...trainIn)[0].data[0];
      optimizer.step();
      module.lazyResetGrad();
      return loss;
    };
    for (let i = 0; i < 3; i++) step();
    module.eval();
    module.runAll(...evalIn);
    const before = core.heapStats();
    const losses = [];
    for (let i = 0; i < 10; i++) losses.push(step());
    module.eval();
    module.runAll(...evalIn);
    for (let i = 0; i < 10; i++) losses.push(step());
    const after = core.heapStats();
    out[c.name] = { before, after, losses };
    optimizer.release();
    module.release();
    state.release();
  }
  return { info, atStart, cases: out };
}

if (!isMainThread) {
  parentPort.postMessage(await measure(workerData));
} else {
  const run = (threads) =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL(import.meta.url), { workerData: { threads } });
      w.once('message', resolve);
      w.once('error', reject);
    });

  const runs = {};
  for (const threads of [2, 4]) {
    test(`at ${threads} threads, training and eval steps after the first allocate nothing`, async () => {
      const r = (runs[threads] = await run(threads));
      assert.equal(r.info.build, 'threaded');
      assert.equal(r.info.threads, threads);
      for (const [name, { before, after, losses }] of Object.entries(r.cases)) {
        assert.ok(losses.every(Number.isFinite), `${name}: losses ${losses}`);
        assert.equal(after.mallocPeak, before.mallocPeak, `${name}: malloc's peak grew by ${after.mallocPeak - before.mallocPeak} bytes over 20 steps and an eval`);
        assert.equal(after.mallocInUse, before.mallocInUse, `${name}: ${after.mallocInUse - before.mallocInUse} bytes more in use after 20 steps and an eval`);
        assert.equal(after.memory, before.memory, `${name}: the wasm Memory grew by ${after.memory - before.memory} bytes`);
      }
    });
  }

  test('what threads add to the heap: a fixed scratch per worker, taken at init', (t) => {
    assert.ok(runs[2] && runs[4], 'the runs above completed');
    // Two more workers, each with its scratch (768 KiB inner + 1280 KiB outer: pool.h) and its
    // 256 KiB stack (cmake/wasm.cmake): the difference at start is theirs, and training a model
    // adds nothing per thread.
    const perWorker = (runs[4].atStart.mallocInUse - runs[2].atStart.mallocInUse) / 2;
    t.diagnostic(`per worker thread: ${(perWorker / 1024).toFixed(0)} KiB (scratch + stack) in the heap`);
    assert.ok(perWorker >= 2048 * 1024 && perWorker <= 2560 * 1024, `per worker ${perWorker} bytes`);
    // malloc's peak over the three models' runs, above what the pool took at init
    const used = (r) => Object.values(r.cases).at(-1).after.mallocPeak - r.atStart.mallocInUse;
    t.diagnostic(`training the three models: heap peak ${(used(runs[2]) / 1024).toFixed(0)} KiB above init at 2 threads, ${(used(runs[4]) / 1024).toFixed(0)} KiB at 4`);
    assert.ok(Math.abs(used(runs[4]) - used(runs[2])) <= 64 * 1024, `training took ${used(runs[2])} bytes at 2 threads and ${used(runs[4])} at 4: more threads should not need more heap per model`);
  });
}
